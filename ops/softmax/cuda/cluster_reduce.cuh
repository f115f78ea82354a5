// Reduction across the blocks of a thread-block cluster (sm_90+) through distributed shared
// memory, one way: each block pushes its partial into every block's slots with st.async, which
// counts the bytes on the receiving block's mbarrier; a block waits on its own mbarrier until
// all `cs` partials have landed, then reduces them. No cluster-wide barrier per reduction (the
// full barrier it replaced, plus one before exit, cost each row two cluster round trips:
// [2048, 151936] float32 ran at 63% of copy).
//
// Two sets of slots (and mbarriers) alternate. A block writes set p of exchange k + 2 only after
// every block of the cluster has pushed exchange k + 1, which each does after reading exchange
// k; callers reduce within the block (a __syncthreads) between exchanges, so that all of a
// block's threads have read set p before its first warp pushes again. Every block of a cluster
// takes part in the same exchanges, so none exits while a push to it is on its way.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#endif

#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"

namespace mt {

constexpr int kMaxClusterBlocks = 16;  // Hopper's non-portable limit

template <typename A>
struct ClusterSlots {
  A slot[2][kMaxClusterBlocks];  // [set][block rank of the sender]
  uint64_t landed[2];            // mbarrier of each set: its cs partials have arrived
};

// Per thread: exchanges done so far (picks the set and the mbarrier phase).
struct ClusterRound {
  int k = 0;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
namespace cluster_detail {

// The address of the same shared-memory location in block `rank` of the cluster.
__device__ __forceinline__ unsigned peer_addr(unsigned addr, unsigned rank) {
  unsigned out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}

// Stores a 4-byte word into a peer's shared memory and credits 4 bytes to its mbarrier.
__device__ __forceinline__ void push_word(unsigned remote, uint32_t word, unsigned remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(
                   remote),
               "r"(word), "r"(remote_bar)
               : "memory");
}

// Pushes kWords 4-byte words (16 bytes at a time where they come in fours: `remote` is then
// 16-byte aligned) into a peer's shared memory, crediting their bytes to its mbarrier.
template <int kWords>
__device__ __forceinline__ void push_words(unsigned remote, const uint32_t (&words)[kWords],
                                           unsigned remote_bar) {
  if constexpr (kWords % 4 == 0) {
#pragma unroll
    for (int w = 0; w < kWords; w += 4)
      asm volatile(
          "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
          "[%5];" ::"r"(remote + 4 * w),
          "r"(words[w]), "r"(words[w + 1]), "r"(words[w + 2]), "r"(words[w + 3]), "r"(remote_bar)
          : "memory");
  } else {
#pragma unroll
    for (int w = 0; w < kWords; ++w) push_word(remote + 4 * w, words[w], remote_bar);
  }
}

__device__ __forceinline__ void cluster_wait_all_started() {
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

}  // namespace cluster_detail
#endif

// Once per kernel, by every thread, before the first exchange: readies this block's two
// mbarriers and tells the cluster so (the first exchange waits until every block has; meanwhile
// the first loads are in flight).
__device__ __forceinline__ void cluster_mbarriers_init(uint64_t (&landed)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    for (int set = 0; set < 2; ++set) mbarrier_init(shared_address(&landed[set]));
    mbarrier_init_fence();
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

template <typename A>
__device__ __forceinline__ void cluster_exchange_init(ClusterSlots<A>& cs) {
  cluster_mbarriers_init(cs.landed);
}

// `v` must already be the block's reduced value (the same in every thread); every thread of the
// cluster calls this for the same exchanges, in the same order. (max, sum) pairs (MaxSumOp) are
// folded across the lanes of each warp: blocks of whole warps only; Fast as in warp_maxsum.
template <bool Fast = false, typename A, typename Op>
__device__ __forceinline__ A cluster_allreduce(A v, Op op, A identity, ClusterSlots<A>& cs,
                                               ClusterRound& round) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(sizeof(A) % 4 == 0, "partials travel as 4-byte words");
  namespace cd = cluster_detail;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned n = cluster.num_blocks(), me = cluster.block_rank();
  if (round.k == 0) cd::cluster_wait_all_started();
  const int set = round.k & 1;
  const unsigned phase = unsigned(round.k >> 1) & 1u;
  const unsigned bar = shared_address(&cs.landed[set]);
  if (threadIdx.x == 0) mbarrier_expect_bytes(bar, n * unsigned(sizeof(A)));
  if (threadIdx.x < n) {
    const unsigned peer = threadIdx.x;
    const unsigned dst = cd::peer_addr(shared_address(&cs.slot[set][me]), peer);
    const unsigned dst_bar = cd::peer_addr(bar, peer);
    uint32_t words[sizeof(A) / 4];
    memcpy(words, &v, sizeof(A));
#pragma unroll
    for (int w = 0; w < int(sizeof(A) / 4); ++w) cd::push_word(dst + 4 * w, words[w], dst_bar);
  }
  mbarrier_wait(bar, phase);
  ++round.k;
  if constexpr (std::is_same_v<Op, MaxSumOp>) {
    return maxsum_fold_lanes<Fast>(cs.slot[set], int(n));  // whole warps: the row tiers' blocks
  } else {
    A r = identity;
    for (unsigned i = 0; i < n; ++i) r = op(r, cs.slot[set][i]);
    return r;
  }
#else
  return v;
#endif
}

// Before a block exits: a block that took part in no exchange still waits for the cluster to
// have started (its init's arrive must be matched).
__device__ __forceinline__ void cluster_exchange_finish(const ClusterRound& round) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (round.k == 0) cluster_detail::cluster_wait_all_started();
#endif
}

// A block must not exit while others may still read its shared memory (tier 4c reads its peers'
// rows). The arrive is relaxed: a peer has used the values it read from this block before it
// arrives. A release arrive (cooperative_groups' sync) compiles to a GPU-wide memory barrier that
// first waits for the block's output stores to land: ncu put 20% of [8, 4096, 4096] float16's
// stall samples on those barriers when the column tiers still exited that way (H100 kernel
// times, relaxed: that case 248 -> 232 us, float32 479 -> 421, backward 346 -> 318 and 669 ->
// 639). Arrive when done reading the peers, wait just before exiting: the work between overlaps
// the peers' arrival.
__device__ __forceinline__ void cluster_done_with_peers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait_for_peers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cluster_detail::cluster_wait_all_started();
#endif
}
// The cluster's index in a one-dimensional grid of clusters, and their number: the special
// registers, where blockIdx.x / size took an unsigned division (about 20 instructions, ahead of a
// cluster kernel's first loads). sm_90 computes %clusterid.x as blockIdx.x times a reciprocal of
// the cluster's size from the constant bank, a miss of its own at a kernel's start; held clusters,
// a row each, read blockIdx.y instead (staged_block_shape).
__device__ __forceinline__ unsigned cluster_index_and_count(unsigned& clusters) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned id;
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(id));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(clusters));
  return id;
#else
  clusters = gridDim.x;
  return blockIdx.x;
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
