// Rung 6 — block_smem: block_shfl with the row cached in shared memory.
// The three-pass kernels read each row from global memory three times (the later reads are L2
// hits at best). Here pass 1 copies the row into shared memory while computing the max, and
// passes 2 and 3 work on that copy: global traffic drops to the floor, one read and one write
// per element instead of block's three reads and two writes, and exp is computed once, stored in
// place of x in shared memory.
// The price: a row must fit in one block's shared memory. Dynamic shared memory above 48 KB has
// to be opted into per kernel (cudaFuncSetAttribute), up to the device's opt-in maximum (227 KB
// on H100/H200: 58K floats or 29K doubles); longer rows raise ValueError. Big rows also mean
// fewer resident blocks per SM, so less memory parallelism to hide latency.
#include "core/cuda_runtime.h"
#include "ops/softmax/ladder/block_shfl.cuh"
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;


template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_block_smem_kernel(const T* __restrict__ x,
                                                                      T* __restrict__ y, Rows rows, bool log) {
  // Dynamic shared memory cannot be declared with a template type; carve it from raw bytes.
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  T* row = reinterpret_cast<T*>(smem_bytes);
  __shared__ T warp_buf[kWarps];
  const int64_t stride = rows.inner;
  // Every thread touches only the row[a] it wrote itself (same a = t, t + 256, ...), so the
  // cache needs no barrier of its own; the reductions' barriers order the rest.
  for (int64_t r = blockIdx.x; r < rows.count; r += gridDim.x) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) {
      const T v = xr[a * stride];  // the only read of x
      row[a] = v;
      m = max_of(m, v);
    }
    m = block_max<kThreads>(m, warp_buf);

    T s = 0;
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) {
      const T e = ex(row[a] - m);
      if (!log) row[a] = e;  // keep exp for pass 3 (log_softmax needs x itself)
      s += e;
    }
    s = block_sum<kThreads>(s, warp_buf);

    if (log) {
      const T log_s = ln(s);
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] = row[a] - m - log_s;
    } else {
      const T inv = T(1) / s;
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] = row[a] * inv;
    }
  }
}

}  // namespace

void softmax_block_smem_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "block_smem", [&](auto tag) {
    using T = decltype(tag);
    const auto kernel = softmax_block_smem_kernel<T>;
    const int64_t optin = cuda::current_device_info().smem_per_block_optin;
    cudaFuncAttributes attr{};
    MT_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    const int64_t max_bytes = optin - static_cast<int64_t>(attr.sharedSizeBytes);
    const int64_t bytes = shape.axis * static_cast<int64_t>(sizeof(T));
    MT_CHECK_VALUE(bytes <= max_bytes, "impl 'block_smem' caches the row in shared memory: a row of ",
                   shape.axis, " ", dtype_name(dtype), " elements needs ", bytes,
                   " bytes, but this device allows at most ", max_bytes, " bytes per block (rows up to ",
                   max_bytes / static_cast<int64_t>(sizeof(T)), " elements); use impl 'multiblock' or 'auto'");
    if (bytes > 48 * 1024)  // the default cap; above it the kernel must opt in
      MT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    const Rows rows = rows_of(shape);
    kernel<<<grid_size(rows.count), kThreads, static_cast<size_t>(bytes), nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
