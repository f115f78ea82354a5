// CUDA softmax entry points over a contiguous (outer, axis, inner) buffer on the current device.
// They pick a kernel tier from the shape and dtype (see softmax_cuda.cu), launch on the default
// stream (the one the tensors' memory pool orders its frees on), check every launch, and never
// synchronize.
#pragma once

#include "core/dtype.h"
#include "ops/softmax/softmax_shape.h"

namespace mt {

void softmax_forward_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);

void softmax_backward_cuda(const void* y, const void* dy, void* dx, DType dtype,
                           SoftmaxShape shape, bool log);

}  // namespace mt
