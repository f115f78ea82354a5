// Tier 4b: softmax over a non-last dim (inner > 1) with each reduction group staged in shared
// memory (a cluster's for a long axis), for groups that tier 4a's registers could hold only as
// tiles narrower than their 128-byte lines.
//
// Why: every warp load of tier 4a reads its tile's width (32 bytes for [8, 4096, 4096] over dim
// 1) from 16 different rows, so each 128-byte line of the tensor is looked up in L2 once per
// tile, one sector each: ncu showed L2 at 86% of its throughput while DRAM moved 53%, and
// float32 spilled at 64 registers. Here shared memory, not registers, holds the group (64 KB a
// block where registers held 32 KB), so the tiles are twice as wide for the same cluster, and no
// register is tied up by data in flight.
//
// x is [outer][axis][inner]. A group is one outer index and a tile of TX packs of inner over the
// whole axis; block k of the group's CS-block cluster stages axis steps [k * seg, (k + 1) * seg)
// with cp.async. Thread (tx, ty) copies, and later reads back, pack tx of the steps ty, ty + TY,
// ...: it only ever reads what it copied itself, so no barrier stands between the copies landing
// and the arithmetic. The reductions and the arithmetic are tier 4a's.
#pragma once

#include <algorithm>

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/fast_divide.h"
#include "ops/common/reduce.cuh"
#include "ops/common/tensor_map.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/column_tier.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

// Dynamic shared memory of a block of `threads` in a cluster of cs: the cluster's inboxes, `seg`
// steps of TX packs of N elements of x (and of dy backward), then column_allreduce's scratch.
template <typename T, int N, bool Bwd>
inline int64_t column_staged_smem(int64_t seg, int tx, int threads, int64_t cs) {
  const int64_t scratch = column_allreduce_scratch(threads, tx, N);
  return column_inbox_bytes<T, N, Bwd>(cs, tx) + seg * tx * N * int64_t(sizeof(T)) * (Bwd ? 2 : 1) +
         scratch * int64_t(sizeof(acc_t<T>));
}

// a: x (forward) or y (backward); b: dy (backward). Packs of N elements, 16 bytes, or 8 where
// inner or the pointers allow no more (16-bit [32, 1000, 14, 14]: 392-byte rows); the host sends
// only tensors whose inner is a multiple of N and whose pointers are aligned to a pack.
// `Unrolled`: the 16-bit loops unrolled as wider types' are (launch_column_staged_tier says
// where).
template <typename T, int N, bool Log, bool Bwd, bool Unrolled = false>
__global__ void __launch_bounds__(kColumnMaxThreads)
    softmax_column_staged_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                 T* __restrict__ out, int64_t axis, int64_t inner,
                                 FastDivisor tiles, int tx_log2, FastDivisor blocks, int seg,
                                 const __grid_constant__ CUtensorMap map_x, int box_rows) {
  using A = acc_t<T>;
  using P = Pack<T, N>;
  // Inboxes, then the stage, from a 128-byte line (kCopyLineBytes).
  extern __shared__ __align__(kCopyLineBytes) unsigned char stage_raw[];
  __shared__ uint64_t landed[2];  // the cluster's exchanges
  const int TX = 1 << tx_log2, TY = int(blockDim.x) >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  const auto [cs, rank, slab, tile] = column_block(tiles, blocks);
  const int64_t first = int64_t(rank) * seg;  // the block's first step
  const int64_t col = (int64_t(tile) * TX + tx) * N;
  // Steps this thread stages (none for a pack past inner, or a block past the axis).
  const int steps = col < inner ? int(std::clamp<int64_t>(axis - first, 0, seg)) : 0;
  const int64_t offset = int64_t(slab) * axis * inner + first * inner + col;
  P* sa = reinterpret_cast<P*>(stage_raw + column_inbox_bytes<T, N, Bwd>(cs, TX));  // [seg][TX]
  [[maybe_unused]] P* sb = sa + int64_t(seg) * TX;
  A* scratch = reinterpret_cast<A*>(sa + int64_t(seg) * TX * (Bwd ? 2 : 1));  // column_allreduce's
  if (cs > 1) cluster_mbarriers_init(landed);
  // Thread (tx, ty) takes `count` steps, ty, ty + TY, ...: its packs are a stride of TY * TX
  // packs apart in the stage and TY rows apart in the tensors. The loops below walk pointers by
  // those strides (index arithmetic a step took 10-16 instructions a pack in 64 bits). 16-bit
  // loops are not unrolled but in the Unrolled kernel (an earlier build's unrolled forward took
  // 53 registers, not 43: four blocks an SM, not five; today's softmax takes 42 either way, its
  // log_softmax 54 against 44); wider types' are, 4 times (not unrolled, [4096, 4096] over dim 0
  // float32 went from 46.0 to 47.5 us: each step's shared-memory load waited alone).
  constexpr int kUnroll = sizeof(T) == 2 && !Unrolled ? 1 : 4;
  const int ty_log2 = 31 - __clz(TY);  // TY is a power of two
  const int count = steps > ty ? ((steps - 1 - ty) >> ty_log2) + 1 : 0;
  const int stage_stride = TY * TX;
  const int64_t row_stride = int64_t(TY) * inner;
  P* const mine = sa + ty * TX + tx;
  [[maybe_unused]] P* const mine_b = sb + ty * TX + tx;
  const int64_t first_offset = offset + int64_t(ty) * inner;
  // L2 fetches the 256 bytes around each copy: the rest of a tile narrower than that is read
  // by the blocks of the neighbouring tiles, which run at the same time (H100 kernel times,
  // with the same hint in tiers 4 and 4a: [8, 4096, 4096] over dim 1 257.6 -> 247.3 us in
  // float16, [4096, 4096] over dim 0 45.0 -> 42.8, [32, 1000, 14, 14] 23.4 -> 22.4; float32
  // within 1%).
#if defined(MT_HAVE_BULK_COPY)
  if (!Bwd && sizeof(P) == 16 && box_rows > 0) {
    // One thread copies the block's steps of the tile, box_rows at a time, with the bulk tensor
    // copy engine; every thread waits for them all (each reads slots another may have copied).
    __shared__ uint64_t staged;
    const unsigned bar = shared_address(&staged);
    if (threadIdx.x == 0) {
      mbarrier_init(bar);
      mbarrier_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      const int rows = int(std::clamp<int64_t>(axis - first, 0, seg));
      const int boxes = (rows + box_rows - 1) / box_rows;
      const unsigned box_bytes = unsigned(box_rows * TX * sizeof(P));
      mbarrier_expect_bytes(bar, unsigned(boxes) * box_bytes);
      const int c0 = int(tile) * TX * N, c2 = int(slab);
      for (int i = 0; i < boxes; ++i)
        tile_copy_3d(shared_address(sa) + unsigned(i) * box_bytes, &map_x, c0,
                     int(first) + i * box_rows, c2, bar);
    }
    mbarrier_wait(bar, 0);
  } else
#endif
  {  // cp.async: each thread copies the packs it reads
    const T* ga = a + first_offset;
    [[maybe_unused]] const T* gb = Bwd ? b + first_offset : nullptr;
    const unsigned stage_step = unsigned(stage_stride * sizeof(P));
    unsigned sa_at = shared_address(mine);
    [[maybe_unused]] const unsigned b_apart = unsigned((mine_b - mine) * sizeof(P));
#pragma unroll kUnroll
    for (int k = 0; k < count; ++k, ga += row_stride, sa_at += stage_step) {
      cp_async_to<sizeof(P), true>(sa_at, ga);
      if constexpr (Bwd) {
        cp_async_to<sizeof(P), true>(sa_at + b_apart, gb);
        gb += row_stride;
      }
    }
    cp_async_commit();
    cp_async_wait(0);
  }

  A coef[N];
  [[maybe_unused]] A m[N];  // forward: the column maxima, then the shifts (column_shifts)
  constexpr bool kFusable = !Bwd && column_fusable_exp<T, Log, fast_forward_exp<T>()>();
  [[maybe_unused]] bool fused = false;
  if constexpr (Bwd) {
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
#pragma unroll kUnroll
    for (int k = 0; k < count; ++k) {
      A y[N], dy[N];
      unpack<N>(load_whole(mine + k * stage_stride), y);
      unpack<N>(load_whole(mine_b + k * stage_stride), dy);
#pragma unroll
      for (int j = 0; j < N; ++j) coef[j] += bwd_term<Log>(y[j], dy[j]);
    }
    column_group_allreduce<N>(coef, SumOp(), scratch, landed, cs, 0, tx_log2);
  } else {
    // The max and the sum are two exchanges: one exchange of (max, sum) pairs measured slower
    // (each of the block's threads folds every pair with two exact exps).
    P mx;  // the max in the storage type (16-bit: two elements an instruction)
#pragma unroll
    for (int j = 0; j < N; ++j) mx.v[j] = T(-INFINITY);
#pragma unroll kUnroll
    for (int k = 0; k < count; ++k) mx = pack_max(mx, load_whole(mine + k * stage_stride));
    unpack<N>(mx, m);
    column_group_allreduce<N>(m, MaxOp(), scratch, landed, cs, 0, tx_log2);
    fused = column_shifts<T, kFusable>(m);
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
    with_column_shifts<kFusable>(fused, [&](auto fused_c) {
#pragma unroll kUnroll
      for (int k = 0; k < count; ++k) {
        A x[N];
        unpack<N>(load_whole(mine + k * stage_stride), x);
        column_exp_sum<T, Log, fast_forward_exp<T>(), decltype(fused_c)::value>(x, m, coef);
        if constexpr (column_keeps_exp<T, Log>())
          store_whole(mine + k * stage_stride, pack_of<T>(x));
      }
    });
    column_group_allreduce<N>(coef, SumOp(), scratch, landed, cs, 1, tx_log2);
    column_fwd_coefs<T, Log, kFusable>(fused, coef, m);
  }

  // Float32 and float64 softmax read back the exps the sum pass left: no shift to follow.
  with_column_shifts<kFusable && !column_keeps_exp<T, Log>()>(fused, [&](auto fused_c) {
    T* go = out + first_offset;
#pragma unroll kUnroll
    for (int k = 0; k < count; ++k, go += row_stride) {
      A x[N], dy[N], o[N];
      unpack<N>(load_whole(mine + k * stage_stride), x);
      if constexpr (Bwd) unpack<N>(load_whole(mine_b + k * stage_stride), dy);
      column_out<T, Log, Bwd, decltype(fused_c)::value>(x, dy, m, coef, o);
      store_global_whole(reinterpret_cast<P*>(go), pack_of<T>(o));
    }
  });
}

}  // namespace mt
