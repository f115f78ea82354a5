// The one copy primitive: read any strided `src`, convert to dst's dtype, write contiguous `dst`.
// contiguous(), to(dtype) and to(device) are all built on it.
#pragma once

#include "core/tensor.h"

namespace mt {

// dst: contiguous, same shape as src, any dtype, any device.
void copy_to_contiguous(const Tensor& src, const Tensor& dst);

// Same-device kernels behind it.
void copy_cast_cpu(const Tensor& src, const Tensor& dst);
void copy_cast_cuda(const Tensor& src, const Tensor& dst);

}  // namespace mt
