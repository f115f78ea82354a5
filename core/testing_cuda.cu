// Kernels that fail on purpose (see testing_cuda.h). They live in a .cu file because bindings/
// holds only .cpp files compiled by the host compiler.
#include "core/testing_cuda.h"

#include "core/cuda_check.h"
#include "core/cuda_runtime.h"

namespace mt::cuda::testing {

namespace {

__global__ void NoOpKernel() {}

__global__ void StoreThroughPointerKernel(float* ptr) { *ptr = 1.0f; }

}  // namespace

void launch_invalid_configuration(int device) {
  DeviceGuard guard(device);
  constexpr unsigned kTooManyThreads = 4096;  // every GPU so far caps a block at 1024 threads
  NoOpKernel<<<1, kTooManyThreads>>>();
  MT_CUDA_CHECK_LAUNCH();
}

void launch_illegal_address(int device) {
  DeviceGuard guard(device);
  // A small non-null address: never mapped on the device, so the store faults.
  StoreThroughPointerKernel<<<1, 1>>>(reinterpret_cast<float*>(0x10));
  MT_CUDA_CHECK_LAUNCH();
  MT_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace mt::cuda::testing
