// CPU loop for every elementwise functor: rows along the last merged dim, split over threads;
// within a row every operand advances by its own constant stride.
#include <cstdint>

#include "core/parallel.h"
#include "ops/elementwise/elementwise_kernels.h"

namespace mt {

namespace {

template <typename F>
void run_cpu(const F& f, const ElementwiseArgs& a) {
  if (a.numel == 0) return;
  if (a.ndim == 0) {
    const int64_t off[kMaxOperands] = {0, 0, 0, 0};
    f(a, off);
    return;
  }
  const int last = a.ndim - 1;
  const int64_t row = a.sizes[last], rows = a.numel / row;
  int64_t step[kMaxOperands];
  for (int k = 0; k < kMaxOperands; ++k) step[k] = a.strides[k][last];
  parallel_for(rows, row, [&](int64_t begin, int64_t end) {
    int64_t off[kMaxOperands];
    for (int64_t r = begin; r < end; ++r) {
      elementwise_offsets(a, last, r, off);  // offsets of the row start over the outer dims
      for (int64_t j = 0; j < row; ++j) {
        f(a, off);
        for (int k = 0; k < kMaxOperands; ++k) off[k] += step[k];
      }
    }
  });
}

}  // namespace

void binary_kernel_cpu(BinaryCode code, DType compute, const ElementwiseArgs& args) {
  MT_DISPATCH_COMPUTE_TYPES(compute, "binary op", [&] { run_cpu(BinaryFn<scalar_t>{code}, args); });
}

void unary_kernel_cpu(UnaryCode code, DType compute, const ElementwiseArgs& args) {
  MT_DISPATCH_COMPUTE_TYPES(compute, "unary op", [&] { run_cpu(UnaryFn<scalar_t>{code}, args); });
}

void select_kernel_cpu(int64_t element_size, const ElementwiseArgs& args) {
  switch (element_size) {
    case 1: return run_cpu(SelectFn<uint8_t>{}, args);
    case 2: return run_cpu(SelectFn<uint16_t>{}, args);
    case 4: return run_cpu(SelectFn<uint32_t>{}, args);
    default: return run_cpu(SelectFn<uint64_t>{}, args);
  }
}

#ifndef MINITENSOR_WITH_CUDA
void binary_kernel_cuda(BinaryCode, DType, const ElementwiseArgs&) { MT_ASSERT(false, "no CUDA"); }
void unary_kernel_cuda(UnaryCode, DType, const ElementwiseArgs&) { MT_ASSERT(false, "no CUDA"); }
void select_kernel_cuda(int64_t, const ElementwiseArgs&) { MT_ASSERT(false, "no CUDA"); }
#endif

}  // namespace mt
