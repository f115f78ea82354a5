// Tier 2r: the backward's aligned 16- and 32-bit rows read twice: a block a row (rows of up to 512
// packs, or of 1024: backward_rereads_rows), or a cluster a row (few rows of 16,384 to 32,768
// packs: launch_reread_cluster_rows). A 16-byte pack of y and of dy a thread per trip through the
// row (a block's share of it): the first pass loads them and sums y * dy (log_softmax: dy), the
// second loads them again and writes dx. Nothing is staged in shared memory or held across the
// row's reduction, so a thread needs few registers. The first pass's loads ask L1 and L2 to keep
// their lines (evict_last), the second's to drop them (evict_first): a block's second pass finds
// its row where its first left it (ncu on [16384, 4096] float16, a first build: 40% of the sectors
// hit L1, and DRAM read y and dy once). That is how torch.compile's backward kernel for these rows
// reads them (Inductor's PTX). H200 kernel times, two rounds, the block tier's ring of two packs a
// thread -> this: [1024, 4096] float16 8.78 -> 7.77 us (torch.compile's kernel 7.4), [2048, 4096]
// 15.2 -> 14.6, [16384, 4096] 96.2 -> 94.0 (92.0), [1024, 8192] 15.9 -> 14.75 (13.9), [4096, 8192]
// 50.5 -> 48.5 (48.0). Both halves of that matter ([16384, 4096]: without the hints 95.3; with them
// but a one-barrier reduction whose every thread folded the 16 warps' sums one by one, 99.1;
// neither 99.5). The block's sum is block_allreduce_one_barrier, which folds the warps' sums a sum
// a lane ([16384, 4096] 93.2 -> 92.8 against two barriers, [1024, 4096] 7.7 -> 7.55). A trip that
// leaves threads idle lost ([8192, 6144], 768 packs: 73.3 -> 77.7; [1024, 10240], 1280: 18.2 ->
// 18.8), as did 8-byte packs (Inductor's layout for trips of 2048 values; [16384, 4096] 107) and
// blocks of 256 or 1024 threads at two packs a thread on some rows (its launchers in
// softmax_cuda.cu have the rest). Tier 2h, below, reads long rows once and holds them instead.
#pragma once

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

// At most 512 threads a block (a trip through a row of 512 packs or more).
constexpr int kRereadThreads = 512;

// Rows of cols / N whole, aligned packs (the launcher sends aligned rows only). Cluster: a row
// over the blocks of a cluster (few long rows, launch_reread_cluster_rows), each block reading its
// share of the packs twice, the blocks' sums exchanged through distributed shared memory between
// the passes.
template <typename T, bool Log, bool Cluster = false>
__global__ void __launch_bounds__(kRereadThreads)
    softmax_bwd_reread_kernel(const T* __restrict__ y, const T* __restrict__ dy,
                              T* __restrict__ dx, int64_t cols) {
  static_assert(sizeof(T) <= 4, "16- and 32-bit rows");
  constexpr int N = pack_size<T>();
  using P = Pack<T, N>;
  __shared__ float scratch[64];
  const int npk = int(cols / N), bd = int(blockDim.x);
  int64_t row = blockIdx.x;
  int begin = 0, end = npk;
  __shared__ std::conditional_t<Cluster, ClusterSlots<float>, char> slots;
  if constexpr (Cluster) {
    unsigned clusters, size;
    row = cluster_index_and_count(clusters);
    const int rank = int(cluster_rank_and_size(size)), share = (npk + int(size) - 1) / int(size);
    begin = min(npk, rank * share);
    end = min(npk, begin + share);
    cluster_exchange_init(slots);
  }
  const int64_t at = row * cols;
  const P* ry = reinterpret_cast<const P*>(y + at);
  const P* rdy = reinterpret_cast<const P*>(dy + at);
  P* rdx = reinterpret_cast<P*>(dx + at);

  const uint64_t keep = l2_policy(L2Evict::kLast);
  float acc = 0.0f;
  for (int p = begin + int(threadIdx.x); p < end; p += bd) {
    float fy[N], fdy[N];
    unpack_words<T, N>(load_words_hinted<true>(ry + p, keep), fy);
    unpack_words<T, N>(load_words_hinted<true>(rdy + p, keep), fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) acc += bwd_term<Log>(fy[j], fdy[j]);
  }
  int parity = 0;
  float sum = block_allreduce_one_barrier(acc, SumOp(), 0.0f, scratch, parity);
  if constexpr (Cluster) {
    ClusterRound round;
    sum = cluster_allreduce(sum, SumOp(), 0.0f, slots, round);
  }

  const uint64_t drop = l2_policy(L2Evict::kFirst);
  for (int p = begin + int(threadIdx.x); p < end; p += bd) {
    float fy[N], fdy[N], o[N];
    unpack_words<T, N>(load_words_hinted<false>(ry + p, drop), fy);
    unpack_words<T, N>(load_words_hinted<false>(rdy + p, drop), fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, sizeof(T) == 2>(fy[j], fdy[j], sum);
    store_global_whole(rdx + p, pack_of<T, N>(o));
  }
}

// Tier 2h: the backward's long aligned 16- and 32-bit rows over a 16-block cluster a row (rows of
// 131,073 to 155,648 floats or 196,608 16-bit values, launch_held_cluster_rows), HELD packs of y
// and of dy a thread loaded once, straight into registers (a thread's loads all in flight at once,
// issued back to back as predicated loads), the row's sum exchanged through distributed shared
// memory, dx computed from the registers. Each element crosses HBM once in and once out, with no
// ring in shared memory: a thread's fixed work is a few instructions, where the staged kernel's
// copies, waits and owned tests took ~560 instructions a warp ([64, 152064] float32, ncu; QuACK's
// backward, which holds its rows in registers after one wait on its copies, 356). 16-bit values
// stay words, converted in each of the two passes. The block stays small enough for two an SM:
// float32 4 packs a thread and at most 608 threads (48 registers), 16-bit 6 packs and at most 256
// threads (64 registers).
template <typename T>
constexpr int held_bwd_packs() {
  return sizeof(T) == 4 ? 4 : 6;
}
template <typename T>
constexpr int held_bwd_max_threads() {
  return sizeof(T) == 4 ? 608 : 256;
}

// (The 16-bit kernel is bounded as for 480 threads, two an SM: a cap of 64 registers, where a bound
// of 256 let ptxas take 127.)
template <typename T, bool Log>
__global__ void __launch_bounds__(sizeof(T) == 4 ? held_bwd_max_threads<T>() : 480, 2)
    softmax_bwd_held_cluster_kernel(const T* __restrict__ y, const T* __restrict__ dy,
                                    T* __restrict__ dx, int64_t cols) {
  static_assert(sizeof(T) <= 4, "16- and 32-bit rows");
  constexpr int N = pack_size<T>(), HELD = held_bwd_packs<T>();
  using P = Pack<T, N>;
  using W = PackWords<T, N>;
  __shared__ float scratch[64];
  __shared__ ClusterSlots<float> slots;
  unsigned clusters, size;
  const int64_t row = cluster_index_and_count(clusters);
  const int npk = int(cols / N), bd = int(blockDim.x);
  const int rank = int(cluster_rank_and_size(size)), share = (npk + int(size) - 1) / int(size);
  const int begin = min(npk, rank * share), end = min(npk, begin + share);
  const int first = begin + int(threadIdx.x);
  const int64_t at = row * cols;
  const P* ry = reinterpret_cast<const P*>(y + at);
  const P* rdy = reinterpret_cast<const P*>(dy + at);
  P* rdx = reinterpret_cast<P*>(dx + at);

  W wy[HELD], wdy[HELD];
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    const int p = first + k * bd;
    wy[k] = W{};
    wdy[k] = W{};
    if (p < end) {
      wy[k] = load_global_words<false>(ry + p);
      wdy[k] = load_global_words<false>(rdy + p);
    }
  }
  cluster_exchange_init(slots);
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    float fy[N], fdy[N];
    unpack_words<T, N>(wy[k], fy);
    unpack_words<T, N>(wdy[k], fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) acc += bwd_term<Log>(fy[j], fdy[j]);
  }
  int parity = 0;
  float sum = block_allreduce_one_barrier(acc, SumOp(), 0.0f, scratch, parity);
  ClusterRound round;
  sum = cluster_allreduce(sum, SumOp(), 0.0f, slots, round);
#pragma unroll
  for (int k = 0; k < HELD; ++k) {
    const int p = first + k * bd;
    float fy[N], fdy[N], o[N];
    unpack_words<T, N>(wy[k], fy);
    unpack_words<T, N>(wdy[k], fdy);
#pragma unroll
    for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, sizeof(T) == 2>(fy[j], fdy[j], sum);
    store_global_whole_if(p < end, rdx + p, pack_of<T, N>(o));
  }
}

}  // namespace mt
