// One grid-stride CUDA kernel for every elementwise functor (8 instantiations in all).
#include "core/cuda_check.h"
#include "ops/common/launch.cuh"
#include "ops/elementwise/elementwise_kernels.h"

namespace mt {

namespace {

template <typename F>
__global__ void elementwise_kernel(F f, ElementwiseArgs a) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t off[kMaxOperands];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.numel; i += stride) {
    elementwise_offsets(a, a.ndim, i, off);
    f(a, off);
  }
}

template <typename F>
void launch(const F& f, const ElementwiseArgs& a) {
  if (a.numel == 0) return;
  constexpr int kThreads = 256;
  elementwise_kernel<<<grid_stride_blocks(a.numel, kThreads), kThreads>>>(f, a);
  MT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void elementwise_kernel_cuda(const ElementwiseKernel& kernel, const ElementwiseArgs& args) {
  with_functor(kernel, [&](const auto& f) { launch(f, args); });
}

}  // namespace mt
