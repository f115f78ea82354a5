// Tier 3c (portable long rows): a row too long for one block's, or one cluster's, shared memory
// (e.g. [1, 16777216]) or any long row on a GPU without clusters, where the one-kernel tier 3d
// (grid_row_tier.cuh) cannot run: no cooperative launch, or more rows than resident blocks. Its
// helpers (the chunk of a block, the partials' folds) serve tier 3d too. Two kernels, three passes:
//   stats: each block reduces one chunk of a row to a partial -- an online (max, sum of exp) for
//          the forward, sum(y * dy) or sum(dy) for the backward -- into a small workspace;
//   apply: each block combines its row's partials (a few KB, from L2) and writes its chunk.
// `apply` walks the chunks in reverse, so it first re-reads what `stats` read last, which is
// still in L2 when the tensor is larger than L2.
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kSplitRowThreads = 512;
constexpr int kSplitRowUnroll = 4;

// The part of a row that block `bid` owns: its row, first column and length.
struct SplitChunk {
  int64_t row, c0, len;
};
// 32-bit division: the grid has fewer than 2^31 blocks (a 64-bit one is a ~70-instruction call).
__device__ __forceinline__ SplitChunk split_chunk(int bid, int64_t cols, int64_t chunk,
                                                  int chunks) {
  const int64_t row = bid / chunks, c0 = int64_t(bid % chunks) * chunk;
  return {row, c0, cols - c0 < chunk ? cols - c0 : chunk};
}

// A thread's next kSplitRowUnroll packs of its chunk (p0, p0 + kSplitRowThreads, ...) of x or y
// into va and of dy into vb; packs past the chunk read as `fill` (va) and 0 (vb).
template <int N, bool Bwd, typename T, typename A>
__device__ __forceinline__ void load_split_batch(const T* ra, const T* rb, int p0, int npk,
                                                 int64_t len, bool vec, A (&va)[kSplitRowUnroll][N],
                                                 A (&vb)[kSplitRowUnroll][N], A fill) {
#pragma unroll
  for (int u = 0; u < kSplitRowUnroll; ++u) {
    const int p = p0 + u * kSplitRowThreads;
    const int64_t e = p < npk ? len : 0;
    load_pack<N>(ra, int64_t(p) * N, e, vec, va[u], fill);
    if constexpr (Bwd) load_pack<N>(rb, int64_t(p) * N, e, vec, vb[u], A(0));
  }
}

// The block's partial in every thread, after one barrier: the backward's sum (in .s), or the
// forward's (max, sum), each warp's pairs folded across its lanes (one exp a lane, not one a
// butterfly step). `scratch` holds 64 pairs, `parity` as in block_allreduce_one_barrier.
template <bool Bwd, typename A>
__device__ __forceinline__ MaxSum<A> block_reduce_partial(MaxSum<A> st, MaxSum<A>* scratch,
                                                          int& parity) {
  if constexpr (Bwd)
    return block_allreduce_one_barrier(st, SumOfSOp(), maxsum_identity<A>(), scratch, parity);
  else
    return block_maxsum_one_barrier(warp_maxsum(st), scratch, parity);
}

// A row's (max, sum), or the backward's sum, from its `chunks` partials, in every thread of the
// block (of kThreads); read(i) gives partial i (the grid tier's tagged slots wait in it).
template <bool Bwd, int kThreads, typename A, typename Read>
__device__ __forceinline__ MaxSum<A> fold_partials(int64_t chunks, Read read, MaxSum<A>* scratch,
                                                   int& parity) {
  MaxSum<A> st = maxsum_identity<A>();
  if constexpr (Bwd) st.m = 0;
  for (int64_t i = int(threadIdx.x); i < chunks; i += kThreads) {
    const MaxSum<A> q = read(i);
    if constexpr (Bwd)
      st.s += q.s;
    else
      st = maxsum_combine(st, q);
  }
  return block_reduce_partial<Bwd>(st, scratch, parity);
}

// fold_partials of plain slots, read through L2 (__ldcg): the partials were written by other SMs
// (during the same kernel, in the grid tier).
template <bool Bwd, int kThreads, typename A>
__device__ __forceinline__ MaxSum<A> fold_row_partials(const MaxSum<A>* partials,
                                                       int64_t chunks, MaxSum<A>* scratch,
                                                       int& parity) {
  return fold_partials<Bwd, kThreads>(
      chunks, [&](int64_t i) { return MaxSum<A>{__ldcg(&partials[i].m), __ldcg(&partials[i].s)}; },
      scratch, parity);
}

// The split row's forward exps, its stats and its output alike: 16-bit's hardware ex2, float64's
// exp_nonpositive (float64_exp.cuh); float32 keeps the accurate expf.
template <typename T>
constexpr bool split_row_fast_exp() {
  return sizeof(T) != 4;
}

template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kSplitRowThreads)
    softmax_split_stats_kernel(const T* __restrict__ a, const T* __restrict__ b, int64_t cols,
                               int64_t chunk, int64_t chunks, bool vec,
                               MaxSum<acc_t<T>>* __restrict__ partials) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  __shared__ MaxSum<A> scratch[64];
  int parity = 0;
  const SplitChunk ch = split_chunk(int(blockIdx.x), cols, chunk, int(chunks));
  const T* ra = a + ch.row * cols + ch.c0;
  const T* rb = Bwd ? b + ch.row * cols + ch.c0 : nullptr;
  MaxSum<A> st = maxsum_identity<A>();
  const int npk = int((ch.len + N - 1) / N);
  for (int p0 = threadIdx.x; p0 < npk; p0 += kSplitRowUnroll * kSplitRowThreads) {
    A va[kSplitRowUnroll][N], vb[kSplitRowUnroll][N];
    load_split_batch<N, Bwd>(ra, rb, p0, npk, ch.len, vec, va, vb, Bwd ? A(0) : A(-INFINITY));
#pragma unroll
    for (int u = 0; u < kSplitRowUnroll; ++u) {  // padding reads as -inf (fwd) or 0 (bwd)
      if constexpr (Bwd) {
#pragma unroll
        for (int j = 0; j < N; ++j) st.s += bwd_term<Log>(va[u][j], vb[u][j]);
      } else {
        maxsum_push<split_row_fast_exp<T>()>(st, va[u]);
      }
    }
  }
  st = block_reduce_partial<Bwd>(st, scratch, parity);
  if (threadIdx.x == 0) partials[blockIdx.x] = st;
}

template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kSplitRowThreads)
    softmax_split_apply_kernel(const T* __restrict__ a, const T* __restrict__ b,
                               T* __restrict__ out, int64_t cols, int64_t chunk, int64_t chunks,
                               bool vec, const MaxSum<acc_t<T>>* __restrict__ partials) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  __shared__ MaxSum<A> scratch[64];
  int parity = 0;
  // Reverse order: L2 hits first.
  const SplitChunk ch = split_chunk(int(gridDim.x - 1 - blockIdx.x), cols, chunk, int(chunks));
  const MaxSum<A> st =
      fold_row_partials<Bwd, kSplitRowThreads>(partials + ch.row * chunks, chunks, scratch, parity);
  const A coef = Bwd ? A(0) : fwd_coef<Log>(st.s, st.m);
  const T* ra = a + ch.row * cols + ch.c0;
  const T* rb = Bwd ? b + ch.row * cols + ch.c0 : nullptr;
  T* ro = out + ch.row * cols + ch.c0;
  const int64_t end = ch.len;
  const int npk = int((end + N - 1) / N);
  for (int p0 = threadIdx.x; p0 < npk; p0 += kSplitRowUnroll * kSplitRowThreads) {
    A va[kSplitRowUnroll][N], vb[kSplitRowUnroll][N];
    load_split_batch<N, Bwd>(ra, rb, p0, npk, end, vec, va, vb, A(0));
#pragma unroll
    for (int u = 0; u < kSplitRowUnroll; ++u) {
      const int p = p0 + u * kSplitRowThreads;
      if (p < npk) {
#pragma unroll
        for (int j = 0; j < N; ++j)
          va[u][j] = Bwd ? bwd_out<Log, kFast>(va[u][j], vb[u][j], st.s)
                         : fwd_out<Log, split_row_fast_exp<T>()>(va[u][j], st.m, coef);
        store_pack<N>(ro, int64_t(p) * N, end, vec, va[u]);
      }
    }
  }
}

}  // namespace mt
