// Tier 3d: a few rows too long for a cluster (e.g. [1, 1048576]) over the whole GPU, one kernel.
// The grid is cooperative (every block resident at once), two blocks an SM, each owning a chunk
// of a row and caching as much of it as its half of the SM's shared memory holds:
//   pass 1: the block copies its chunk into the cache (cp.async, all of it in flight at once),
//           reads what does not fit straight from global memory (the 16- and 32-bit forward
//           keeps a tail of up to two packs a thread in registers), and reduces the chunk to a
//           partial -- the forward's (max, sum of exp), the backward's sum(y * dy) or sum(dy) --
//           left in a small workspace;
//   the row's blocks meet: float partials in tagged slots that each block reads until they are
//           all this launch's (TaggedPartial), float64's at one grid-wide barrier;
//   pass 2: the block folds its row's partials (a few hundred, from L2) and writes its chunk,
//           from the cache and the registers, re-reading only a longer tail from global memory
//           (L2: it was read last, and is read back from its end; the cached copies' lines and
//           the output's go first).
// A row that fits the GPU's shared memory thus crosses HBM once in and once out (the split-row
// tier reads it twice), and so do [1, 16M] 16-bit rows (32 MB: a few MB past the shared memory,
// the rest in registers). Same partials and arithmetic as the split-row tier
// (split_row_tier.cuh).
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
// Tail packs a thread may hold in registers (the forward of 16- and 32-bit types: float64's
// kernel has no registers to spare under its 64-register cap).
constexpr int kHeldTail = 2;
template <typename T, bool Bwd>
constexpr bool kHoldsTail = !Bwd && sizeof(T) <= 4;
// Whose partials fit a tagged slot (TaggedPartial): float ones.
template <typename T>
constexpr bool kTaggable = sizeof(acc_t<T>) == 4;

// Adds the backward's terms y * dy (log_softmax: dy) of one raw pack of y and dy to `sum`.
template <bool Log, typename T, int N, typename A>
__device__ __forceinline__ void backward_pack_sum(A& sum, const Pack<T, N>& py,
                                                  const Pack<T, N>& pdy) {
  A y[N], dy[N];
  unpack<N>(py, y);
  unpack<N>(pdy, dy);
#pragma unroll
  for (int j = 0; j < N; ++j) sum += bwd_term<Log>(y[j], dy[j]);
}

// Adds K raw packs of the uncached tail to the thread's part: the backward's sum of terms, or
// the forward's online (max, sum of exp), one rescale for the K packs.
template <bool Log, bool Bwd, typename T, int N, int K, typename A>
__device__ __forceinline__ void tail_pack_sums(MaxSum<A>& st, const Pack<T, N> (&pa)[K],
                                               const Pack<T, N> (&pb)[K]) {
  if constexpr (Bwd) {
#pragma unroll
    for (int u = 0; u < K; ++u) backward_pack_sum<Log>(st.s, pa[u], pb[u]);
  } else {
    A x[K * N];
#pragma unroll
    for (int u = 0; u < K; ++u) {
      A v[N];
      unpack<N>(pa[u], v);
#pragma unroll
      for (int j = 0; j < N; ++j) x[u * N + j] = v[j];
    }
    maxsum_push<split_row_fast_exp<T>()>(st, x);
  }
}

// The output values of one raw pack, given the row's max and coef (forward) or sum (backward).
template <bool Log, bool Bwd, typename T, int N, typename A>
__device__ __forceinline__ void grid_row_out(const Pack<T, N>& pa, const Pack<T, N>& pb,
                                             MaxSum<A> row, A coef, A (&o)[N]) {
  constexpr bool kFast = sizeof(T) == 2;
  A vb[N];
  unpack<N>(pa, o);
  if constexpr (Bwd) unpack<N>(pb, vb);
#pragma unroll
  for (int j = 0; j < N; ++j)
    o[j] = Bwd ? bwd_out<Log, kFast>(o[j], vb[j], row.s) : fwd_out<Log, kFast>(o[j], row.m, coef);
}

// Float partials need no grid barrier: a slot holds the (max, sum) as two 64-bit words, each a
// value's bits beside the launch's tag (next_partials_tag: a new number each launch, never 0), so
// a word read is either this launch's or not, whole. A block publishes its partial, then its
// threads read their row's slots until both words carry the tag: the row's blocks meet in the
// fold, with no grid-wide counter and no fence between (nothing else a block writes in pass 1 is
// read by another). Scratch memory left by an earlier launch holds other tags (one would recur
// only after 2^32 launches; a CUDA graph replaying one launch would replay its tag too, and
// minitensor records none). float64's pairs leave no room for a tag. H200 kernel times, the grid
// barrier -> tagged slots: [1, 1048576] float16 7.71 -> 6.75-6.88 us, float32 9.05 -> 8.15; [4,
// 1048576] float16 11.7 -> 9.9, float32 16.7 -> 14.7; backward float16 11.2 -> 10.4.
struct TaggedPartial {
  unsigned long long m, s;
};
__device__ __forceinline__ void publish_partial(TaggedPartial* slot, MaxSum<float> p,
                                                unsigned tag) {
  const unsigned long long hi = static_cast<unsigned long long>(tag) << 32;
  asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(slot),
               "l"(hi | __float_as_uint(p.m)), "l"(hi | __float_as_uint(p.s))
               : "memory");
}
__device__ __forceinline__ MaxSum<float> await_partial(const TaggedPartial* slot, unsigned tag) {
  unsigned long long m, s;
  do {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(m), "=l"(s)
                 : "l"(slot)
                 : "memory");
  } while (unsigned(m >> 32) != tag || unsigned(s >> 32) != tag);
  return {__uint_as_float(unsigned(m)), __uint_as_float(unsigned(s))};
}
// fold_partials over tagged slots: each read is repeated until it carries `tag`.
template <bool Bwd, int kThreads>
__device__ __forceinline__ MaxSum<float> fold_tagged_partials(const TaggedPartial* slots,
                                                              int64_t chunks, unsigned tag,
                                                              MaxSum<float>* scratch,
                                                              int& parity) {
  return fold_partials<Bwd, kThreads>(
      chunks, [&](int64_t i) { return await_partial(&slots[i], tag); }, scratch, parity);
}

// Fwd: a = x, out = y. Bwd: a = y, b = dy, out = dx. Block b owns chunk b % chunks of row
// b / chunks; its first `cache_packs` packs of each tensor stay in shared memory.
template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kGridRowThreads, 2)
    softmax_grid_row_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                            int64_t cols, int64_t chunk, int64_t chunks, int cache_packs, bool vec,
                            bool evict_cached, bool hold_tail, int out_evict,
                            bool online_requested, unsigned tag,
                            MaxSum<acc_t<T>>* __restrict__ partials) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  // float32 and float64 softmax write exp(x - m) over their cached x, so that pass 2 does not
  // take the accurate exp again (as the staged row tier does); 16-bit types cannot hold it
  // without a second rounding, and their exp is two instructions.
  constexpr bool kKeepExp = !Bwd && !Log && sizeof(T) >= 4;
  using P = Pack<T, N>;
  extern __shared__ __align__(kCopyLineBytes) unsigned char smem_raw[];
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
  const bool held =
      kHoldsTail<T, Bwd> && hold_tail && npk > kept && npk - kept <= kHeldTail * kGridRowThreads;
  const P zero{};
  // What the elements past the chunk's end read as: -inf for the forward's (max, sum), 0 for the
  // backward's sum, so that no pack needs a test of its own.
  const T fill(Bwd ? 0.0f : -INFINITY);
  // Uncached packs of each tensor a thread loads before using them: the block tier's budget (at 4
  // the backward's 16-bit kernel spilled ~400 bytes under the 64-register cap), but two in the
  // 16-bit forward: at 4 it spilled 20 bytes, at 2 none (H200 kernel times, two rounds, float16 /
  // bfloat16: [1, 16777216] 25.3 -> 24.5-24.7 us, [2, 8388608] 24.8 -> 24.1, [4, 16777216] 117.5
  // / 119.0 -> 115.3 / 116.3; [1, 1048576] and [4, 1048576] within 1%). float64's forward at 2
  // spilled 36 bytes (16 at 4).
  constexpr int U = !Bwd && sizeof(T) == 2 ? 2 : block_tier_unroll<Bwd>();
  // U packs of the uncached tail from p0 on, kGridRowThreads apart (past the chunk: fill, no
  // load), in flight together.
  const auto load_tail = [&](int p0, P (&pa)[U], P (&pb)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int p = p0 + u * kGridRowThreads;
      const int64_t end = p < npk ? ch.len : 0;
      pa[u] = load_raw<N>(ra, int64_t(p) * N, end, vec, fill);
      pb[u] = Bwd ? load_raw<N>(rb, int64_t(p) * N, end, vec, fill) : zero;
    }
  };

  // Pass 1. The cached packs: every copy issued before any is waited for, in at most 8 batches
  // (cp.async.wait_group counts to 7), each reduced as soon as it lands, so that the work on one
  // batch overlaps the copies of the next. Aligned rows hold whole packs only (vec: the chunk is
  // a multiple of N); misaligned ones go element by element.
  const int rounds = (kept + kGridRowThreads - 1) / kGridRowThreads;  // of the block's threads
  const int per_batch = (rounds + 7) / 8, batches = (rounds + per_batch - 1) / per_batch;
  // fn(p) for each cached pack of this thread in batch `batch` (a thread reads back only the
  // slots it filled: no block barrier).
  const auto each_cached = [&](int batch, auto&& fn) {
    const int first = tid + batch * per_batch * kGridRowThreads;
    const int end = min(kept, first + per_batch * kGridRowThreads);
    for (int p = first; p < end; p += kGridRowThreads) fn(p);
  };
  // Every batch's copies, one commit a batch (empty ones too: the waits below count them).
  const auto copy_batches = [&](auto&& copy) {
    for (int batch = 0; batch < batches; ++batch) {
      each_cached(batch, copy);
      cp_async_commit();
    }
  };
  // evict_cached: L2 drops the cached packs' lines first (they are not read from global memory
  // again), so that it keeps the tail's for pass 2.
  const uint64_t policy = l2_policy(evict_cached ? L2Evict::kFirst : L2Evict::kNormal);
  // A forward tail of at most kHeldTail packs a thread stays in registers (`held`): loaded ahead
  // of the copies, reduced after them, written from there, where a longer tail is read again in
  // pass 2. [1, 16777216] 16-bit leaves 1.5 packs a thread past the cache (H200 kernel times,
  // float16, re-read -> held: 28.3 -> 25.3 us with tagged partials, 28.9 -> 25.8 with the grid
  // barrier).
  const int tail0 = kept + tid;
  P held_tail[kHeldTail];
  if (held) {
#pragma unroll
    for (int u = 0; u < kHeldTail; ++u) {
      const int p = tail0 + u * kGridRowThreads;
      held_tail[u] = load_raw<N>(ra, int64_t(p) * N, p < npk ? ch.len : 0, vec, fill);
    }
  }
  if (vec) {
    copy_batches([&](int p) {
      cp_async_hinted(&cache_a[p], ra + int64_t(p) * N, policy);
      if constexpr (Bwd) cp_async_hinted(&cache_b[p], rb + int64_t(p) * N, policy);
    });
  } else {
    copy_batches([&](int p) {
      store_whole(&cache_a[p], load_raw<N>(ra, int64_t(p) * N, ch.len, false, fill));
      if constexpr (Bwd)
        store_whole(&cache_b[p], load_raw<N>(rb, int64_t(p) * N, ch.len, false, fill));
    });
  }
  // The thread's part: the backward's sum, or the forward's (max, sum of exp) -- online over the
  // uncached tail (read once); over the cached packs online as they land (`online`), or in two
  // steps (the max as they land, then the exps with it: one exp an element, none to rescale).
  //
  // The tail's loads queue behind the block's copies: reduced first, it held every thread until
  // nearly all the block's bytes had landed, with none of the batches' work done. So the batches
  // go first and the tail after, its first pack requested with the copies (H100 kernel times,
  // two runs each: [1, 16777216] float32 70.2 -> 66.7 us, backward float16 59.5 -> 58.7, float32
  // 113.1 -> 111.5; 16-bit forward, [1, 1048576] and float64 alike). float64 softmax keeps the
  // tail first: the other order cost it 100 bytes of spills, and its tails, past the shared
  // memory, are long anyway.
  constexpr bool kTailFirst = kKeepExp && sizeof(T) == 8;
  MaxSum<A> st = maxsum_identity<A>();
  P ta = zero, tb = zero;  // the tail's first pack, when last
  if (!held && !kTailFirst && tail0 < npk) {
    ta = load_raw<N>(ra, int64_t(tail0) * N, ch.len, vec, fill);
    if constexpr (Bwd) tb = load_raw<N>(rb, int64_t(tail0) * N, ch.len, vec, fill);
  }
  // The tail from pack `from` on, U packs a thread at a time.
  const auto reduce_tail = [&](int from) {
    for (int p0 = from; p0 < npk; p0 += U * kGridRowThreads) {
      P pa[U], pb[U];
      load_tail(p0, pa, pb);
      tail_pack_sums<Log, Bwd>(st, pa, pb);
    }
  };
  if constexpr (kTailFirst) reduce_tail(tail0);
  // The forward's max of the cached packs: element by element in the storage type (pack_max:
  // two 16-bit elements an instruction), then over the pack.
  P cached_max;
#pragma unroll
  for (int j = 0; j < N; ++j) cached_max.v[j] = fill;
  // `online` (the host's choice; a forward that keeps no exps): each cached pack's exps summed as
  // it lands (maxsum_push: the running max, a rescale when it grows), not a max pass and then an
  // exps pass after the last batch, which left the blocks whose copies landed last ~2 us of exps
  // before they could meet (a phase timeline of [1, 16777216] float16 on an H200). H200 kernel
  // times, two rounds: [1, 16777216] float16 24.93 / 24.83 -> 24.32 / 24.35 us, bfloat16 24.93 /
  // 24.96 -> 24.57 / 24.70, log_softmax float32 47.04 / 47.42 -> 46.50 / 45.76; [4, 1048576]
  // float16 10.24 -> 10.05 (an H100 had measured it slower, 35.7 -> 36.6, in an earlier form).
  const bool online = online_requested && !Bwd && !kKeepExp;
  // Online, a held tail is summed before the first batch's wait, not after the last: its loads
  // went out ahead of the copies, so it has landed, and its exps (two packs a thread, ~16K an SM)
  // overlap the copies still landing. H200 kernel times, two rounds: [1, 16777216] float16 24.32 /
  // 24.22 -> 23.90 / 23.90 us, bfloat16 24.45 / 24.48 -> 24.06 / 24.22, [2, 8388608] float16
  // 23.94 / 23.87 -> 23.55 / 23.55, log_softmax float16 [1, 16777216] 24.06 / 24.06 -> 23.78 /
  // 23.84; [1, 1048576] and [4, 1048576] within 2%. (Batches of the cached packs made more and
  // shorter as well, so that fewer exps follow the last copies, lost: 24.64 / 24.45.)
  const bool tail_early = held && online;
  const auto sum_held_tail = [&] {
    const P none[kHeldTail] = {};
    tail_pack_sums<Log, Bwd>(st, held_tail, none);
  };
  if (tail_early) sum_held_tail();
  for (int batch = 0; batch < batches; ++batch) {
    cp_async_wait(batches - 1 - batch);
    each_cached(batch, [&](int p) {
      if constexpr (Bwd) {
        backward_pack_sum<Log>(st.s, load_whole(&cache_a[p]), load_whole(&cache_b[p]));
      } else if (online) {
        A x[N];
        unpack<N>(load_whole(&cache_a[p]), x);
        maxsum_push<split_row_fast_exp<T>()>(st, x);
      } else {
        cached_max = pack_max(cached_max, load_whole(&cache_a[p]));
      }
    });
  }
  // The forward's running max takes in the cached packs' (so a tail reduced after them is
  // shifted by it, and the pack of maxima is not held across the tail).
  if constexpr (!Bwd) {
    A mx[N];
    unpack<N>(cached_max, mx);
    st = maxsum_combine(st, MaxSum<A>{tree_reduce(mx, MaxOp()), A(0)});
  }
  if (held) {
    if (!tail_early) sum_held_tail();
  } else if constexpr (!kTailFirst) {
    if (tail0 < npk) {
      const P first_a[1] = {ta}, first_b[1] = {tb};
      tail_pack_sums<Log, Bwd>(st, first_a, first_b);
    }
    reduce_tail(tail0 + kGridRowThreads);
  }
  // The forward's thread max m_t; its cached exps are taken with it (kept in place of x for
  // kKeepExp). A thread that has seen only -inf (or padding) keeps (-inf, 0).
  const A m_t = st.m;
  if constexpr (!Bwd) {
    if (m_t != A(-INFINITY) && !online) {
      // Pass 1's exps are the split row's stats' (split_row_fast_exp: float64's exp_nonpositive
      // too); float64's output pass keeps exp() (float64_exp.cuh has the times of both).
      const ShiftedExp<split_row_fast_exp<T>(), A> ex(m_t);
      A s = st.s;  // the tail's, under m_t
      for (int p = tid; p < kept; p += kGridRowThreads) {
        A x[N];
        unpack<N>(load_whole(&cache_a[p]), x);
#pragma unroll
        for (int j = 0; j < N; ++j) x[j] = ex(x[j]);
        s += tree_reduce(x, SumOp());
        if constexpr (kKeepExp) store_whole(&cache_a[p], pack_of<T>(x));
      }
      st.s = s;
    }
  }
  const MaxSum<A> partial = block_reduce_partial<Bwd>(st, scratch, parity);
  MaxSum<A> row;
  if (kTaggable<T> && tag != 0) {  // the host sends tag 0 for the barrier
    if constexpr (kTaggable<T>) {  // (the branch is compiled for float partials only)
      auto* slots = reinterpret_cast<TaggedPartial*>(partials);
      if (tid == 0) publish_partial(&slots[blockIdx.x], partial, tag);
      row = fold_tagged_partials<Bwd, kGridRowThreads>(slots + ch.row * chunks, chunks, tag,
                                                       scratch, parity);
    }
  } else {
    if (tid == 0) partials[blockIdx.x] = partial;
    cooperative_groups::this_grid().sync();  // orders the partials' stores before the loads
    row = fold_row_partials<Bwd, kGridRowThreads>(partials + ch.row * chunks, chunks, scratch,
                                                  parity);
  }
  const A coef = Bwd ? A(0) : fwd_coef<Log>(row.s, row.m);
  T* ro = out + ch.row * cols + ch.c0;
  // The output's stores: streaming (st.global.cs) for out_evict < 0, else hinted with that
  // L2Evict (launch_grid_row_tier says which the host picks).
  const uint64_t out_policy = l2_policy(out_evict == 2 ? L2Evict::kLast
                                        : out_evict == 1 ? L2Evict::kFirst
                                                         : L2Evict::kNormal);
  const auto put = [&](int p, const A (&o)[N]) {
    const int64_t col = int64_t(p) * N;
    if (out_evict >= 0 && vec && col + N <= ch.len)
      store_global_hinted(reinterpret_cast<P*>(ro + col), pack_of<T>(o), out_policy);
    else
      store_pack<N, true>(ro, col, ch.len, vec, o);
  };

  // Pass 2: the tail first, which pass 1 read last, from its end back: L2 holds the lines read
  // last, which a tail longer than L2 would evict on its way from the front. The output's lines
  // go first from L2 (streaming stores, where a tail is read back), ahead of the tail's. H100
  // kernel times, both toggled in one build, two runs each, forward / backward: [1, 16777216]
  // float32 66.9 -> 63.2 / 111.3 -> 105.9 us, float64 151.1 -> 148.6 / 224.1 -> 218.3, [64,
  // 152064] float64 90.4 -> 86.4 (the reversed tail gave most). float64's forward is at the
  // mercy of register allocation under the 64-register cap: as built here (40 bytes of spills, 12
  // in that build) it measured 155 us on [1, 16777216] as before and 90.3 on [64, 152064] (92.6
  // before).
  constexpr int kRound = U * kGridRowThreads;  // the tail's packs a round of the block's threads
  const int last_round = npk > kept && !held ? (npk - kept - 1) / kRound : -1;
  if (held) {
#pragma unroll
    for (int u = 0; u < kHeldTail; ++u) {
      const int p = tail0 + u * kGridRowThreads;
      A o[N];
      grid_row_out<Log, Bwd>(held_tail[u], zero, row, coef, o);
      if (p < npk) put(p, o);
    }
  }
  for (int p0 = kept + tid + last_round * kRound; p0 >= kept; p0 -= kRound) {
    P pa[U], pb[U];
    load_tail(p0, pa, pb);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int p = p0 + u * kGridRowThreads;
      A o[N];
      grid_row_out<Log, Bwd>(pa[u], pb[u], row, coef, o);
      if (p < npk) put(p, o);
    }
  }
  // Then the cached packs. kKeepExp: exp(x - m_t) to the output, one factor a thread. A thread
  // whose part is all -inf outputs 0 (its cache still holds x), unless the whole row is -inf:
  // then the factor is NaN (coef).
  const bool summed = m_t != A(-INFINITY);
  const A scale = !kKeepExp || m_t == row.m ? coef : coef * acc_exp(m_t - row.m);
  for (int p = tid; p < kept; p += kGridRowThreads) {
    A o[N];
    if constexpr (kKeepExp) {
      unpack<N>(load_whole(&cache_a[p]), o);
#pragma unroll
      for (int j = 0; j < N; ++j) o[j] = (summed ? o[j] : A(0)) * scale;
    } else {
      grid_row_out<Log, Bwd>(load_whole(&cache_a[p]), Bwd ? load_whole(&cache_b[p]) : zero, row,
                             coef, o);
    }
    put(p, o);
  }
}

}  // namespace mt
