// Tier 4c: softmax over a non-last dim with a short inner extent, e.g. [32, 1000, 14, 14] over
// dim 1 (196 columns: 392-byte rows in float16, not a whole number of 16-byte packs).
//
// Why: tiers 4a and 4b lay threads along inner in tiles of 16- (or 8-) byte packs, so a short
// inner leaves most of a tile as padding, and rows that are not a multiple of 16 bytes force
// 8-byte packs. But one outer index's (axis x inner) slab is contiguous memory: here a cluster of
// CS blocks takes the slab, each block a run of whole rows, copied flat in 16-byte packs as if
// it were one long row. Only the reduction knows the columns.
//
// Columns of a flat pack: with N elements a pack and C = inner columns, pack k of a run that
// starts on a row boundary holds columns (k * N + i) mod C, which repeat every W = C / gcd(N, C)
// packs (a period of N / gcd(N, C) rows). So thread (g, j) of a block of G x W threads takes packs
// j + W * (g + G * it): always the same N columns, folded in registers. Block b of the cluster
// takes rows [b * rows, (b + 1) * rows), rows a whole number of periods, so that every block's run
// starts 16-byte aligned with the same columns for the same j.
//
// Per column, forward: the thread's running (max, sum) as its batches of copies land, the block's
// (max, sum) in one fold of the threads' pairs (through `scratch`; float64 softmax, which keeps its
// exps: its max, then its sum), then one exchange of (max, sum) pairs across the cluster
// (distributed shared memory, one cluster barrier); backward: sums only. A thread reads back only
// the packs it copied itself, so no barrier stands between the copies landing and the arithmetic.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/column_tier.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kSlabMaxThreads = 512;

// Folds each column's partials into `folded[column]`. Thread t left its N values at t * N, so with
// W = period threads a group and a period of P rows, partial p (of the G * P a column has: thread
// group p / P, row p % P of the period) of column c sits at p * inner + c. `lanes` consecutive
// threads (a power of two up to a warp) share a column, each folding every lanes-th partial in a
// register, then shuffles: a short inner has hundreds of partials a column ([256, 100, 10] in
// 16-bit: 204 for 10 columns). Every thread of the block's whole warps takes part.
template <int N, typename V, typename Op>
__device__ __forceinline__ void slab_fold_columns(const V* scratch, int inner, int period,
                                                  V identity, Op op, V* folded) {
  const int threads = int(blockDim.x), parts = threads / period * (period * N / inner);
  int lanes = 1;
  while (lanes < 32 && lanes < parts && 2 * lanes * inner <= threads) lanes *= 2;
  const int lane = int(threadIdx.x) & (lanes - 1), columns_a_pass = threads / lanes;
  for (int first = 0; first < inner; first += columns_a_pass) {  // the same trips in every warp
    const int c = first + int(threadIdx.x) / lanes;
    V v = identity;
    if (c < inner)
      for (int part = lane; part < parts; part += lanes) v = op(v, scratch[part * inner + c]);
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (c < inner && lane == 0) folded[c] = v;
  }
}

// The forward's fold of (max, sum) pairs in one pass where a max fold, a rescale of every
// thread's sums and a sum fold took two (three barriers, and each thread's N exps): partial p of
// column c is (maxes[p * inner + c], sums[p * inner + c]), laid out as slab_fold_columns' are.
// The lanes of a column take its max first, then their sums under it (maxsum_combine's rule: a
// partial at the max, or empty, is not rescaled), so each partial takes one exp and none is
// rescaled twice. Fast: elem_exp's (the running sums' own rescale). The lanes and passes are
// slab_fold_columns' own lines again: a helper returning them for both changed the float64 slab
// kernels' code, and the float64 softmax took 4-10% longer (H100: [64, 1000, 7, 7] 31.4 -> 34.7
// us, [64, 2048, 49] 54.4 -> 56.6).
template <bool Fast, int N, typename A>
__device__ __forceinline__ void slab_fold_column_pairs(const A* maxes, const A* sums, int inner,
                                                       int period, A* colmax, A* colsum) {
  const int threads = int(blockDim.x), parts = threads / period * (period * N / inner);
  int lanes = 1;
  while (lanes < 32 && lanes < parts && 2 * lanes * inner <= threads) lanes *= 2;
  const int lane = int(threadIdx.x) & (lanes - 1), columns_a_pass = threads / lanes;
  for (int first = 0; first < inner; first += columns_a_pass) {  // the same trips in every warp
    const int c = first + int(threadIdx.x) / lanes;
    A m = A(-INFINITY), s = A(0);
    if (c < inner)
      for (int part = lane; part < parts; part += lanes) m = nan_max(m, maxes[part * inner + c]);
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      m = nan_max(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if (c < inner) {
      for (int part = lane; part < parts; part += lanes) {
        const A pm = maxes[part * inner + c], ps = sums[part * inner + c];
        s += pm == m ? ps : ps * elem_exp<Fast>(pm - m);
      }
    }
    for (int offset = lanes / 2; offset > 0; offset /= 2)
      s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (c < inner && lane == 0) {
      colmax[c] = m;
      colsum[c] = s;
    }
  }
}

// The cluster's (max, sum) of column c from every block's colmax / colsum (Bwd: sums only). The
// peers' values are read eight blocks at a time, all eight loads issued before any is used; the
// sums are rescaled on elem_exp<Fast> (the blocks' own folds' exp).
template <bool Bwd, bool Fast, typename A>
__device__ __forceinline__ MaxSum<A> slab_cluster_column(const A* colmax, const A* colsum, int c,
                                                         int cs) {
  MaxSum<A> r = {Bwd ? A(0) : colmax[c], colsum[c]};
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kBatch = 8;
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int me = int(cluster.block_rank());
  for (int first = 0; first < cs; first += kBatch) {
    A pm[kBatch], ps[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int peer = first + k;
      const bool other = peer < cs && peer != me;
      pm[k] = other && !Bwd ? *cluster.map_shared_rank(colmax + c, unsigned(peer)) : A(-INFINITY);
      ps[k] = other ? *cluster.map_shared_rank(colsum + c, unsigned(peer)) : A(0);
    }
    if constexpr (Bwd) {
#pragma unroll
      for (int k = 0; k < kBatch; ++k) r.s += ps[k];
    } else {
      // The batch's max first, then every sum rescaled to it (maxsum_combine's rule: a partial
      // at the max, or empty, is not rescaled): independent exps, not a chain of combines.
      A mx = r.m;
#pragma unroll
      for (int k = 0; k < kBatch; ++k) mx = nan_max(mx, pm[k]);
      A sum = r.m == mx ? r.s : r.s * elem_exp<Fast>(r.m - mx);
#pragma unroll
      for (int k = 0; k < kBatch; ++k)
        sum += pm[k] == mx ? ps[k] : ps[k] * elem_exp<Fast>(pm[k] - mx);
      r = {mx, sum};
    }
  }
#endif
  return r;
}

// Whether the forward takes its sums under the block's max once every batch has landed, keeping
// the exps in the slab for the output (one exp an element), instead of a running sum as the
// batches land and the exp again in the output: float64 softmax, whose accurate exp costs more
// than the overlap gains (H100 kernel times, [64, 2048, 49]: 54.5 us kept, 65.8 running; [64,
// 1000, 7, 7] 31.3 kept, 32.5 before the batches). float32 runs faster with the running sum
// ([64, 2048, 49] 24.1 us, 25.8 kept; [64, 1000, 7, 7] 14.4, 15.1).
template <typename T, bool Log, bool Bwd>
constexpr bool slab_keeps_exp() {
  return !Bwd && column_keeps_exp<T, Log>() && sizeof(T) == 8;
}

// Partials a thread leaves a column for the block's fold: a (max, sum) pair in the forward's
// running sums, else one value at a time (kept exps: the max, then the sum; backward: the sum).
template <typename T, bool Log, bool Bwd>
constexpr int slab_partials() {
  return Bwd || slab_keeps_exp<T, Log, Bwd>() ? 1 : 2;
}

// Dynamic shared memory of a block of `threads` taking `rows` rows of `inner` columns: the rows
// of x (and of dy backward), the threads' partials, the block's max and sum per column (what the
// cluster reads) and the columns' final max and coefficient.
template <typename T, bool Log, bool Bwd>
inline int64_t column_slab_smem(int64_t rows, int64_t inner, int threads) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  const int64_t run = (rows * inner + N - 1) / N * N * int64_t(sizeof(T)) * (Bwd ? 2 : 1);
  const int64_t partials = int64_t(threads) * N * slab_partials<T, Log, Bwd>();
  return run + (partials + 4 * inner) * int64_t(sizeof(A));
}

// a: x (forward) or y (backward); b: dy (backward). The host sends only 16-byte aligned pointers,
// slabs of a whole number of packs (axis * inner a multiple of N) and blocks of whole warps.
// `period`: W packs; `rows`: a block's rows (a whole number of periods); the cluster has cs
// blocks. `batches` (1..8): the thread's copies are committed in that many batches, and each is
// reduced as soon as it lands while the later ones are still on their way, so that the SM's
// arithmetic overlaps its loads instead of following them (one round of blocks: every SM loads,
// then reduces, then stores, and DRAM would idle through the reductions). The forward keeps a
// running (max, sum) a column: a batch's max first, the sum rescaled once a batch, then the
// batch's exps; the output takes exp again (no exp is kept in the slab: the batches' shifts
// differ). float64 softmax (slab_keeps_exp) takes only its max as the batches land.
// The fixed work a warp is much of the time here (ncu, [32, 1000, 14, 14] float16: 3,423
// instructions a warp, half of them outside the per-pack loops, 7.8 cycles between a warp's
// instructions), so the block's folds are one pass of pairs, the exchange's exps the fast ones
// and 16-bit softmax's exps fused: 3,092 a warp (H100 kernel times: float16 [32, 1000, 14, 14]
// 17.0 -> 16.8 us, bfloat16 16.9 -> 16.6; float32 [64, 1000, 7, 7] 14.5 -> 14.1, [64, 2048, 49]
// 24.0 -> 23.5; others within 2%). Loops unrolled twice measured no faster.
template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kSlabMaxThreads)
    softmax_column_slab_kernel(const T* __restrict__ a, const T* __restrict__ b,
                               T* __restrict__ out, int64_t axis, int inner, int period, int rows,
                               int cs, int batches) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  constexpr bool kFastExp = fast_forward_exp<T>();
  constexpr bool kKeepExp = slab_keeps_exp<T, Log, Bwd>();
  // 16-bit softmax takes its exps in the fused form (column_fusable_exp: one fma and the ex2)
  // wherever a thread's shifts allow (column_shifts), in the running sums and in the output. Not
  // float32: its sums and its output take exps under different shifts here, so the rounding of
  // the fused shift would not cancel out (16-bit outputs absorb it: column_fused_max).
  constexpr bool kFuse = column_fusable_exp<T, Log, kFastExp>() && sizeof(T) == 2 && !Bwd;
  using P = Pack<T, N>;
  extern __shared__ __align__(kCopyLineBytes) unsigned char slab_raw[];
  const int64_t slab = blockIdx.x / unsigned(cs);
  const int rank = int(blockIdx.x % unsigned(cs));
  const int64_t first_row = int64_t(rank) * rows;
  const int my_rows = int(std::min<int64_t>(rows, axis - first_row));
  const int64_t start = (slab * axis + first_row) * inner;  // a multiple of N
  const int packs = my_rows * inner / N;
  const int run_packs = (rows * inner + N - 1) / N;
  P* sa = reinterpret_cast<P*>(slab_raw);
  [[maybe_unused]] P* sb = sa + run_packs;
  // The threads' partials, [slab_partials][threads][N] (maxes, then sums where pairs); then
  // [inner] each: the block's max and sum per column (then the cluster's), the final max and
  // coefficient.
  A* scratch = reinterpret_cast<A*>(sa + run_packs * (Bwd ? 2 : 1));
  A* colmax = scratch + blockDim.x * N * slab_partials<T, Log, Bwd>();
  A* colsum = colmax + inner;
  A* final_max = colsum + inner;
  A* final_coef = final_max + inner;
  const int stride = int(blockDim.x) / period * period;
  const int j = threadIdx.x % period;
  const int mine = int(threadIdx.x) < stride ? int(threadIdx.x) : packs;  // spare threads: none
  // Batch t holds the thread's trips [t * per_batch, (t + 1) * per_batch) (trips of the thread
  // with the most packs, so that every thread's batches hold the same trips).
  const int trips = (packs + stride - 1) / stride;
  const int per_batch = (trips + batches - 1) / batches;
  const auto each_pack_of_batch = [&](int t, auto&& fn) {
    const int end = min(packs, mine + stride * (t + 1) * per_batch);
    for (int k = mine + stride * t * per_batch; k < end; k += stride) fn(k);
  };
  const P* src_a = reinterpret_cast<const P*>(a + start);
  [[maybe_unused]] const P* src_b = reinterpret_cast<const P*>(b + start);
  for (int t = 0; t < batches; ++t) {
    each_pack_of_batch(t, [&](int k) {
      cp_async<sizeof(P), true>(&sa[k], &src_a[k]);
      if constexpr (Bwd) cp_async<sizeof(P), true>(&sb[k], &src_b[k]);
    });
    cp_async_commit();
  }
  int col[N];  // the columns of this thread's packs (one modulo, not one a column)
  col[0] = j * N % inner;
#pragma unroll
  for (int i = 1; i < N; ++i) col[i] = col[i - 1] + 1 == inner ? 0 : col[i - 1] + 1;
  const auto leave_partials = [&](const A(&v)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) scratch[threadIdx.x * N + i] = v[i];
    __syncthreads();
  };

  A coef[N];  // the thread's sums a column (forward: of exp(x - m))
  [[maybe_unused]] A m[N];  // forward: the thread's running max, then (kKeepExp) the block's
#pragma unroll
  for (int i = 0; i < N; ++i) coef[i] = 0;
  if constexpr (Bwd) {
    for (int t = 0; t < batches; ++t) {
      cp_async_wait(batches - 1 - t);
      each_pack_of_batch(t, [&](int k) {
        A y[N], dy[N];
        unpack<N>(load_whole(&sa[k]), y);
        unpack<N>(load_whole(&sb[k]), dy);
#pragma unroll
        for (int i = 0; i < N; ++i) coef[i] += bwd_term<Log>(y[i], dy[i]);
      });
    }
    leave_partials(coef);
    slab_fold_columns<N>(scratch, inner, period, A(0), SumOp(), colsum);
  } else {
    // Unless kKeepExp, coef holds the sums of exp(x - exp_shift(m)) under the running max.
#pragma unroll
    for (int i = 0; i < N; ++i) m[i] = A(-INFINITY);
    for (int t = 0; t < batches; ++t) {
      cp_async_wait(batches - 1 - t);
      P mx;  // the batch's max in the storage type (16-bit: two elements an instruction)
#pragma unroll
      for (int i = 0; i < N; ++i) mx.v[i] = T(-INFINITY);
      each_pack_of_batch(t, [&](int k) { mx = pack_max(mx, load_whole(&sa[k])); });
      A shift[N];
      unpack<N>(mx, shift);
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const A moved = nan_max(m[i], shift[i]);
        if constexpr (!kKeepExp) {
          // Not rescaled while the max stays; a sum of nothing but -inf is 0 whatever its factor.
          if (moved != m[i]) coef[i] *= elem_exp<kFastExp>(m[i] - moved);
          shift[i] = exp_shift(moved);
        }
        m[i] = moved;
      }
      if constexpr (!kKeepExp) {
        const bool fused = column_shifts<T, kFuse>(shift);
        with_column_shifts<kFuse>(fused, [&](auto fused_c) {
          each_pack_of_batch(t, [&](int k) {
            A x[N];
            unpack<N>(load_whole(&sa[k]), x);
            // (float32 softmax's exps left in x: unused)
            column_exp_sum<T, Log, kFastExp, decltype(fused_c)::value>(x, shift, coef);
          });
        });
      }
    }
    if constexpr (!kKeepExp) {
      // The thread's (max, sum) pairs folded a column at a time.
      A* sums = scratch + blockDim.x * N;
#pragma unroll
      for (int i = 0; i < N; ++i) {
        scratch[threadIdx.x * N + i] = m[i];
        sums[threadIdx.x * N + i] = coef[i];
      }
      __syncthreads();
      slab_fold_column_pairs<kFastExp, N>(scratch, sums, inner, period, colmax, colsum);
    } else {
      leave_partials(m);
      slab_fold_columns<N>(scratch, inner, period, A(-INFINITY), MaxOp(), colmax);
      __syncthreads();
      // The sum pass under the block's max of each column, its exps left in the slab (exp_shift:
      // 0 for a column of only -inf here); m becomes that max.
      A shift[N];
#pragma unroll
      for (int i = 0; i < N; ++i) {
        m[i] = colmax[col[i]];
        shift[i] = exp_shift(m[i]);
      }
      for (int k = mine; k < packs; k += stride) {
        A x[N];
        unpack<N>(load_whole(&sa[k]), x);
        column_exp_sum<T, Log>(x, shift, coef);
        store_whole(&sa[k], pack_of<T>(x));
      }
      leave_partials(coef);
      slab_fold_columns<N>(scratch, inner, period, A(0), SumOp(), colsum);
    }
  }

  // The cluster's (max, sum) a column, read from every block after a cluster barrier (its
  // release makes this block's columns visible to the cluster, its own threads included; no
  // output store is pending yet); then the columns' (max, coefficient).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (cs > 1)
    cooperative_groups::this_cluster().sync();
  else
#endif
    __syncthreads();
  for (int c = threadIdx.x; c < inner; c += blockDim.x) {
    const MaxSum<A> r = slab_cluster_column<Bwd, kFastExp>(colmax, colsum, c, cs);
    final_max[c] = r.m;
    final_coef[c] = Bwd ? r.s : column_fwd_coef<T, Log>(r.s, r.m);
  }
  if (cs > 1) cluster_done_with_peers();  // no block may exit while a peer may read its columns
  __syncthreads();

  A mf[N];  // the columns' max (forward), then the shifts (column_shifts)
#pragma unroll
  for (int i = 0; i < N; ++i) {
    mf[i] = final_max[col[i]];
    coef[i] = final_coef[col[i]];
    // Kept exps, exp(x - block max), rescaled to the cluster's max (0 where the block saw only
    // -inf; a column of only -inf stays NaN through coef).
    if constexpr (kKeepExp) coef[i] *= m[i] == A(-INFINITY) ? A(0) : acc_exp(m[i] - mf[i]);
  }
  // Fused: the output's one shift, m log2(e) + log2(s) (column_fwd_coef's), from FwdOut's -log2(s).
  const bool fused = column_shifts<T, kFuse>(mf);
  if (fused) {
#pragma unroll
    for (int i = 0; i < N; ++i) coef[i] = mf[i] - coef[i];
  }
  P* dst = reinterpret_cast<P*>(out + start);
  with_column_shifts<kFuse>(fused, [&](auto fused_c) {
    for (int k = mine; k < packs; k += stride) {
      A x[N], o[N];
      [[maybe_unused]] A dy[N];
      unpack<N>(load_whole(&sa[k]), x);
      if constexpr (Bwd) unpack<N>(load_whole(&sb[k]), dy);
      if constexpr (!Bwd && !kKeepExp && column_keeps_exp<T, Log>()) {
        // float32 softmax: exp again (the running sums kept none), on the hardware ex2 as they
        // took.
#pragma unroll
        for (int i = 0; i < N; ++i) o[i] = fwd_out<Log, kFastExp>(x[i], mf[i], coef[i]);
      } else {
        column_out<T, Log, Bwd, decltype(fused_c)::value>(x, dy, mf, coef, o);
      }
      store_global_whole(&dst[k], pack_of<T>(o));
    }
  });
  if (cs > 1) cluster_wait_for_peers();
}

}  // namespace mt
