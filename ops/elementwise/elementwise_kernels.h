// Device-level entry points behind ops/elementwise/elementwise.cpp: `args` is fully built (output
// allocated, each operand's dtype recorded for the loads and stores that convert to and from the
// compute dtype, dims merged); these only loop.
#pragma once

#include "core/dtype.h"
#include "ops/elementwise/elementwise_functors.h"

namespace mt {

// Which functor a loop runs: a binary or unary op computed in `compute` (Float32, Float64 or
// Int64), or a select (where) that moves `element_size`-byte values.
struct ElementwiseKernel {
  enum class Kind { Binary, Unary, Select } kind;
  BinaryCode binary{};
  UnaryCode unary{};
  DType compute{};
  int64_t element_size = 0;
};

void elementwise_kernel_cpu(const ElementwiseKernel& kernel, const ElementwiseArgs& args);
void elementwise_kernel_cuda(const ElementwiseKernel& kernel, const ElementwiseArgs& args);

// float32 / float64 / int64 only: the compute types of the elementwise and reduction kernels.
#define MT_DISPATCH_COMPUTE_TYPES(DTYPE, OP_NAME, ...)                  \
  MT_DISPATCH_SWITCH(DTYPE, OP_NAME,                                     \
                     MT_DISPATCH_CASE(::mt::DType::Float32, float, __VA_ARGS__) \
                     MT_DISPATCH_CASE(::mt::DType::Float64, double, __VA_ARGS__) \
                     MT_DISPATCH_CASE(::mt::DType::Int64, int64_t, __VA_ARGS__))

// Calls run(f) with the functor `kernel` names, as a concrete type: the list of instantiations
// lives here once, and the CPU and CUDA files supply only their loop as `run`.
template <typename Run>
void with_functor(const ElementwiseKernel& kernel, Run&& run) {
  switch (kernel.kind) {
    case ElementwiseKernel::Kind::Binary:
      return MT_DISPATCH_COMPUTE_TYPES(kernel.compute, "binary op", [&] { run(BinaryFn<scalar_t>{kernel.binary}); });
    case ElementwiseKernel::Kind::Unary:
      return MT_DISPATCH_COMPUTE_TYPES(kernel.compute, "unary op", [&] { run(UnaryFn<scalar_t>{kernel.unary}); });
    case ElementwiseKernel::Kind::Select:
      switch (kernel.element_size) {  // select only moves bits: one instantiation per width
        case 1: return run(SelectFn<uint8_t>{});
        case 2: return run(SelectFn<uint16_t>{});
        case 4: return run(SelectFn<uint32_t>{});
        default: return run(SelectFn<uint64_t>{});
      }
  }
}

}  // namespace mt
