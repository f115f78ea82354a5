// Tier 4a: softmax over a non-last dim (inner > 1), e.g. [64, 128, 56, 56] over dim 1, with each
// reduction group held in registers from its one read to its one write. No transpose.
//
// x is [outer][axis][inner]. A group is one outer index and a tile of TX packs (N consecutive
// inner columns: 16 bytes, fewer where inner or the pointers are not aligned to 16) over the whole
// axis. Thread (tx, ty) of a block of TX x TY owns pack tx of the tile at the R axis steps ty,
// ty + TY, ..., ty + (R - 1) * TY of its block's segment, and issues all R loads before any
// arithmetic: a warp reads TX packs of contiguous bytes per step, and every thread has R packs in
// flight. A long axis is split over the CS blocks of a
// cluster, block k taking steps [k * TY * R, (k + 1) * TY * R).
//
// Reductions, per column: a thread's R values (registers), the TY threads of the block
// (column_allreduce: shuffles among the ty of a warp, then shared memory), the CS blocks of the
// cluster (distributed shared memory). The max and the sum are separate reductions: two barriers,
// but no exp rescaling of partials.
//
// The host (softmax_cuda.cu) picks R, TX, TY and CS from the shape so that TY * R * CS covers the
// axis with little padding, TX >= 2 packs (a 32-byte sector of 16-byte packs), and blocks hold
// ~256 threads (128 in 16-bit forward). Tier 4b (column_staged_tier.cuh) takes the groups whose
// tiles here would be narrower than a 128-byte line.
#pragma once

#include "core/dtype.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kColumnMaxThreads = 256;
// Widest tile a clustered group may have (its slots in distributed shared memory).
constexpr int kColumnClusterMaxTx = 32;

// Packs a thread holds: 32 registers of values (forward: x; backward: y and dy), kept in their
// storage type (16-bit values converted at each use: half the registers of float copies). At 16
// float32 packs ptxas used 128 registers a thread and spilled in log_softmax (two blocks of 256
// threads an SM instead of four); 16-bit values held as float needed 88 at 4 packs.
template <bool Bwd>
constexpr int column_max_packs() {
  return Bwd ? 4 : 8;
}

// Combines each column's block result over the cluster: every block leaves its TX * N results in
// `slot`, and after a cluster barrier every thread folds the CS blocks' values of its columns.
template <int N, typename A, typename Op>
__device__ __forceinline__ void column_cluster_allreduce(A (&v)[N], Op op, A* slot, int tx, int ty) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  if (ty == 0) {
#pragma unroll
    for (int j = 0; j < N; ++j) slot[tx * N + j] = v[j];
  }
  cluster.sync();
  const unsigned cs = cluster.num_blocks();
  load_values<N>(cluster.map_shared_rank(slot, 0u) + tx * N, v);
  for (unsigned k = 1; k < cs; ++k) {
    A other[N];
    load_values<N>(cluster.map_shared_rank(slot, k) + tx * N, other);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = op(v[j], other[j]);
  }
#endif
}

// One column reduction over the group: registers were reduced by the caller; here the block
// (`scratch`: column_allreduce's) and, when the group spans a cluster, the cluster (`slot`).
template <int N, typename A, typename Op>
__device__ __forceinline__ void column_group_allreduce(A (&v)[N], Op op, A* scratch, A* slot,
                                                       int tx_log2, bool clustered) {
  column_allreduce<N>(v, op, scratch, tx_log2);
  if (clustered) {
    const int tx = threadIdx.x & ((1 << tx_log2) - 1), ty = threadIdx.x >> tx_log2;
    column_cluster_allreduce<N>(v, op, slot, tx, ty);
  }
}

// Whether the sum pass leaves exp(x - m) in x, to be stored back for the output pass.
template <typename T, bool Log>
constexpr bool column_keeps_exp() {
  return !Log && sizeof(T) >= 4;
}

// The sum pass on one pack of N columns (both column tiers): adds exp(x - m) to `sum`, and in
// float32/64 softmax leaves it in x for the output (one exp an element; 16-bit values stay packed
// in their storage type and take a second, hardware exp).
template <typename T, bool Log, int N, typename A>
__device__ __forceinline__ void column_exp_sum(A (&x)[N], const A (&m)[N], A (&sum)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const A e = ShiftedExp<sizeof(T) == 2, A>(m[j])(x[j]);
    sum[j] += e;
    if constexpr (column_keeps_exp<T, Log>()) x[j] = e;
  }
}

// The output of one pack (both column tiers): x as the sum pass left it, dy backward only, coef
// the reduced sum (backward) or fwd_coef (forward).
template <typename T, bool Log, bool Bwd, int N, typename A>
__device__ __forceinline__ void column_out(const A (&x)[N], const A (&dy)[N], const A (&m)[N],
                                           const A (&coef)[N], A (&o)[N]) {
  constexpr bool kFast = sizeof(T) == 2;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (Bwd)
      o[j] = bwd_out<Log, kFast>(x[j], dy[j], coef[j]);
    else if constexpr (Log)
      o[j] = x[j] - m[j] - coef[j];
    else if constexpr (column_keeps_exp<T, Log>())
      o[j] = x[j] * coef[j];
    else
      o[j] = ShiftedExp<kFast, A>(m[j])(x[j]) * coef[j];
  }
}

// a: x (forward) or y (backward); b: dy (backward). Packs of N elements: N divides inner and every
// pointer is aligned to a pack (the host picks N), so a pack is wholly inside the tensor or wholly
// past its end, and every access is one load or store (element-wise fallbacks for partial packs
// cost ptxas a register per element in flight: 128 registers a thread in 16-bit). `tiles` tiles
// of TX packs cover inner; block b works on group b / cs, segment b % cs (cs = 1 outside
// clusters). Registers: 64 a thread (four blocks an SM), 80 in 16-bit (three: its conversions
// spilled ~100 bytes a thread at 64).
template <typename T, int N, int R, bool Log, bool Bwd>
__global__ void __launch_bounds__(kColumnMaxThreads, sizeof(T) == 2 ? 3 : 4)
    softmax_column_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                          int64_t axis, int64_t inner, int64_t tiles, int tx_log2, int cs) {
  using A = acc_t<T>;
  // column_allreduce's scratch for a whole block (one row of TX per warp or per ty), and the
  // cluster's slots (max and sum apart, so the sum's writes never race the max's remote reads).
  __shared__ __align__(16) A scratch[kColumnMaxThreads * N];
  __shared__ __align__(16) A slots[2][kColumnClusterMaxTx * N];
  const int TX = 1 << tx_log2, TY = int(blockDim.x) >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  const int64_t group = blockIdx.x / unsigned(cs);
  const int64_t first = int64_t(blockIdx.x % unsigned(cs)) * TY * R + ty;  // this thread's first step
  const int64_t col = (group % tiles * TX + tx) * N;
  const int64_t base = group / tiles * axis * inner;
  const bool clustered = cs > 1;

  using P = Pack<T, N>;
  P fill;  // steps past the axis read as -inf (forward) or 0 (backward)
#pragma unroll
  for (int j = 0; j < N; ++j) fill.v[j] = Bwd ? T(0.0f) : T(-INFINITY);
  // Pack r of this thread is at offset + r * stride of each tensor.
  const int64_t offset = base + first * inner + col, stride = int64_t(TY) * inner;
  // Steps of this thread inside the axis (0 for a pack past inner).
  const int64_t valid = col < inner ? axis - first : 0;
  // Loads ask L2 for the 256 bytes around them, as tier 4b's copies do (column_staged_tier.cuh).
  P v[R];
  [[maybe_unused]] P d[Bwd ? R : 1];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const bool inside = int64_t(r) * TY < valid;
    v[r] = inside ? load_prefetching(reinterpret_cast<const P*>(a + offset + r * stride)) : fill;
    if constexpr (Bwd) d[r] = inside ? load_prefetching(reinterpret_cast<const P*>(b + offset + r * stride)) : fill;
  }

  // Per column; the N columns of a thread are independent chains.
  A coef[N];
  [[maybe_unused]] A m[N];
  if constexpr (Bwd) {
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      A y[N], dy[N];
      unpack<N>(v[r], y);
      unpack<N>(d[r], dy);
#pragma unroll
      for (int j = 0; j < N; ++j) coef[j] += bwd_term<Log>(y[j], dy[j]);
    }
    column_group_allreduce<N>(coef, SumOp(), scratch, slots[0], tx_log2, clustered);
  } else {
    if constexpr (sizeof(T) == 2) {  // the max in the storage type, two elements at a time
      Pack<T, N> mx = v[0];
#pragma unroll
      for (int r = 1; r < R; ++r) mx = pack_max(mx, v[r]);
      unpack<N>(mx, m);
    } else {
      unpack<N>(v[0], m);
#pragma unroll
      for (int r = 1; r < R; ++r) {
#pragma unroll
        for (int j = 0; j < N; ++j) m[j] = nan_max(m[j], A(v[r].v[j]));
      }
    }
    column_group_allreduce<N>(m, MaxOp(), scratch, slots[0], tx_log2, clustered);
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      A x[N];
      if constexpr (sizeof(T) == 2 && N > 1) forget_values(v[r]);
      unpack<N>(v[r], x);
      column_exp_sum<T, Log>(x, m, coef);
      if constexpr (column_keeps_exp<T, Log>()) v[r] = pack_of<T>(x);
    }
    column_group_allreduce<N>(coef, SumOp(), scratch, slots[1], tx_log2, clustered);
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = fwd_coef<Log>(coef[j], m[j]);
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (int64_t(r) * TY < valid) {
      A x[N], dy[N], o[N];
      if constexpr (sizeof(T) == 2 && N > 1) forget_values(v[r]);
      unpack<N>(v[r], x);
      if constexpr (Bwd) unpack<N>(d[r], dy);
      column_out<T, Log, Bwd>(x, dy, m, coef, o);
      store_whole(reinterpret_cast<P*>(out + offset + r * stride), pack_of<T>(o));
    }
  }
  if (clustered) cluster_exit_barrier();  // the other blocks may still read this one's slots
}

}  // namespace mt
