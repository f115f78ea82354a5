// Tier 2a: medium rows (inner == 1, ~1K to 32K elements) with enough of them to fill the GPU.
// One block per row and the row in registers: every thread holds PACKS packs, computes exp once
// and keeps it until the store, so each element costs one global read, one write and one exp.
// With kCluster (sm_90, tier 3a for long rows that are few) a row is split over the blocks of a
// thread-block cluster, each holding its chunk in registers; the block results are combined
// through distributed shared memory. (block_tier.cuh caches rows in shared memory instead and
// computes exp twice; it remains for rows too long for registers and for the backward pass.)
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kBlockRegMaxThreads = 1024;
// At most 32 accumulators a thread: with 1024 threads a block, the register file leaves 64.
template <typename T>
constexpr int block_reg_max_packs() {
  return 32 / (pack_size<T>() * (sizeof(acc_t<T>) / 4));
}

// `chunk` (a multiple of N) is the part of a row one block owns: the whole row without clusters.
template <typename T, int PACKS, bool Log, bool kCluster>
__global__ void __launch_bounds__(kBlockRegMaxThreads)
    softmax_block_reg_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int cols,
                             int chunk, bool vec) {
  using A = acc_t<T>;
  constexpr bool kFast = sizeof(T) == 2;
  constexpr int N = pack_size<T>();
  constexpr int K = PACKS * N;
  __shared__ A scratch[33];
  __shared__ ClusterSlots<A> slots;
  int parity = 0;
  unsigned cs = 1, rank = 0;
  if constexpr (kCluster) rank = cluster_rank_and_size(cs);
  const int c0 = int(rank) * chunk;
  const int end = max(0, min(cols - c0, chunk));
  const int stride = blockDim.x * N;  // pack p of a thread starts at p * stride + threadIdx.x * N

  for (int64_t row = blockIdx.x / cs; row < rows; row += gridDim.x / cs) {
    const T* rx = x + row * cols + c0;
    A v[K];
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      A tmp[N];
      load_pack<N>(rx, p * stride + int(threadIdx.x) * N, end, vec, tmp, A(-INFINITY));
#pragma unroll
      for (int j = 0; j < N; ++j) v[p * N + j] = tmp[j];
    }
    A m = v[0];
#pragma unroll
    for (int k = 1; k < K; ++k) m = nan_max(m, v[k]);
    m = block_allreduce(m, MaxOp(), A(-INFINITY), scratch);
    if constexpr (kCluster) m = cluster_allreduce(m, MaxOp(), A(-INFINITY), slots, parity);
    A s = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {  // padding reads as -inf: exp gives 0
      const A e = elem_exp<kFast>(v[k] - m);
      s += e;
      if constexpr (!Log) v[k] = e;
    }
    s = block_allreduce(s, SumOp(), A(0), scratch);
    if constexpr (kCluster) s = cluster_allreduce(s, SumOp(), A(0), slots, parity);
    const A coef = fwd_coef<Log>(s, m);
    T* ry = y + row * cols + c0;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) {
      A tmp[N];
#pragma unroll
      for (int j = 0; j < N; ++j) tmp[j] = Log ? v[p * N + j] - m - coef : v[p * N + j] * coef;
      store_pack<N>(ry, p * stride + int(threadIdx.x) * N, end, vec, tmp);
    }
  }
  if constexpr (kCluster) cluster_exit_barrier();
}

}  // namespace mt
