// Softmax and LogSoftmax over any dim of a tensor of any rank, on CPU or CUDA.
//
//   Tensor y;                                  // undefined: Forward allocates it
//   mt::Softmax<float>::Forward(x, y, /*dim=*/1);
//
// Negative dims count from the end; a 0-d tensor is treated as one element (softmax gives 1).
// Non-contiguous inputs are gathered once; the kernels then see (outer, axis, inner).
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/softmax/softmax_shape.h"

namespace mt {

// (outer, axis, inner) of `shape` around the already-wrapped `dim`.
SoftmaxShape softmax_shape(const Shape& shape, int64_t dim);

// Untyped entry points (the Python bindings use these). `log` selects LogSoftmax.
Tensor softmax_forward(const Tensor& input, int64_t dim, bool log);
Tensor softmax_backward(const Tensor& output, const Tensor& grad_output, int64_t dim, bool log);

inline Tensor softmax(const Tensor& input, int64_t dim) { return softmax_forward(input, dim, false); }
inline Tensor log_softmax(const Tensor& input, int64_t dim) { return softmax_forward(input, dim, true); }

// Typed front doors in the style of an operator module: T must match the input's dtype.
// `output` is allocated when undefined; otherwise it must be a contiguous tensor of the input's
// shape, dtype and device, and is overwritten.
template <typename T, bool kLog>
struct SoftmaxOp {
  static void Forward(const Tensor& input, Tensor& output, int64_t dim);
  static void Backward(const Tensor& output, const Tensor& grad_output, Tensor& grad_input, int64_t dim);
};

template <typename T>
using Softmax = SoftmaxOp<T, false>;
template <typename T>
using LogSoftmax = SoftmaxOp<T, true>;

}  // namespace mt
