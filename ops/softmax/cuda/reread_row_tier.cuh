// Tier 2r: the 16-bit backward's aligned rows of one block, read twice. A block a row, a 16-byte
// pack of y and of dy a thread per trip through the row: the first pass loads them and sums y * dy
// (log_softmax: dy), the second loads them again and writes dx. Nothing is staged in shared memory
// or held across the block's reduction, so a thread needs few registers. The first pass's loads ask
// L1 and L2 to keep their lines (evict_last), the second's to drop them (evict_first): a block's
// second pass finds its row where its first left it (ncu on [16384, 4096] float16, a first build:
// 40% of the sectors hit L1, and DRAM read y and dy once). That is how torch.compile's backward
// kernel for these rows reads them (Inductor's PTX). H200 kernel times, two rounds, the block
// tier's ring of two packs a thread -> this: [1024, 4096] float16 8.78 -> 7.77 us (torch.compile's
// kernel 7.4), [2048, 4096] 15.2 -> 14.6, [16384, 4096] 96.2 -> 94.0 (92.0), [1024, 8192] 15.9 ->
// 14.75 (13.9), [4096, 8192] 50.5 -> 48.5 (48.0). Both halves of that matter ([16384, 4096]:
// without the hints 95.3; with them but the one-barrier reduction, block_allreduce_one_barrier,
// whose every thread folds the 16 warps' sums, 99.1; neither 99.5). A trip that leaves threads idle
// lost ([8192, 6144], 768 packs: 73.3 -> 77.7; [1024, 10240], 1280: 18.2 -> 18.8), as did 8-byte
// packs (Inductor's layout for trips of 2048 values; [16384, 4096] 107) and blocks of 256 or 1024
// threads on some rows (backward_rereads_rows, softmax_cuda.cu).
#pragma once

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

// A block of 512 threads a row (backward_rereads_rows says which rows).
constexpr int kRereadThreads = 512;

// Rows of cols / N whole, aligned packs (the launcher sends aligned rows only).
template <typename T, bool Log>
__global__ void __launch_bounds__(kRereadThreads)
    softmax_bwd_reread_kernel(const T* __restrict__ y, const T* __restrict__ dy,
                              T* __restrict__ dx, int64_t cols) {
  static_assert(sizeof(T) == 2, "16-bit rows");
  constexpr int N = pack_size<T>();
  using P = Pack<T, N>;
  __shared__ float scratch[33];
  const int64_t at = int64_t(blockIdx.x) * cols;
  const P* ry = reinterpret_cast<const P*>(y + at);
  const P* rdy = reinterpret_cast<const P*>(dy + at);
  P* rdx = reinterpret_cast<P*>(dx + at);
  const int npk = int(cols / N), bd = int(blockDim.x);

  const uint64_t keep = l2_keep_policy();
  float acc = 0.0f;
  for (int p = int(threadIdx.x); p < npk; p += bd) {
    float fy[N], fdy[N];
    unpack_words<T, N>(load_words_hinted<true>(ry + p, keep), fy);
    unpack_words<T, N>(load_words_hinted<true>(rdy + p, keep), fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) acc += bwd_term<Log>(fy[j], fdy[j]);
  }
  // Two barriers, warp 0 folding the warps' sums (see the top).
  const float sum = block_allreduce(acc, SumOp(), 0.0f, scratch);

  const uint64_t drop = l2_copy_policy(true);
  for (int p = int(threadIdx.x); p < npk; p += bd) {
    float fy[N], fdy[N], o[N];
    unpack_words<T, N>(load_words_hinted<false>(ry + p, drop), fy);
    unpack_words<T, N>(load_words_hinted<false>(rdy + p, drop), fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, true>(fy[j], fdy[j], sum);
    store_global_whole(rdx + p, pack_of<T, N>(o));
  }
}

}  // namespace mt
