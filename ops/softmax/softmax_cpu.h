// CPU softmax kernels over a contiguous (outer, axis, inner) buffer. Instantiated for float,
// double, Half and BFloat16 (16-bit types accumulate in float).
#pragma once

#include "ops/softmax/softmax_shape.h"

namespace mt {

// Which forward algorithm to run; Auto picks the faster one for the shape.
//   Safe:   three passes (max; sum of exp; normalize). One exp per element, but three sweeps of
//           the group, so it wins while the group stays in cache.
//   Online: two passes (running max with a rescaled sum; normalize). One sweep less of memory,
//           at the price of computing exp twice per element for softmax (once for log_softmax).
enum class SoftmaxCpuAlgo { Auto, Safe, Online };

// y = softmax(x) (or log_softmax when `log`) along the axis. x and y may alias.
template <typename T>
void softmax_forward_cpu(const T* x, T* y, SoftmaxShape shape, bool log);

// Same, with the algorithm chosen by the caller (tests and benchmarks compare the two).
template <typename T>
void softmax_forward_cpu(const T* x, T* y, SoftmaxShape shape, bool log, SoftmaxCpuAlgo algo);

// Given y = forward output and dy = dL/dy, writes dx = dL/dx:
//   softmax:     dx = y * (dy - sum_axis(y * dy))
//   log_softmax: dx = dy - exp(y) * sum_axis(dy)
template <typename T>
void softmax_backward_cpu(const T* y, const T* dy, T* dx, SoftmaxShape shape, bool log);

}  // namespace mt
