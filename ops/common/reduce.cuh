// Warp and block reductions, and the online (max, sum-of-exp) pair that lets a softmax reduce a
// row in one pass when the row cannot stay on chip.
#pragma once

#include <cmath>
#include <cstring>

#include "ops/common/float64_exp.cuh"

namespace mt {

// NaN-propagating max: fmax would drop a NaN, but torch's softmax turns a NaN row into NaNs.
template <typename A>
__device__ __forceinline__ A nan_max(A a, A b) {
  return (a > b || a != a) ? a : b;
}
// float: one instruction on sm_80+ (max.NaN returns NaN when either input is NaN) instead of
// two compares and a select; this runs once per element.
__device__ __forceinline__ float nan_max(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a > b || a != a) ? a : b;
#endif
}

__device__ __forceinline__ float acc_exp(float x) { return expf(x); }
__device__ __forceinline__ double acc_exp(double x) { return exp(x); }
constexpr float kLog2e = 1.4426950408889634f;
// The hardware 2^x: 2 ulp of float, results under 2^-126 flushed to 0.
__device__ __forceinline__ float ex2_approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// The hardware 1 / x: 1 ulp of float over the normal floats, subnormals flushed.
__device__ __forceinline__ float rcp_approx(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// The hardware log2: absolute error under 2^-22 over the normal floats, subnormals flushed.
__device__ __forceinline__ float lg2_approx(float x) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// The hardware ex2 of x * log2(e). Two instructions; __expf takes four (it keeps denormal
// results), the accurate expf about ten.
__device__ __forceinline__ float fast_exp(float x) { return ex2_approx(x * kLog2e); }
// Per-element exp of a shifted value (x - m <= 0, or of two maxima's difference). Fast: float's
// hardware ex2 (fast_exp, see fast_forward_exp), float64's exp_nonpositive (float64_exp.cuh: the
// tiers where it measured faster ask for it); else the accurate expf / exp.
template <bool Fast, typename A>
__device__ __forceinline__ A elem_exp(A x) {
  if constexpr (Fast && sizeof(A) == 4)
    return fast_exp(x);
  else if constexpr (Fast)
    return exp_nonpositive(x);
  else
    return acc_exp(x);
}
// Whether a forward softmax's per-element exps (the sum's and the output's) take the hardware ex2
// (elem_exp's Fast) for outputs of type T: 16-bit types, whose rounding is 1000x coarser, and
// float32. For float32, fast_exp of d = x - m is off by ex2's 2 ulp (expf: 1) and by the product's
// rounding, |d| x 6e-8 relative, which expf carries too through the rounding of d itself; results
// under 2^-126 flush to 0 (expf keeps them as denormals). Three instructions an element where expf
// takes eleven: the float32 forward kernels were issue-bound (ncu on an H200: [2097152, 32] 83% of
// the issue slots, QuACK's ex2 kernel 44%). float64 keeps exp() here (tiers 3a, 3c and 4a take
// exp_nonpositive, and the row tiers' folds: float64_exp.cuh says why). The backward's exp
// (log_softmax) and the rescaling of partial sums stay accurate, but for tier 4c's running sums,
// its block folds and its cluster exchange, which rescale on this exp (a partial's error of ex2's
// 2 ulp and |d| x 6e-8 counts at its share of the sum, which exp(d) shrinks: a few 1e-7 of the sum
// at most; its float32 outputs measured within 6e-7 of float64, as with the accurate rescale).
template <typename T>
constexpr bool fast_forward_exp() {
  return sizeof(T) <= 4;
}
// exp(x - m) for every x of a row with the same m: elem_exp of (x - m). A -inf x gives 0 when m
// is finite; m = -inf gives NaN, as exp(-inf - -inf) does.
template <bool Fast, typename A>
struct ShiftedExp {
  A m;
  __device__ __forceinline__ explicit ShiftedExp(A max) : m(max) {}
  __device__ __forceinline__ A operator()(A x) const { return elem_exp<Fast>(x - m); }
};
// log2 of exp(x - m) in one fma, from ml = m log2(e) (rounded).
__device__ __forceinline__ float fused_exp2_arg(float x, float ml) { return fmaf(x, kLog2e, -ml); }
// The largest |m| whose m log2(e), rounded to float, takes exp(x - m) in the fused form (one fma
// and the hardware ex2): the bound FusedShiftedExp's, with_fwd_out's and column_fused_max's
// error estimates assume.
constexpr float kFusedShiftMax = 64.0f;
// ShiftedExp for 16-bit outputs in one instruction fewer: the hardware ex2 of fma(x, log2(e),
// -m log2(e)). The product m log2(e) is rounded, which scales every exp taken with this m by one
// factor 2^d, |d| <= 2^-18 for |m| <= kFusedShiftMax (with_shifted_exp keeps to those); a row's
// exps under one m keep their ratios, and sums over shifts of different m are off by a few d:
// ~1e-5 relative, against the 16-bit output's rounding of 2e-4 or coarser.
struct FusedShiftedExp {
  float ml;
  __device__ __forceinline__ explicit FusedShiftedExp(float max) : ml(max * kLog2e) {}
  __device__ __forceinline__ float operator()(float x) const {
    return ex2_approx(fused_exp2_arg(x, ml));
  }
};
// fn(ex) with ex(x) = exp(x - m): FusedShiftedExp for 16-bit outputs (Fast) while |m| <= 64,
// else ShiftedExp. The test is per call, not per element: fn is compiled for both. log_softmax
// declines the fused form, as the column tiers do (column_fusable_exp): log(sum) keeps d, an
// absolute error of up to 2.6e-6 (|d| ln 2, at |m| of 44-64) in every output, against the
// 2e-6 its outputs near 0 are held to.
template <bool Fast, bool Log, typename A, typename Fn>
__device__ __forceinline__ void with_shifted_exp(A m, Fn&& fn) {
  if constexpr (Fast && !Log && sizeof(A) == 4) {
    if (fabsf(m) <= kFusedShiftMax) {
      fn(FusedShiftedExp(m));
      return;
    }
  }
  fn(ShiftedExp<Fast, A>(m));
}
// The shift of a thread's exps: its max m, or 0 where it has seen only -inf (or padding), so that
// exp(x - shift) is 0 there instead of exp(-inf + inf) = NaN, without a test an element. (Its
// pair stays (-inf, 0): the shift only picks which exps the thread takes.)
template <typename A>
__device__ __forceinline__ A exp_shift(A m) {
  return m == A(-INFINITY) ? A(0) : m;
}
__device__ __forceinline__ float acc_log(float x) { return logf(x); }
__device__ __forceinline__ double acc_log(double x) { return log(x); }

struct MaxOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const { return nan_max(a, b); }
};
struct SumOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// Running max m and sum of exp(x - m) over the elements seen so far.
template <typename A>
struct MaxSum {
  A m, s;
};

template <typename A>
__device__ __forceinline__ MaxSum<A> maxsum_identity() {
  return {-INFINITY, A(0)};
}

// Folds K more elements into the running (max, sum): one rescale per K elements, and no test
// per element. The exps are shifted by the new max (ShiftedExp); a -inf element adds exp(-inf) =
// 0 once the max is finite, and while every element seen is -inf (or padding) the pair stays
// (-inf, 0), which fwd_coef turns into NaN if the whole row is so. x = m = +inf gives NaN (inf -
// inf), as torch's max-subtract-exp does.
template <bool Fast = false, int K, typename A>
__device__ __forceinline__ void maxsum_push(MaxSum<A>& st, const A (&x)[K]) {
  A m = st.m;
#pragma unroll
  for (int k = 0; k < K; ++k) m = nan_max(m, x[k]);
  if (m == A(-INFINITY)) return;
  const ShiftedExp<Fast, A> ex(m);
  // Not rescaled while the max stays (the fast exp of 0 need not be exactly 1, and pushes add
  // up); the empty pair's 0 * exp(-inf) is 0.
  A s = st.m == m ? st.s : st.s * ex(st.m);
#pragma unroll
  for (int k = 0; k < K; ++k) s += ex(x[k]);
  st = {m, s};
}

// Rescaling a partial by exp(m_i - m) is skipped when m_i == m: that keeps empty partials
// (-inf, 0) at 0 instead of exp(-inf + inf) = NaN.
template <typename A>
__device__ __forceinline__ MaxSum<A> maxsum_combine(MaxSum<A> a, MaxSum<A> b) {
  const A m = nan_max(a.m, b.m);
  const A sa = a.m == m ? a.s : a.s * acc_exp(a.m - m);
  const A sb = b.m == m ? b.s : b.s * acc_exp(b.m - m);
  return {m, sa + sb};
}

// Adds only the sums: the backward pass keeps its Σ y·dy in the s field of a MaxSum.
struct SumOfSOp {
  template <typename A>
  __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const {
    return {a.m, a.s + b.s};
  }
};

struct MaxSumOp {
  template <typename A>
  __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const {
    return maxsum_combine(a, b);
  }
};

template <typename A>
__device__ __forceinline__ A shfl_xor(A v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
template <typename A>
__device__ __forceinline__ MaxSum<A> shfl_xor(MaxSum<A> v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.m, mask), __shfl_xor_sync(0xffffffffu, v.s, mask)};
}

// Butterfly over aligned groups of `width` lanes (a power of two <= 32); every lane of the warp
// must call it, and every lane of a group ends with the group's result. Unrolled over the five
// possible steps, each taken if it lies within the group: a width known only at run time (the
// lanes tier's) costs a predicate a step, not a loop's shift, compare, move and branch.
template <typename V, typename Op>
__device__ __forceinline__ V warp_allreduce(V v, Op op, int width = 32) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1)
    if (mask < width) v = op(v, shfl_xor(v, mask));
  return v;
}

// Every thread of the block gets the result. `scratch` holds 33 V; back-to-back calls may reuse
// it (the barrier inside orders the next call's writes after this call's reads).
template <typename V, typename Op>
__device__ __forceinline__ V block_allreduce(V v, Op op, V identity, V* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nwarps = (blockDim.x + 31) >> 5;
  v = warp_allreduce(v, op);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    V w = lane < nwarps ? scratch[lane] : identity;
    w = warp_allreduce(w, op);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  return scratch[32];
}

// Every thread gets the block's result after a single barrier: each warp leaves its result in a
// slot, then every warp folds the slots across its lanes, a slot a lane and a butterfly (a load
// and five shuffles a thread, where folding every slot in every thread took a load and an op a
// warp: 31 of each at 32 warps), with no second barrier to hand a result back. `scratch` holds
// 64 V; `parity` (per thread, starting at 0) alternates the half of it that each call uses, so
// one call's writes never race the previous call's reads. H200 kernel times, the backward's block
// sums, against every thread folding every slot: float16 [1024, 2048] 5.1 -> 5.0 us,
// [8, 131072] 5.1 -> 4.9, bfloat16 [64, 152064] 21.1 -> 20.7, float32 [64, 152064] 36.2 -> 35.1;
// none slower.
template <typename V, typename Op>
__device__ __forceinline__ V block_allreduce_one_barrier(V v, Op op, V identity, V* scratch,
                                                         int& parity) {
  v = warp_allreduce(v, op);
  V* slots = scratch + parity * 32;
  parity ^= 1;
  const int lane = threadIdx.x & 31;
  if (lane == 0) slots[threadIdx.x >> 5] = v;
  __syncthreads();
  const int nwarps = int(blockDim.x + 31) >> 5;
  return warp_allreduce(lane < nwarps ? slots[lane] : identity, op);
}

// The (max, sum) of the warp's pairs (warp_maxsum: one a lane), or of the n <= 32 pairs v[0..n)
// (maxsum_fold_lanes), in every lane of the calling warp (all 32 lanes must call it): one exp a
// lane and two butterflies. Folded one by one in every thread, each exp would wait on the
// previous max: a chain of n exps (16 for a cluster's blocks, ~20% of a few-long-rows cluster
// kernel's stall samples). Fast: the rescaling exp is elem_exp's fast one (16-bit outputs).
template <bool Fast = false, typename A>
__device__ __forceinline__ MaxSum<A> warp_maxsum(MaxSum<A> w) {
  const A m = warp_allreduce(w.m, MaxOp());
  return {m, warp_allreduce(w.m == m ? w.s : w.s * elem_exp<Fast>(w.m - m), SumOp())};
}
template <bool Fast = false, typename A>
__device__ __forceinline__ MaxSum<A> maxsum_fold_lanes(const MaxSum<A>* v, int n) {
  const int lane = threadIdx.x & 31;
  return warp_maxsum<Fast>(lane < n ? v[lane] : maxsum_identity<A>());
}

// A block's (max, sum of exp(x - max)) from one pair a warp (the same in every lane of it), after
// a single barrier: each warp leaves its pair in a slot, then every warp folds the slots across
// its lanes. `scratch` holds 64 pairs; `parity` as in block_allreduce_one_barrier; Fast as in
// warp_maxsum.
template <bool Fast = false, typename A>
__device__ __forceinline__ MaxSum<A> block_maxsum_one_barrier(MaxSum<A> v, MaxSum<A>* scratch,
                                                              int& parity) {
  MaxSum<A>* slots = scratch + parity * 32;
  parity ^= 1;
  if ((threadIdx.x & 31) == 0) slots[threadIdx.x >> 5] = v;
  __syncthreads();
  return maxsum_fold_lanes<Fast>(slots, int(blockDim.x + 31) >> 5);
}

// Reduces a thread's values v[B..E) pairwise (log2 dependent steps instead of one per value),
// so their latencies overlap. Every index is a compile-time constant: the values stay in
// registers.
template <int B, int E, typename A, typename Op>
__device__ __forceinline__ A tree_reduce_range(const A* v, Op op) {
  if constexpr (E - B == 1) {
    return v[B];
  } else {
    constexpr int M = B + (E - B) / 2;
    return op(tree_reduce_range<B, M>(v, op), tree_reduce_range<M, E>(v, op));
  }
}
template <int K, typename A, typename Op>
__device__ __forceinline__ A tree_reduce(const A (&v)[K], Op op) {
  return tree_reduce_range<0, K>(v, op);
}

// Copies N values from shared (or distributed shared) memory in 16-byte accesses when they fill
// whole ones (the callers' slots are 16-byte aligned): a quarter of the load instructions of
// float32 values one by one.
template <int N, typename V>
__device__ __forceinline__ void load_values(const V* src, V (&out)[N]) {
  if constexpr ((sizeof(V) * N) % 16 == 0) {
    uint4 w[sizeof(V) * N / 16];
#pragma unroll
    for (int i = 0; i < int(sizeof(w) / 16); ++i) w[i] = reinterpret_cast<const uint4*>(src)[i];
    memcpy(out, w, sizeof(w));
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = src[j];
  }
}

// A block seen as rows of TX = 2^tx_log2 threads (thread = ty * TX + tx), each thread holding
// partials for the N columns it owns: combines the partials of each column over all ty and gives
// every thread the results for its tx. Within a warp the rows meet by shuffles; the rows left
// (one per warp when TX <= 32, else one per ty: at most 32) meet in `scratch`, which holds
// column_allreduce_scratch(blockDim.x, TX, N) values, 16-byte aligned. blockDim.x must be a
// multiple of 32 and of TX.
__host__ __device__ constexpr int column_allreduce_scratch(int threads, int tx, int n) {
  return threads / (tx > 32 ? tx : 32) * tx * n;
}

// The rows left after the shuffles are folded column by column, a thread a column, into the first
// row, which every thread then reads back: a thread folds one column over the rows instead of its
// N columns over every row (tier 4b's blocks of 8 warps and 16 packs of 8 halves: 8 loads and 7
// ops a thread where each took 16 16-byte loads and 56 ops), for one barrier more. The shuffle
// steps are unrolled, each taken when it crosses rows (mask >= TX): a predicate a step, not a
// loop's compare and branch for every value. Values meet in the same order as a fold of row 0,
// 1, 2, ... (argmax ties stay deterministic).
template <int N, typename V, typename Op>
__device__ __forceinline__ void column_allreduce(V (&v)[N], Op op, V* scratch, int tx_log2) {
  const int TX = 1 << tx_log2, tx = threadIdx.x & (TX - 1);
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {
    if (mask >= TX) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[j] = op(v[j], shfl_xor(v[j], mask));
    }
  }
  const int row_log2 = tx_log2 < 5 ? 5 : tx_log2;  // threads per row left after the shuffles
  const int rows = int(blockDim.x) >> row_log2, width = TX * N;  // values a row
  if (rows == 1) return;  // the warp's shuffles made every column whole
  if ((threadIdx.x & ((1 << row_log2) - 1)) < TX) {
    V* mine = scratch + (threadIdx.x >> row_log2) * width + tx * N;
#pragma unroll
    for (int j = 0; j < N; ++j) mine[j] = v[j];
  }
  __syncthreads();
  for (int c = threadIdx.x; c < width; c += blockDim.x) {
    V acc = scratch[c];
#pragma unroll 4
    for (int r = 1; r < rows; ++r) acc = op(acc, scratch[r * width + c]);
    scratch[c] = acc;
  }
  __syncthreads();
  load_values<N>(scratch + tx * N, v);
  __syncthreads();  // the next call may rewrite scratch
}

}  // namespace mt
