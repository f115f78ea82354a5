// Tier 2a: medium rows (inner == 1, ~1K to 32K elements) with enough of them to fill the GPU.
// One block per row and the row in registers: every thread holds PACKS packs, computes exp once
// and keeps it until the store, so each element costs one global read, one write and one exp.
// (Tier 2b, block_tier.cuh, caches the row in shared memory instead and computes exp twice; it
// remains for rows too long for registers, for few long rows split over clusters, and for the
// backward pass. A cluster version of this kernel, rows split over blocks in registers, measured
// slower than the shared-memory one on an H200 for [16, 262144] and [64, 152064].)
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kBlockRegMaxThreads = 1024;
// At most 32 accumulators a thread: with 1024 threads a block, the register file leaves 64.
template <typename T>
constexpr int block_reg_max_packs() {
  return 32 / (pack_size<T>() * (sizeof(acc_t<T>) / 4));
}

template <typename T, int PACKS, bool Log>
__global__ void __launch_bounds__(kBlockRegMaxThreads)
    softmax_block_reg_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int cols,
                             bool vec) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  constexpr int K = PACKS * N;
  __shared__ A scratch[33];
  const int stride = blockDim.x * N;  // pack p of a thread starts at p * stride + threadIdx.x * N

  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* rx = x + row * cols;
    A v[K];
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      A tmp[N];
      load_pack<N>(rx, p * stride + int(threadIdx.x) * N, cols, vec, tmp, A(-INFINITY));
#pragma unroll
      for (int j = 0; j < N; ++j) v[p * N + j] = tmp[j];
    }
    A m = v[0];
#pragma unroll
    for (int k = 1; k < K; ++k) m = nan_max(m, v[k]);
    m = block_allreduce(m, MaxOp(), A(-INFINITY), scratch);
    A s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {  // padding reads as -inf: exp gives 0
      const A e = elem_exp<kFast>(v[k] - m);
      s += e;
      if constexpr (!Log) v[k] = e;
    }
    s = block_allreduce(s, SumOp(), A(0), scratch);
    const A coef = fwd_coef<Log>(s, m);
    T* ry = y + row * cols;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      A tmp[N];
#pragma unroll
      for (int j = 0; j < N; ++j) tmp[j] = Log ? v[p * N + j] - m - coef : v[p * N + j] * coef;
      store_pack<N>(ry, p * stride + int(threadIdx.x) * N, cols, vec, tmp);
    }
  }
}

}  // namespace mt
