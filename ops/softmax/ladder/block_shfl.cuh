// Rung 5's block reduction (block_shfl.cu explains why it beats rung 4's shared-memory tree).
// It lives here, owned by the rung that introduces it, so the rungs built on block_shfl
// (block_smem, vec4, multiblock) include it and show only what they change.
#pragma once

#include "ops/softmax/ladder/ladder_common.cuh"

namespace mt::ladder {

// Each warp reduces its 32 values with shuffles (no shared memory, no barrier); only the warps'
// results go through shared memory (`warp_buf`: one T per warp), and every warp then reduces
// those with shuffles again, so every thread of the block gets the result.
template <int Threads, typename T, typename Op>
__device__ T block_reduce_shfl(T v, T* warp_buf, Op op, T identity) {
  constexpr unsigned kFullMask = 0xffffffffu;
  constexpr int kWarps = Threads / 32;
  static_assert(Threads % 32 == 0 && kWarps <= 32, "a whole number of warps, at most 32");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(kFullMask, v, offset));
  if (lane == 0) warp_buf[warp] = v;
  __syncthreads();
  v = lane < kWarps ? warp_buf[lane] : identity;  // every warp reduces the partials: no 2nd barrier
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_down_sync(kFullMask, v, offset));
  v = __shfl_sync(kFullMask, v, 0);
  __syncthreads();  // warp_buf is free again before the next reduction writes it
  return v;
}

// The two reductions softmax makes, each with its identity.
template <int Threads, typename T>
__device__ T block_max(T v, T* warp_buf) {
  return block_reduce_shfl<Threads>(v, warp_buf, [](T p, T q) { return max_of(p, q); }, neg_inf<T>());
}
template <int Threads, typename T>
__device__ T block_sum(T v, T* warp_buf) {
  return block_reduce_shfl<Threads>(v, warp_buf, [](T p, T q) { return p + q; }, T(0));
}

}  // namespace mt::ladder
