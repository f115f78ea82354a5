// Tiers 2b and 3b: a row (inner == 1) cached in shared memory, in its storage type, between
// the reduction and the write: one read and one write of global memory. Without clusters a
// block owns a whole row (tier 2b: GPUs before sm_90). With kCluster (sm_90) the row is split
// over the `cs` blocks of a thread-block cluster, each caching its chunk, and the block
// partials are combined through distributed shared memory (tier 3b: rows too long for the
// staged tiers' 16 blocks, which float64 reaches first: a vocabulary row of 151936 doubles).
// Every thread touches the same shared-memory packs in every phase, so the cached row needs no
// barrier of its own; only the reductions synchronize. The backward caches dy beside y unless
// kRereadB: then its output pass reads dy again, from L2 (see launch_cluster_tier).
#pragma once

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kBlockTierMaxThreads = 1024;
// Packs loaded before any is stored (loads in flight); the backward loads two tensors, and 1024
// threads leave 64 registers a thread.
template <bool Bwd>
constexpr int block_tier_unroll() {
  return Bwd ? 2 : 4;
}

// Dynamic shared memory: ceil(chunk / N) packs (x, or y), then as many again for dy (Bwd, unless
// read again: reread_b).
template <typename T, bool Bwd>
inline int64_t block_tier_smem(int64_t chunk, bool reread_b = false) {
  constexpr int N = pack_size<T>();
  return (chunk + N - 1) / N * 16 * (Bwd && !reread_b ? 2 : 1);
}

// Fwd: a = x, out = y. Bwd: a = y, b = dy, out = dx. `chunk` (a multiple of N) is the part of a
// row each block of a cluster owns; without clusters chunk >= cols.
template <typename T, bool Log, bool Bwd, bool kCluster, bool kRereadB = false>
__global__ void __launch_bounds__(kBlockTierMaxThreads)
    softmax_block_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                         int64_t rows, int cols, int chunk, bool vec) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  using P = Pack<T, N>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  P* buf_a = reinterpret_cast<P*>(smem_raw);
  P* buf_b = buf_a + (chunk + N - 1) / N;
  __shared__ A scratch[33];
  __shared__ ClusterSlots<A> slots;
  ClusterRound round;

  unsigned cs = 1, rank = 0;
  if constexpr (kCluster) {
    rank = cluster_rank_and_size(cs);
    cluster_exchange_init(slots);
  }
  const int c0 = int(rank) * chunk;
  const int c1 = min(cols, c0 + chunk);
  const int npk = c1 > c0 ? (c1 - c0 + N - 1) / N : 0;
  const int bd = blockDim.x;
  constexpr int U = block_tier_unroll<Bwd>();
  // kRereadB: y, read once into shared memory, leaves L2 first, so that the dy lines the output
  // pass reads again stay there (H200 kernel times, float64, two rounds: [2048, 151936] 2,522 ->
  // 2,467 us, [64, 152064] 85.2 -> 84.7, [300, 131080] 325 -> 327. A probe also storing dx
  // evict-first, or keeping dy's lines evict-last, measured no better than y alone). dy's two
  // reads take the hinted load too, under the normal policy: the same cache behaviour asked
  // for, yet faster than the plain load (H200, two rounds each: [2048, 151936] 2,462 -> 2,426 us,
  // [64, 152064] 84.9 -> 83.0; [300, 131080] and [16, 262144] alike; why is not known).
  const uint64_t y_policy = kRereadB ? l2_policy(L2Evict::kFirst) : 0;
  const uint64_t dy_policy = kRereadB ? l2_policy(L2Evict::kNormal) : 0;

  for (int64_t row = blockIdx.x / cs; row < rows; row += gridDim.x / cs) {
    const T* ra = a + row * cols + c0;
    const T* rb = Bwd ? b + row * cols + c0 : nullptr;
    const int end = c1 - c0;
    A acc = Bwd ? A(0) : A(-INFINITY);
    const int whole = vec ? end / N : 0;  // packs [0, whole) are whole and aligned
    for (int p0 = threadIdx.x; p0 < npk; p0 += U * bd) {
      P pa[U], pb[U];
      if (kRereadB && p0 + (U - 1) * bd < whole) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          pa[u] = load_whole_hinted(reinterpret_cast<const P*>(ra) + p0 + u * bd, y_policy);
          pb[u] = load_whole_hinted(reinterpret_cast<const P*>(rb) + p0 + u * bd, dy_policy);
        }
      } else {
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int p = p0 + u * bd;
          if (p < npk) {
            pa[u] = load_raw<N>(ra, p * N, end, vec);
            if constexpr (Bwd) pb[u] = load_raw<N>(rb, p * N, end, vec);
          }
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int p = p0 + u * bd;
        if (p < npk) {
          store_whole(&buf_a[p], pa[u]);
          if constexpr (Bwd && !kRereadB) store_whole(&buf_b[p], pb[u]);
#pragma unroll
          for (int j = 0; j < N; ++j) {
            if (p * N + j < end) {
              if constexpr (Bwd)
                acc += bwd_term<Log>(A(pa[u].v[j]), A(pb[u].v[j]));
              else
                acc = nan_max(acc, A(pa[u].v[j]));
            }
          }
        }
      }
    }
    T* ro = out + row * cols + c0;
    if constexpr (!Bwd) {
      A m = block_allreduce(acc, MaxOp(), A(-INFINITY), scratch);
      if constexpr (kCluster) m = cluster_allreduce(m, MaxOp(), A(-INFINITY), slots, round);
      A s = 0;
      for (int p = threadIdx.x; p < npk; p += bd) {
        const P v = load_whole(&buf_a[p]);
#pragma unroll
        for (int j = 0; j < N; ++j)
          if (p * N + j < end) s += elem_exp<kFast>(A(v.v[j]) - m);
      }
      s = block_allreduce(s, SumOp(), A(0), scratch);
      if constexpr (kCluster) s = cluster_allreduce(s, SumOp(), A(0), slots, round);
      const FwdOut<Log, kFast, A> out(m, fwd_coef<Log>(s, m));
      for (int p = threadIdx.x; p < npk; p += bd) {
        const P v = load_whole(&buf_a[p]);
        A o[N];
#pragma unroll
        for (int j = 0; j < N; ++j) o[j] = out(A(v.v[j]));
        store_pack<N>(ro, p * N, end, vec, o);
      }
    } else {
      A s = block_allreduce(acc, SumOp(), A(0), scratch);
      if constexpr (kCluster) s = cluster_allreduce(s, SumOp(), A(0), slots, round);
      const auto emit = [&](int p, const P& y, const P& dy) {
        A o[N];
#pragma unroll
        for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, kFast>(A(y.v[j]), A(dy.v[j]), s);
        store_pack<N>(ro, p * N, end, vec, o);
      };
      if constexpr (!kRereadB) {
        for (int p = threadIdx.x; p < npk; p += bd)
          emit(p, load_whole(&buf_a[p]), load_whole(&buf_b[p]));
      } else {
        // dy read again from L2: kReread packs' loads ahead of their use, not one at a time.
        // Whole aligned packs take a branch of their own: merged with the element-wise path
        // pack by pack, each load's registers were moved before the next load issued.
        constexpr int kReread = sizeof(T) == 2 ? 2 : 4;  // 16-bit: 4 spilled 40 bytes a thread
        for (int p0 = threadIdx.x; p0 < npk; p0 += kReread * bd) {
          P dy[kReread];
          if (p0 + (kReread - 1) * bd < whole) {
#pragma unroll
            for (int u = 0; u < kReread; ++u)
              dy[u] = load_whole_hinted(reinterpret_cast<const P*>(rb) + p0 + u * bd, dy_policy);
          } else {
#pragma unroll
            for (int u = 0; u < kReread; ++u)
              if (p0 + u * bd < npk) dy[u] = load_raw<N>(rb, (p0 + u * bd) * N, end, vec);
          }
#pragma unroll
          for (int u = 0; u < kReread; ++u)
            if (p0 + u * bd < npk) emit(p0 + u * bd, load_whole(&buf_a[p0 + u * bd]), dy[u]);
        }
      }
    }
  }
  if constexpr (kCluster) cluster_exchange_finish(round);
}

}  // namespace mt
