// Tier 1: rows of up to ~1K elements with inner == 1. A group of `lanes` threads (a power of two
// <= 32, so a warp holds 32 / lanes rows) owns a row, held in registers as PACKS packs per thread;
// reductions are butterfly shuffles inside the group. Lanes is a runtime value so one
// instantiation per PACKS in {1, 2, 4, 8} covers every width; with PACKS == 1 (tiny rows such as
// [2097152, 32]) each thread also takes two rows to keep more loads in flight.
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kWarpTierThreads = 256;

// Fwd: a = x, out = y. Bwd: a = y, b = dy, out = dx.
template <typename T, int PACKS, bool Log, bool Bwd>
__global__ void __launch_bounds__(kWarpTierThreads)
    softmax_warp_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                        int64_t rows, int cols, int lanes_log2, bool vec) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  constexpr int K = PACKS * N;             // elements per thread per row
  constexpr int ROWS = PACKS == 1 ? 2 : 1;  // rows per thread
  const int lanes = 1 << lanes_log2;
  const int lane = threadIdx.x & (lanes - 1);
  const int group = (threadIdx.x & 31) >> lanes_log2;
  const int rows_per_warp = (32 >> lanes_log2) * ROWS;
  const int64_t warps_total = int64_t(gridDim.x) * (kWarpTierThreads / 32);
  const int64_t warp_id = int64_t(blockIdx.x) * (kWarpTierThreads / 32) + (threadIdx.x >> 5);

  // The loop bound is per warp so that every lane reaches every shuffle.
  for (int64_t base = warp_id * rows_per_warp; base < rows; base += warps_total * rows_per_warp) {
    const int64_t row0 = base + int64_t(group) * ROWS;
    A va[ROWS][K];
    A vb[ROWS][Bwd ? K : 1];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int64_t row = row0 + r;
      const int end = row < rows ? cols : 0;  // rows past the end read as padding
      const T* pa = a + row * cols;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        const int col = (p * lanes + lane) * N;
        A tmp[N];
        load_pack<N>(pa, col, end, vec, tmp, Bwd ? A(0) : A(-INFINITY));
#pragma unroll
        for (int j = 0; j < N; ++j) va[r][p * N + j] = tmp[j];
        if constexpr (Bwd) {
          load_pack<N>(b + row * cols, col, end, vec, tmp, A(0));
#pragma unroll
          for (int j = 0; j < N; ++j) vb[r][p * N + j] = tmp[j];
        }
      }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int64_t row = row0 + r;
      if constexpr (!Bwd) {
        A m = va[r][0];
#pragma unroll
        for (int k = 1; k < K; ++k) m = nan_max(m, va[r][k]);
        m = warp_allreduce(m, MaxOp(), lanes);
        A s = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) {  // padding: exp(-inf) = 0
          const A e = elem_exp<kFast>(va[r][k] - m);
          s += e;
          if constexpr (!Log) va[r][k] = e;  // softmax keeps exp(x - m): one exp per element
        }
        s = warp_allreduce(s, SumOp(), lanes);
        const A coef = fwd_coef<Log>(s, m);
#pragma unroll
        for (int k = 0; k < K; ++k) va[r][k] = Log ? va[r][k] - m - coef : va[r][k] * coef;
      } else {
        A s = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) s += bwd_term<Log>(va[r][k], vb[r][k]);
        s = warp_allreduce(s, SumOp(), lanes);
#pragma unroll
        for (int k = 0; k < K; ++k) va[r][k] = bwd_out<Log, kFast>(va[r][k], vb[r][k], s);
      }
      if (row < rows) {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          A tmp[N];
#pragma unroll
          for (int j = 0; j < N; ++j) tmp[j] = va[r][p * N + j];
          store_pack<N>(out + row * cols, (p * lanes + lane) * N, cols, vec, tmp);
        }
      }
    }
  }
}

}  // namespace mt
