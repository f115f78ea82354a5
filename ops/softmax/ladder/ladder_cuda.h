// Host launchers of the CUDA ladder variants (one .cu file each). Every launcher takes contiguous
// x and y on the current device (the caller holds a DeviceGuard), launches on the legacy default
// stream, checks every launch and never synchronizes. It throws TypeError for a dtype it does not
// handle and ValueError for a shape beyond its limit, naming itself.
//
// Plain declarations with no CUDA types, so ladder.cpp can include this in every build; the
// definitions exist only when the .cu files are compiled (MINITENSOR_WITH_CUDA).
#pragma once

#include "core/dtype.h"
#include "ops/softmax/softmax_shape.h"

namespace mt::ladder {

using CudaLauncher = void (*)(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);

void softmax_naive_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_online_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_warp_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_block_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_block_shfl_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_block_smem_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_vec4_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);
void softmax_multiblock_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log);

}  // namespace mt::ladder
