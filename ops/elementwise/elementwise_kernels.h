// Device-level entry points behind ops/elementwise/elementwise.cpp: `args` is fully built (output
// allocated, each operand's dtype recorded for the loads and stores that convert to and from the
// compute dtype, dims merged); these only loop.
#pragma once

#include "core/dtype.h"
#include "ops/elementwise/elementwise_functors.h"

namespace mt {

// compute: Float32, Float64 or Int64.
void binary_kernel_cpu(BinaryCode code, DType compute, const ElementwiseArgs& args);
void unary_kernel_cpu(UnaryCode code, DType compute, const ElementwiseArgs& args);
void select_kernel_cpu(int64_t element_size, const ElementwiseArgs& args);

void binary_kernel_cuda(BinaryCode code, DType compute, const ElementwiseArgs& args);
void unary_kernel_cuda(UnaryCode code, DType compute, const ElementwiseArgs& args);
void select_kernel_cuda(int64_t element_size, const ElementwiseArgs& args);

// float32 / float64 / int64 only: the compute types of the elementwise and reduction kernels.
#define MT_DISPATCH_COMPUTE_TYPES(DTYPE, OP_NAME, ...)                                          \
  [&] {                                                                                         \
    switch (DTYPE) {                                                                            \
      MT_DISPATCH_CASE(::mt::DType::Float32, float, __VA_ARGS__)                                \
      MT_DISPATCH_CASE(::mt::DType::Float64, double, __VA_ARGS__)                               \
      MT_DISPATCH_CASE(::mt::DType::Int64, int64_t, __VA_ARGS__)                                \
      default:                                                                                  \
        MT_THROW_TYPE("\"", OP_NAME, "\" not implemented for '", ::mt::dtype_name(DTYPE), "'"); \
    }                                                                                           \
  }()

}  // namespace mt
