// Reduction across the blocks of a thread-block cluster (sm_90+) through distributed shared
// memory: each block publishes its partial in its own shared memory, and after a cluster barrier
// every block reads all of them. Two slots alternate so that one reduction's reads never race the
// next one's writes without a second barrier.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

#include "ops/common/reduce.cuh"

namespace mt {

template <typename A>
struct ClusterSlots {
  A slot[2];
  A result;
};

// `v` must already be the block's reduced value (the same in every thread); `parity` is a
// per-thread counter that every thread of the cluster advances in step.
template <typename A, typename Op>
__device__ __forceinline__ A cluster_allreduce(A v, Op op, A identity, ClusterSlots<A>& cs,
                                               int& parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) cs.slot[parity] = v;
  cluster.sync();
  if (threadIdx.x < 32) {
    A w = identity;
    for (unsigned r = threadIdx.x; r < cluster.num_blocks(); r += 32)
      w = op(w, *cluster.map_shared_rank(&cs.slot[parity], r));
    w = warp_allreduce(w, op);
    if (threadIdx.x == 0) cs.result = w;
  }
  __syncthreads();
  v = cs.result;
  parity ^= 1;
#endif
  return v;
}

// A block must not exit while others may still read its slots.
__device__ __forceinline__ void cluster_exit_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#endif
}

__device__ __forceinline__ unsigned cluster_rank_and_size(unsigned& size) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  size = cluster.num_blocks();
  return cluster.block_rank();
#else
  size = 1;
  return 0;
#endif
}

}  // namespace mt
