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

void elementwise_kernel_cpu(const ElementwiseKernel& kernel, const ElementwiseArgs& args) {
  with_functor(kernel, [&](const auto& f) { run_cpu(f, args); });
}

#ifndef MINITENSOR_WITH_CUDA
void elementwise_kernel_cuda(const ElementwiseKernel&, const ElementwiseArgs&) { MT_ASSERT(false, "no CUDA"); }
#endif

}  // namespace mt
