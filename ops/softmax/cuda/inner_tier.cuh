// Tier 4: softmax over a non-last dim (inner > 1), e.g. [64, 128, 56, 56] over dim 1. No
// transpose: a block owns one outer index and a tile of W = TX * N consecutive inner columns;
// thread (tx, ty) handles the N columns at tx * N (packs along inner, coalesced) for the axis
// steps a = ty, ty + TY, ... The TY partials of each column meet in column_allreduce.
// When the (axis x W) group fits (`onchip`), the first pass also caches it in shared memory and
// the second pass reads it from there: one read + one write. Otherwise the first pass is an
// online (max, sum) and the second re-reads global memory (mostly L2 for this block's tile).
// Global loads ask L2 for the 256 bytes around them, as tier 4b's copies do.
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kInnerThreads = 256;
constexpr int kInnerUnroll = 4;

// Dynamic shared memory: the per-column partials of every thread, then (onchip) the group.
template <typename T, bool Bwd>
inline int64_t inner_tier_smem(int64_t axis, int tx, bool onchip) {
  constexpr int N = pack_size<T>();
  const int64_t stats = int64_t(kInnerThreads) * N * sizeof(MaxSum<acc_t<T>>);
  return stats + (onchip ? axis * tx * 16 * (Bwd ? 2 : 1) : 0);
}

template <typename T, bool Log, bool Bwd>
__global__ void __launch_bounds__(kInnerThreads)
    softmax_inner_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                         int64_t outer, int64_t axis, int64_t inner, int tx_log2, int64_t tiles,
                         bool vec, bool onchip) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  using P = Pack<T, N>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int TX = 1 << tx_log2, TY = kInnerThreads >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  MaxSum<A>* stats = reinterpret_cast<MaxSum<A>*>(smem_raw);  // column_allreduce's scratch
  P* cache_a = reinterpret_cast<P*>(stats + kInnerThreads * N);  // [axis][TX]
  P* cache_b = cache_a + axis * TX;

  for (int64_t t = blockIdx.x; t < outer * tiles; t += gridDim.x) {
    const int64_t o = t / tiles;
    const int64_t col = (t % tiles) * TX * N + tx * N;
    const int64_t base = o * axis * inner;
    MaxSum<A> st[N];
#pragma unroll
    for (int j = 0; j < N; ++j) st[j] = {Bwd ? A(0) : A(-INFINITY), A(0)};

    // Pass 1: statistics per column (and the cache).
    for (int64_t a0 = ty; a0 < axis; a0 += kInnerUnroll * TY) {
      P pa[kInnerUnroll], pb[kInnerUnroll];
#pragma unroll
      for (int u = 0; u < kInnerUnroll; ++u) {
        const int64_t ai = a0 + int64_t(u) * TY;
        const int64_t e = ai < axis ? inner : 0;
        pa[u] = load_raw<N, true>(a + base + ai * inner, col, e, vec);
        if constexpr (Bwd) pb[u] = load_raw<N, true>(b + base + ai * inner, col, e, vec);
      }
#pragma unroll
      for (int u = 0; u < kInnerUnroll; ++u) {
        const int64_t ai = a0 + int64_t(u) * TY;
        if (ai < axis) {
          if (onchip) {
            store_whole(&cache_a[ai * TX + tx], pa[u]);
            if constexpr (Bwd) store_whole(&cache_b[ai * TX + tx], pb[u]);
          }
          if constexpr (Bwd) {
#pragma unroll
            for (int j = 0; j < N; ++j) st[j].s += bwd_term<Log>(A(pa[u].v[j]), A(pb[u].v[j]));
          }
        }
      }
      if constexpr (!Bwd) {  // the unrolled steps of each column in one online update
#pragma unroll
        for (int j = 0; j < N; ++j) {
          A x[kInnerUnroll];
#pragma unroll
          for (int u = 0; u < kInnerUnroll; ++u)
            x[u] = a0 + int64_t(u) * TY < axis ? A(pa[u].v[j]) : A(-INFINITY);
          maxsum_push<kFast>(st[j], x);
        }
      }
    }
    // Combine the TY partials of each column.
    if constexpr (Bwd)
      column_allreduce<N>(st, SumOfSOp(), stats, tx_log2);
    else
      column_allreduce<N>(st, MaxSumOp(), stats, tx_log2);
    A m[N], coef[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      m[j] = st[j].m;
      coef[j] = Bwd ? st[j].s : fwd_coef<Log>(st[j].s, st[j].m);
    }

    // Pass 2: write.
    for (int64_t ai = ty; ai < axis; ai += TY) {
      const int64_t off = base + ai * inner;
      P pa, pb;
      if (onchip) {
        pa = load_whole(&cache_a[ai * TX + tx]);
        if constexpr (Bwd) pb = load_whole(&cache_b[ai * TX + tx]);
      } else {
        pa = load_raw<N, true>(a + off, col, inner, vec);
        if constexpr (Bwd) pb = load_raw<N, true>(b + off, col, inner, vec);
      }
      A o[N];
#pragma unroll
      for (int j = 0; j < N; ++j)
        o[j] = Bwd ? bwd_out<Log, kFast>(A(pa.v[j]), A(pb.v[j]), coef[j])
                   : fwd_out<Log, kFast>(A(pa.v[j]), m[j], coef[j]);
      store_pack<N>(out + off, col, inner, vec, o);
    }
    __syncthreads();  // the cache is rewritten by the next tile
  }
}

}  // namespace mt
