// torch.matmul semantics on CPU and CUDA, float32 and float64 (float16/bfloat16 compute in float32):
// 1-D . 1-D -> 0-d, 2-D @ 2-D, 1-D/2-D with batched operands, and batch dims broadcast
// ([B, M, K] @ [K, N], [1, M, K] @ [B, K, N], ...). Inputs may be transposed or otherwise
// strided views: the kernels read through strides, so no copy is made for them.
#pragma once

#include "core/tensor.h"

namespace mt {

Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace mt
