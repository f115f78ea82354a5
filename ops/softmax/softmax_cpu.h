// CPU softmax kernels over a contiguous (outer, axis, inner) buffer. Instantiated for float,
// double, Half and BFloat16 (16-bit types accumulate in float).
#pragma once

#include "ops/softmax/softmax_shape.h"

namespace mt {

// y = softmax(x) (or log_softmax when `log`) along the axis. x and y may alias.
template <typename T>
void softmax_forward_cpu(const T* x, T* y, SoftmaxShape shape, bool log);

// Given y = forward output and dy = dL/dy, writes dx = dL/dx:
//   softmax:     dx = y * (dy - sum_axis(y * dy))
//   log_softmax: dx = dy - exp(y) * sum_axis(dy)
template <typename T>
void softmax_backward_cpu(const T* y, const T* dy, T* dx, SoftmaxShape shape, bool log);

}  // namespace mt
