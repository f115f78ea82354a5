// Tier 4a: softmax over a non-last dim (inner > 1) with a short axis, e.g. [64, 128, 56, 56] over
// dim 1. Same layout as tier 4 (inner_tier.cuh): a block owns one outer index and a tile of
// TX * N consecutive inner columns, thread (tx, ty) reads N columns at axis steps ty, ty + TY, ...
// But here the whole (axis x tile) group fits the block's registers (R steps a thread), so every
// element is read once, exp'd once and written once.
// The tile is wide and short-per-thread in columns (N = 4 bytes' worth, TX up to a warp: a warp
// still reads 128 contiguous bytes per axis step) so that each thread holds many axis steps: the
// column reductions (shuffles over ty, then shared memory across warps) cost the same per column
// whatever R is, and with 16-byte packs (4-8 columns a thread, 4 steps) they cost more than the
// elementwise work itself.
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kInnerRegThreads = 256;

// Columns a thread holds: 4 bytes' worth (one float or double, two 16-bit values).
template <typename T>
constexpr int inner_reg_cols() {
  return sizeof(T) >= 4 ? 1 : 4 / int(sizeof(T));
}

// Axis steps a thread may hold: 32 accumulators, as in the row register tier.
template <typename T>
constexpr int inner_reg_max_rows() {
  return 32 / (inner_reg_cols<T>() * int(sizeof(acc_t<T>) / 4));
}

template <typename T, int R, bool Log>
__global__ void __launch_bounds__(kInnerRegThreads)
    softmax_inner_reg_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, int axis,
                             int64_t inner, int tx_log2, int64_t tiles, bool vec) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = inner_reg_cols<T>();
  __shared__ A smem[kInnerRegThreads * N];  // column_allreduce's scratch, for any TX
  const int TX = 1 << tx_log2, TY = kInnerRegThreads >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;

  for (int64_t t = blockIdx.x; t < outer * tiles; t += gridDim.x) {
    const int64_t col = (t % tiles) * TX * N + tx * N;
    const int64_t base = (t / tiles) * axis * inner;
    A v[R][N];
#pragma unroll
    for (int r = 0; r < R; ++r) {  // rows past the axis and columns past inner read as -inf
      const int a = ty + r * TY;
      load_pack<N>(x + base + int64_t(a) * inner, col, a < axis ? inner : 0, vec, v[r], A(-INFINITY));
    }
    A m[N], s[N], coef[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      m[j] = v[0][j];
#pragma unroll
      for (int r = 1; r < R; ++r) m[j] = nan_max(m[j], v[r][j]);
    }
    column_allreduce<N>(m, MaxOp(), smem, tx_log2);
#pragma unroll
    for (int j = 0; j < N; ++j) {
      s[j] = 0;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const A e = elem_exp<kFast>(v[r][j] - m[j]);
        s[j] += e;
        if constexpr (!Log) v[r][j] = e;
      }
    }
    column_allreduce<N>(s, SumOp(), smem, tx_log2);
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = fwd_coef<Log>(s[j], m[j]);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int a = ty + r * TY;
      if (a < axis) {
        A o[N];
#pragma unroll
        for (int j = 0; j < N; ++j) o[j] = Log ? v[r][j] - m[j] - coef[j] : v[r][j] * coef[j];
        store_pack<N>(y + base + int64_t(a) * inner, col, inner, vec, o);
      }
    }
  }
}

}  // namespace mt
