// Rung 3 — warp: one warp (32 threads) per row.
// Lane l reads elements l, l + 32, l + 64, ... so every warp load touches 32 consecutive
// elements — one coalesced transaction instead of naive's 32 — and a row is reduced 32 ways in
// parallel. Each lane keeps a partial max (then a partial sum); the 32 partials are combined
// with register shuffles, no shared memory:
//   __shfl_down_sync halves the number of live partials 5 times (16, 8, 4, 2, 1 lanes apart),
//   leaving the total in lane 0, and __shfl_sync(…, 0) broadcasts it to the whole warp.
// Still three passes over the row (max, sum, write), but passes 2 and 3 re-read a row the warp
// just read, which mostly comes from L1/L2. Weak spot: very long rows — one warp streams them
// alone, so rows of 100K elements leave the SM starved for parallelism.
// inner > 1 works (lane l reads a = l, l + 32, ... at stride inner) but is not coalesced; the
// production "auto" has a dedicated tier for it.
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 8;

template <typename T>
__device__ __forceinline__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = max_of(v, __shfl_down_sync(kFullMask, v, offset));
  return __shfl_sync(kFullMask, v, 0);  // only lane 0 holds the full result: broadcast it
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return __shfl_sync(kFullMask, v, 0);
}

template <typename T>
__global__ void softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, Rows rows, bool log) {
  const int lane = threadIdx.x % 32;
  const int64_t stride = rows.inner;
  // r is the same for all 32 lanes of a warp, so the whole warp enters and leaves the loop
  // together — required by the full-mask shuffles.
  for (int64_t r = blockIdx.x * int64_t{kWarpsPerBlock} + threadIdx.x / 32; r < rows.count;
       r += int64_t{gridDim.x} * kWarpsPerBlock) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = lane; a < rows.axis; a += 32) m = max_of(m, xr[a * stride]);
    m = warp_max(m);

    T s = 0;
    for (int64_t a = lane; a < rows.axis; a += 32) s += ex(xr[a * stride] - m);
    s = warp_sum(s);

    const Epilogue<T> out(m, s, log);
    for (int64_t a = lane; a < rows.axis; a += 32) yr[a * stride] = out(xr[a * stride]);
  }
}

}  // namespace

void softmax_warp_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "warp", [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    const int64_t blocks = (rows.count + kWarpsPerBlock - 1) / kWarpsPerBlock;
    softmax_warp_kernel<T><<<grid_size(blocks), kWarpsPerBlock * 32, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
