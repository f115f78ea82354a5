// Tier 3d: a few rows too long for a cluster (e.g. [1, 1048576]) over the whole GPU, one kernel.
// The grid is cooperative (every block resident at once), two blocks an SM, each owning a chunk
// of a row and caching as much of it as its half of the SM's shared memory holds:
//   pass 1: the block copies its chunk into the cache (cp.async, all of it in flight at once),
//           reads what does not fit straight from global memory, and reduces the chunk to a
//           partial -- the forward's online (max, sum of exp), the backward's sum(y * dy) or
//           sum(dy) -- left in a small workspace;
//   one grid-wide barrier;
//   pass 2: the block folds its row's partials (a few hundred, from L2) and writes its chunk,
//           from the cache, re-reading only the uncached tail from global memory (L2: it was
//           read last).
// A row that fits the GPU's shared memory thus crosses HBM once in and once out (the split-row
// tier reads it twice), and [1, 16M] 16-bit rows (32 MB: a few MB past the shared memory) re-read
// only their tails. Same partials and arithmetic as the split-row tier (split_row_tier.cuh).
#pragma once

#include <cooperative_groups.h>

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/block_tier.cuh"
#include "ops/softmax/cuda/epilogue.cuh"
#include "ops/softmax/cuda/split_row_tier.cuh"

namespace mt {

constexpr int kGridRowThreads = 512;

// One raw pack of a (and of b, the backward's dy) as A values.
template <bool Bwd, typename T, int N, typename A>
__device__ __forceinline__ void grid_row_values(const Pack<T, N>& pa, const Pack<T, N>& pb,
                                                A (&va)[N], A (&vb)[N]) {
  unpack<N>(pa, va);
  if constexpr (Bwd) unpack<N>(pb, vb);
}

// Folds one raw pack (elements [col, col + N) of the chunk, `len` long) into the partial.
// Packs read past the chunk's end hold zeros (load_raw): they add nothing to the backward's sum,
// and the forward masks them to -inf.
template <bool Log, bool Bwd, typename T, int N, typename A>
__device__ __forceinline__ void grid_row_push(MaxSum<A>& st, const Pack<T, N>& pa,
                                              const Pack<T, N>& pb, int64_t col, int64_t len) {
  A va[N], vb[N];
  grid_row_values<Bwd>(pa, pb, va, vb);
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (Bwd)
      st.s += bwd_term<Log>(va[j], vb[j]);
    else if (col + j >= len)
      va[j] = A(-INFINITY);
  }
  if constexpr (!Bwd) maxsum_push<sizeof(T) == 2>(st, va);
}

// Writes the output of one raw pack, given the row's (max, coef) or the backward's sum in st.
template <bool Log, bool Bwd, typename T, int N, typename A>
__device__ __forceinline__ void grid_row_out(T* ro, const Pack<T, N>& pa, const Pack<T, N>& pb,
                                             int64_t col, int64_t len, bool vec, MaxSum<A> st,
                                             A coef) {
  constexpr bool kFast = sizeof(T) == 2;
  A va[N], vb[N];
  grid_row_values<Bwd>(pa, pb, va, vb);
#pragma unroll
  for (int j = 0; j < N; ++j)
    va[j] = Bwd ? bwd_out<Log, kFast>(va[j], vb[j], st.s) : fwd_out<Log, kFast>(va[j], st.m, coef);
  store_pack<N>(ro, col, len, vec, va);
}

// Fwd: a = x, out = y. Bwd: a = y, b = dy, out = dx. Block b owns chunk b % chunks of row
// b / chunks; its first `cache_packs` packs of each tensor stay in shared memory.
template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kGridRowThreads, 2)
    softmax_grid_row_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                            int64_t cols, int64_t chunk, int64_t chunks, int cache_packs, bool vec,
                            MaxSum<acc_t<T>>* __restrict__ partials) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  using P = Pack<T, N>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  P* cache_a = reinterpret_cast<P*>(smem_raw);
  P* cache_b = cache_a + cache_packs;  // the backward's dy
  __shared__ MaxSum<A> scratch[64];
  int parity = 0;
  const SplitChunk ch = split_chunk(int(blockIdx.x), cols, chunk, int(chunks));
  const T* ra = a + ch.row * cols + ch.c0;
  const T* rb = Bwd ? b + ch.row * cols + ch.c0 : nullptr;
  const int npk = int((ch.len + N - 1) / N);
  const int kept = npk < cache_packs ? npk : cache_packs;
  const int tid = int(threadIdx.x);
  const P zero{};
  // Uncached packs of each tensor a thread loads before using them: the block tier's budget (at 4
  // the backward's 16-bit kernel spilled ~400 bytes under the 64-register cap).
  constexpr int U = block_tier_unroll<Bwd>();
  // U packs of the uncached tail from p0 on, kGridRowThreads apart (past the chunk: zeros, no
  // load), in flight together.
  const auto load_tail = [&](int p0, P (&pa)[U], P (&pb)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int p = p0 + u * kGridRowThreads;
      const int64_t end = p < npk ? ch.len : 0;
      pa[u] = load_raw<N>(ra, int64_t(p) * N, end, vec);
      pb[u] = Bwd ? load_raw<N>(rb, int64_t(p) * N, end, vec) : zero;
    }
  };

  // Pass 1. The cached packs: every copy issued before any is waited for, in at most 8 batches
  // (cp.async.wait_group counts to 7), each reduced as soon as it lands, so that the exps of one
  // batch overlap the copies of the next. Aligned rows hold whole packs only (vec: the chunk is
  // a multiple of N); misaligned ones go element by element.
  const int rounds = (kept + kGridRowThreads - 1) / kGridRowThreads;  // of the block's threads
  const int per_batch = (rounds + 7) / 8, batches = (rounds + per_batch - 1) / per_batch;
  for (int i = 0; i < rounds; ++i) {
    const int p = tid + i * kGridRowThreads;
    const int64_t col = int64_t(p) * N;
    if (p < kept && vec) {
      cp_async<16>(&cache_a[p], ra + col);
      if constexpr (Bwd) cp_async<16>(&cache_b[p], rb + col);
    } else if (p < kept) {
      store_whole(&cache_a[p], load_raw<N>(ra, col, ch.len, false));
      if constexpr (Bwd) store_whole(&cache_b[p], load_raw<N>(rb, col, ch.len, false));
    }
    if ((i + 1) % per_batch == 0 || i + 1 == rounds) cp_async_commit();
  }
  MaxSum<A> st = maxsum_identity<A>();
  // The uncached tail, in flight U packs a thread at a time, while the copies land.
  for (int p0 = kept + tid; p0 < npk; p0 += U * kGridRowThreads) {
    P pa[U], pb[U];
    load_tail(p0, pa, pb);
#pragma unroll
    for (int u = 0; u < U; ++u)
      grid_row_push<Log, Bwd>(st, pa[u], pb[u], int64_t(p0 + u * kGridRowThreads) * N, ch.len);
  }
  // A thread reads back only the slots it filled: no block barrier.
  for (int batch = 0; batch < batches; ++batch) {
    cp_async_wait(batches - 1 - batch);
    const int end = min(rounds, (batch + 1) * per_batch);
    for (int i = batch * per_batch; i < end; ++i) {
      const int p = tid + i * kGridRowThreads;
      if (p < kept)
        grid_row_push<Log, Bwd>(st, load_whole(&cache_a[p]), Bwd ? load_whole(&cache_b[p]) : zero,
                                int64_t(p) * N, ch.len);
    }
  }
  st = block_reduce_partial<Bwd>(st, scratch, parity);
  if (tid == 0) partials[blockIdx.x] = st;
  cooperative_groups::this_grid().sync();  // orders the partials' stores before the loads below

  const MaxSum<A> row =
      fold_row_partials<Bwd, kGridRowThreads>(partials + ch.row * chunks, chunks, scratch, parity);
  const A coef = Bwd ? A(0) : fwd_coef<Log>(row.s, row.m);
  T* ro = out + ch.row * cols + ch.c0;

  // Pass 2: the tail first, which pass 1 read last and L2 is likeliest still to hold.
  for (int p0 = kept + tid; p0 < npk; p0 += U * kGridRowThreads) {
    P pa[U], pb[U];
    load_tail(p0, pa, pb);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int p = p0 + u * kGridRowThreads;
      if (p < npk) grid_row_out<Log, Bwd>(ro, pa[u], pb[u], int64_t(p) * N, ch.len, vec, row, coef);
    }
  }
  for (int p = tid; p < kept; p += kGridRowThreads)
    grid_row_out<Log, Bwd>(ro, load_whole(&cache_a[p]), Bwd ? load_whole(&cache_b[p]) : zero,
                           int64_t(p) * N, ch.len, vec, row, coef);
}

}  // namespace mt
