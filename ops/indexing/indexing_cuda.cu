// CUDA gather / scatter along one dim: one thread per element of the selected block, grid-stride.
// Raw element copies (one instantiation per element size) for select and plain puts (repeated
// indices: one of the writes wins, as in torch); atomicAdd for accumulating puts.
#include "core/cuda_check.h"
#include "ops/common/launch.cuh"
#include "ops/elementwise/elementwise_kernels.h"  // MT_DISPATCH_COMPUTE_TYPES
#include "ops/indexing/indexing.h"

namespace mt {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

// Element t of the selected block (outer, count, inner) and its place in the full (outer, size, inner).
__device__ __forceinline__ int64_t full_offset(const IndexArgs& a, int64_t t) {
  const int64_t i = t % a.inner, rest = t / a.inner;
  const int64_t k = rest % a.count, outer = rest / a.count;
  return (outer * a.size + a.index[k]) * a.inner + i;
}

template <typename U>
__global__ void select_kernel(IndexArgs a, const U* x, U* out, int64_t n) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[t] = x[full_offset(a, t)];
}

template <typename U>
__global__ void put_kernel(IndexArgs a, U* self, const U* src, int64_t n) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x)
    self[full_offset(a, t)] = src[t];
}

__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int64_t* p, int64_t v) {  // two's complement: same bits
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <typename T>
__global__ void add_kernel(IndexArgs a, T* self, const T* src, int64_t n) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x)
    atomic_add(self + full_offset(a, t), src[t]);
}

template <typename U>
void launch_select(const IndexArgs& a, const void* x, void* out) {
  const int64_t n = a.outer * a.count * a.inner;
  select_kernel<U><<<blocks_for(n), kThreads>>>(a, static_cast<const U*>(x), static_cast<U*>(out), n);
  MT_CUDA_CHECK_LAUNCH();
}

template <typename U>
void launch_put(const IndexArgs& a, void* self, const void* src) {
  const int64_t n = a.outer * a.count * a.inner;
  put_kernel<U><<<blocks_for(n), kThreads>>>(a, static_cast<U*>(self), static_cast<const U*>(src), n);
  MT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void index_select_cuda(int64_t element_size, const IndexArgs& a, const void* x, void* out) {
  switch (element_size) {
    case 1: return launch_select<uint8_t>(a, x, out);
    case 2: return launch_select<uint16_t>(a, x, out);
    case 4: return launch_select<uint32_t>(a, x, out);
    default: return launch_select<uint64_t>(a, x, out);
  }
}

void index_put_cuda(int64_t element_size, DType compute, bool accumulate, const IndexArgs& a, void* self,
                    const void* src) {
  if (accumulate) {
    const int64_t n = a.outer * a.count * a.inner;
    MT_DISPATCH_COMPUTE_TYPES(compute, "index_put_", [&] {
      add_kernel<scalar_t><<<blocks_for(n), kThreads>>>(a, static_cast<scalar_t*>(self),
                                                        static_cast<const scalar_t*>(src), n);
      MT_CUDA_CHECK_LAUNCH();
    });
    return;
  }
  switch (element_size) {
    case 1: return launch_put<uint8_t>(a, self, src);
    case 2: return launch_put<uint16_t>(a, self, src);
    case 4: return launch_put<uint32_t>(a, self, src);
    default: return launch_put<uint64_t>(a, self, src);
  }
}

}  // namespace mt
