// Rung 5 — block_shfl: rung 4 (block) with one change, the block reduction.
// Each warp first reduces its 32 partials in registers with __shfl_down_sync (5 steps, no shared
// memory, no barrier); only the 8 warp results go through shared memory, and each warp reduces
// those 8 with shuffles again. Per reduction: 2 barriers instead of block's 10, 8 shared-memory
// stores instead of 256 + 255 tree steps (2 loads and a store each), and no rounds where half
// the block idles. The memory traffic is
// block's (three passes over global memory), so this step only pays where the reductions'
// latency shows: short rows, where a row is a few loads per thread and the reduction dominates.
#include "ops/softmax/ladder/block_shfl.cuh"
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;


template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_block_shfl_kernel(const T* __restrict__ x,
                                                                      T* __restrict__ y, Rows rows, bool log) {
  __shared__ T warp_buf[kWarps];
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x; r < rows.count; r += gridDim.x) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) m = max_of(m, xr[a * stride]);
    m = block_max<kThreads>(m, warp_buf);

    T s = 0;
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) {
      const T e = ex(xr[a * stride] - m);
      if (!log) yr[a * stride] = e;
      s += e;
    }
    s = block_sum<kThreads>(s, warp_buf);

    if (log) {
      const Epilogue<T> out(m, s, true);
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] = out(xr[a * stride]);
    } else {
      const T inv = T(1) / s;
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] *= inv;
    }
  }
}

}  // namespace

void softmax_block_shfl_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "block_shfl", [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    softmax_block_shfl_kernel<T><<<grid_size(rows.count), kThreads, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
