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
// ~256 threads (128 in 16-bit). Tier 4b (column_staged_tier.cuh) takes the groups whose
// tiles here would be narrower than a 128-byte line.
#pragma once

#include <algorithm>
#include <type_traits>

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/fast_divide.h"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"

namespace mt {

constexpr int kColumnMaxThreads = 256;
// Widest tile a clustered group may have (its inboxes grow with it: at most 32 KB).
constexpr int kColumnClusterMaxTx = 32;

// Packs a thread holds: 32 registers of values (forward: x; backward: y and dy), kept in their
// storage type (16-bit values converted at each use: half the registers of float copies). At 16
// float32 packs ptxas used 128 registers a thread and spilled in log_softmax (two blocks of 256
// threads an SM instead of four); 16-bit values held as float needed 88 at 4 packs. The float64
// forward takes 8 too, on an H200 (kernel times, 4 packs -> 8: [8, 150, 128, 128] 100.0 -> 86.5
// us, which 4 packs' narrower tiles sent to tier 4b; [16, 21, 256, 256] 102.7 -> 96.9, [64, 128,
// 56, 56] 115.4 -> 109.1), although 4 measured faster on an H100 (129.1 -> 122.0 us, 149.8 ->
// 139.9, 118.1 -> 111.2; perhaps its lower bandwidth needs fewer bytes in flight: not measured).
template <typename T, bool Bwd>
constexpr int column_max_packs() {
  return Bwd ? 4 : 8;
}

// A clustered group's exchanges of per-column partials (tiers 4a and 4b), one way, as the row
// tiers' (cluster_reduce.cuh): each block pushes its TX * N partials into every block's inbox
// with st.async, counted on the receiver's mbarrier, and folds the cs blocks' partials of its
// columns from its own inbox once they have all landed. A cluster barrier and every thread's
// reads of cs remote slots took ~30% of [8, 4096, 4096] float16 backward's stall samples (ncu,
// H200). Each exchange (the forward's max then sum, the backward's sum) has an inbox and an
// mbarrier of its own and runs once a kernel, so a block that has folded its last exchange
// receives nothing more and exits without waiting for its peers.
//
// The inboxes, [exchange][cs][TX * N], open the block's dynamic shared memory, so that their
// address is a constant: a pointer to them held through the kernel cost tier 4b's float16
// backward 11 registers and a block an SM. They take whole 128-byte lines, so that tier 4b's stage
// after them starts on one (kCopyLineBytes).
template <typename T, int N, bool Bwd>
__host__ __device__ inline int64_t column_inbox_bytes(int64_t cs, int64_t tx) {
  const int64_t bytes = (Bwd ? 1 : 2) * cs * tx * N * int64_t(sizeof(acc_t<T>));
  return cs > 1 ? (bytes + kCopyLineBytes - 1) / kCopyLineBytes * kCopyLineBytes : 0;
}

// Exchange `e` of `v` (the block's partials, the same in every ty) over the cs blocks of the
// cluster: thread (tx, ty) pushes them to blocks ty, ty + TY, ... The first exchange first waits
// for every block to have readied its mbarriers (cluster_mbarriers_init).
template <int N, typename A, typename Op>
__device__ __forceinline__ void column_cluster_allreduce(A (&v)[N], Op op, uint64_t (&landed)[2],
                                                         unsigned cs, int e, int tx_log2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cd = cluster_detail;
  extern __shared__ __align__(kCopyLineBytes) unsigned char column_inboxes[];
  const int tx = threadIdx.x & ((1 << tx_log2) - 1), ty = threadIdx.x >> tx_log2;
  const unsigned width = (1u << tx_log2) * N, TY = blockDim.x >> tx_log2;
  A* inbox = reinterpret_cast<A*>(column_inboxes) + e * cs * width;
  if (e == 0) cd::cluster_wait_all_started();
  const unsigned bar = shared_address(&landed[e]);
  if (threadIdx.x == 0) mbarrier_expect_bytes(bar, cs * width * unsigned(sizeof(A)));
  const unsigned me = cooperative_groups::this_cluster().block_rank();
  const unsigned mine = shared_address(inbox + me * width + tx * N);
  uint32_t words[N * sizeof(A) / 4];
  memcpy(words, v, sizeof(words));
  for (unsigned peer = ty; peer < cs; peer += TY)
    cd::push_words(cd::peer_addr(mine, peer), words, cd::peer_addr(bar, peer));
  mbarrier_wait(bar, 0);
  load_values<N>(inbox + tx * N, v);
  for (unsigned k = 1; k < cs; ++k) {
    A other[N];
    load_values<N>(inbox + k * width + tx * N, other);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = op(v[j], other[j]);
  }
#endif
}

// One column reduction over the group: registers were reduced by the caller; here the block
// (`scratch`: column_allreduce's) and, when the group spans a cluster of cs > 1, the cluster
// (exchange e).
template <int N, typename A, typename Op>
__device__ __forceinline__ void column_group_allreduce(A (&v)[N], Op op, A* scratch,
                                                       uint64_t (&landed)[2], unsigned cs, int e,
                                                       int tx_log2) {
  column_allreduce<N>(v, op, scratch, tx_log2);
  if (cs > 1) column_cluster_allreduce<N>(v, op, landed, cs, e, tx_log2);
}

// Whether the sum pass leaves exp(x - m) in x, to be stored back for the output pass.
template <typename T, bool Log>
constexpr bool column_keeps_exp() {
  return !Log && sizeof(T) >= 4;
}

// Whether a softmax's column exps (Fast: the hardware ex2) may take the fused form, one fma and the
// ex2, ex2(fma(x, log2 e, -b)) with b = m log2(e) rounded (FusedShiftedExp's), where a subtract, a
// multiply and the ex2 took ex2((x - m) log2 e). The rounding of b scales every exp of a column by
// one factor 2^d; the sum pass and the output pass (or the exps the sum pass leaves) take the same
// exps, so d cancels out of the outputs. The row tiers, whose partial sums meet under different
// shifts, fuse only while |m| <= 64; here log_softmax (log(sum) would keep d) and tier 4c (its
// sum and output passes take different shifts) decline it.
template <typename T, bool Log, bool Fast>
constexpr bool column_fusable_exp() {
  return Fast && !Log && sizeof(acc_t<T>) == 4;
}

// The largest column max |m| the fused form takes. 16-bit softmax also folds the sum into its
// output's shift, b + log2(sum) rounded (column_fwd_coef): while |m| <= 64 that is under 2^7 and
// off by at most 2^-18, as FwdOut's constant. float32 softmax (its output reads back the sum
// pass's exps) only needs b finite.
template <typename T>
constexpr float column_fused_max() {
  return sizeof(T) == 2 ? kFusedShiftMax : 0x1p126f;
}

// Turns a thread's column maxima m into the shifts its passes take: b = m log2(e) where Fusable
// and every |m| <= column_fused_max (-inf and NaN fail it), else m itself. Returns whether it
// took the fused form.
template <typename T, bool Fusable, int N, typename A>
__device__ __forceinline__ bool column_shifts(A (&m)[N]) {
  if constexpr (Fusable) {
    bool fused = true;
#pragma unroll
    for (int j = 0; j < N; ++j) fused &= fabsf(m[j]) <= column_fused_max<T>();
    if (fused) {
#pragma unroll
      for (int j = 0; j < N; ++j) m[j] *= kLog2e;
    }
    return fused;
  }
  return false;
}

// fn(std::integral_constant<bool, fused>()): a pass compiled for the shifts column_shifts left.
template <bool Fusable, typename Fn>
__device__ __forceinline__ void with_column_shifts(bool fused, Fn&& fn) {
  if constexpr (Fusable) {
    if (fused) return fn(std::true_type());
  }
  fn(std::false_type());
}

// The sum pass on one pack of N columns (the column tiers): adds exp(x - m) to `sum`, and in
// float32/64 softmax leaves it in x for the output (one exp an element; 16-bit values stay packed
// in their storage type and take a second, hardware exp). b: the shifts (column_shifts; m unless
// Fused). Fast: the hardware ex2 (fast_forward_exp), which tier 4a declines for float32: its
// kernels, at their 64 registers, spilled 8-24 bytes with it (H200 kernel times: [16, 21, 256,
// 256] 45.1 -> 47.5 us, [8, 150, 128, 128] 41.1 -> 42.8) where tiers 4b and 4c gained ([32, 1000,
// 14, 14] 27.0 -> 26.0, [4096, 4096] over dim 0 46.6 -> 46.0). For float64 Fast is
// exp_nonpositive, which tier 4a takes and 4b and 4c do not (float64_exp.cuh).
template <typename T, bool Log, bool Fast = fast_forward_exp<T>(), bool Fused = false, int N,
          typename A>
__device__ __forceinline__ void column_exp_sum(A (&x)[N], const A (&b)[N], A (&sum)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    A e;
    if constexpr (Fused)
      e = ex2_approx(fused_exp2_arg(x[j], b[j]));
    else
      e = ShiftedExp<Fast, A>(b[j])(x[j]);
    sum[j] += e;
    if constexpr (column_keeps_exp<T, Log>()) x[j] = e;
  }
}

// The forward's per-column constant from the column's sum s and shift b (column_shifts), as
// column_out takes it: fwd_coef, or for 16-bit softmax -log2(s) (FwdOut::constant: the output in
// one ex2), or under fused shifts b + log2(s), the output's own shift. b is -inf only where the
// column's max is (then NaN).
template <typename T, bool Log, bool Fused = false, typename A>
__device__ __forceinline__ A column_fwd_coef(A s, A b) {
  if constexpr (Fused && !column_keeps_exp<T, Log>())
    return b + lg2_approx(s);
  else
    return FwdOut<Log, sizeof(T) == 2, A>::constant(s, b);
}

// column_fwd_coef of every column of a thread, under the shifts column_shifts left: coef holds
// the reduced sums and leaves with the constants.
template <typename T, bool Log, bool Fusable, int N, typename A>
__device__ __forceinline__ void column_fwd_coefs(bool fused, A (&coef)[N], const A (&b)[N]) {
  with_column_shifts<Fusable>(fused, [&](auto fused_c) {
#pragma unroll
    for (int j = 0; j < N; ++j)
      coef[j] = column_fwd_coef<T, Log, decltype(fused_c)::value>(coef[j], b[j]);
  });
}

// The output of one pack (the column tiers): x as the sum pass left it, dy backward only, b the
// shifts (forward), coef the reduced sum (backward) or column_fwd_coef (forward). 16-bit softmax
// takes its exp again, fused with the product (FwdOut): a subtract, an fma and the ex2 an element,
// where the exp and a multiply took a subtract, two multiplies and the ex2; under fused shifts one
// fma and the ex2.
template <typename T, bool Log, bool Bwd, bool Fused = false, int N, typename A>
__device__ __forceinline__ void column_out(const A (&x)[N], const A (&dy)[N], const A (&b)[N],
                                           const A (&coef)[N], A (&o)[N]) {
  constexpr bool kFast = sizeof(T) == 2;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (Bwd)
      o[j] = bwd_out<Log, kFast>(x[j], dy[j], coef[j]);
    else if constexpr (column_keeps_exp<T, Log>())
      o[j] = x[j] * coef[j];
    else if constexpr (Fused)
      o[j] = ex2_approx(fused_exp2_arg(x[j], coef[j]));
    else
      o[j] = FwdOut<Log, kFast, A>::apply(x[j], b[j], coef[j]);
  }
}

// Blocks of 256 threads an SM the kernel is compiled for (its register cap: 4 -> 64, 3 -> 80).
// 16-bit kernels of at most 4 packs a thread (the backward's always) take 64 registers, not 80, so
// that 8 blocks of 128 threads share an SM instead of 6 (ncu, H200: [32, 4, 256, 256] float16 at
// 80 registers, occupancy limited by registers to 24 warps). Their forward drops the fused exps,
// which spilled 8 bytes at 64 (ptxas; no spill without). H200 kernel times, two rounds, 80 -> 64:
// [32, 4, 256, 256] float16 12.5 -> 11.5 us, bfloat16 12.5 -> 11.8 (with the fused exps and their
// spill 11.7 / 11.8); [32, 64, 3136] and [4, 96, 16384] within 1%, the backwards within the
// rounds' spread.
template <typename T, int R, bool Bwd>
constexpr int column_kernel_min_blocks() {
  return sizeof(T) == 2 && R > 4 && !Bwd ? 3 : 4;
}

// A column block's place (tiers 4a and 4b): its group's blocks, its rank in the group, and the
// group's outer index (slab) and tile along inner; multiplies, not divisions (fast_divide.h).
struct ColumnBlock {
  unsigned cs, rank, slab, tile;
};
__device__ __forceinline__ ColumnBlock column_block(FastDivisor tiles, FastDivisor blocks) {
  const unsigned group = blocks.quotient(blockIdx.x);
  const unsigned rank = blocks.remainder(blockIdx.x, group);
  const unsigned slab = tiles.quotient(group), tile = tiles.remainder(group, slab);
  return {blocks.divisor, rank, slab, tile};
}

// Tier 4a's work on a group once a thread's packs are in registers (v; backward: d too): the
// column reductions over the block (scratch) and the cluster of cs blocks, then the output of the
// thread's `live` steps, its first pack at element `offset` of `out`, the rest `stride` packs apart.
template <typename T, int N, int R, bool Log, bool Bwd, typename A>
__device__ __forceinline__ void column_group_finish(PackWords<T, N> (&v)[R],
                                                    PackWords<T, N> (&d)[Bwd ? R : 1], int live,
                                                    int TY, T* out, int64_t offset, int64_t stride,
                                                    A* scratch, uint64_t (&landed)[2], unsigned cs,
                                                    int tx_log2) {
  using P = Pack<T, N>;
  using W = PackWords<T, N>;
  // Per column; the N columns of a thread are independent chains.
  A coef[N];
  [[maybe_unused]] A m[N];  // forward: the column maxima, then the shifts (column_shifts)
  // (Not in 16-bit kernels compiled for 64 registers: there the fused exps spill.)
  constexpr bool kFusable = !Bwd && column_fusable_exp<T, Log, sizeof(T) == 2>() &&
                            !(sizeof(T) == 2 && column_kernel_min_blocks<T, R, Bwd>() == 4);
  [[maybe_unused]] bool fused = false;
  if constexpr (Bwd) {
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      A y[N], dy[N];
      unpack_words<T, N>(v[r], y);
      unpack_words<T, N>(d[r], dy);
#pragma unroll
      for (int j = 0; j < N; ++j) coef[j] += bwd_term<Log>(y[j], dy[j]);
    }
    column_group_allreduce<N>(coef, SumOp(), scratch, landed, cs, 0, tx_log2);
  } else {
    if constexpr (sizeof(T) == 2) {  // the max in the storage type, two elements at a time
      W mx = v[0];
#pragma unroll
      for (int r = 1; r < R; ++r) mx = pack_max_words<T, N>(mx, v[r]);
      unpack_words<T, N>(mx, m);
    } else {
      unpack_words<T, N>(v[0], m);
#pragma unroll
      for (int r = 1; r < R; ++r) {
        const P pk = from_words<T, N>(v[r]);
#pragma unroll
        for (int j = 0; j < N; ++j) m[j] = nan_max(m[j], A(pk.v[j]));
      }
    }
    column_group_allreduce<N>(m, MaxOp(), scratch, landed, cs, 0, tx_log2);
    fused = column_shifts<T, kFusable>(m);
#pragma unroll
    for (int j = 0; j < N; ++j) coef[j] = 0;
    with_column_shifts<kFusable>(fused, [&](auto fused_c) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        A x[N];
        if constexpr (sizeof(T) == 2 && N > 1) forget_words(v[r]);
        unpack_words<T, N>(v[r], x);
        // Fast: 16-bit's hardware ex2, float64's exp_nonpositive (float64_exp.cuh).
        column_exp_sum<T, Log, sizeof(T) != 4, decltype(fused_c)::value>(x, m, coef);
        if constexpr (column_keeps_exp<T, Log>()) v[r] = as_words(pack_of<T>(x));
      }
    });
    column_group_allreduce<N>(coef, SumOp(), scratch, landed, cs, 1, tx_log2);
    column_fwd_coefs<T, Log, kFusable>(fused, coef, m);
  }

  with_column_shifts<kFusable>(fused, [&](auto fused_c) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (r * TY < live) {
        A x[N], dy[N], o[N];
        if constexpr (sizeof(T) == 2 && N > 1) forget_words(v[r]);
        unpack_words<T, N>(v[r], x);
        if constexpr (Bwd) unpack_words<T, N>(d[r], dy);
        column_out<T, Log, Bwd, decltype(fused_c)::value>(x, dy, m, coef, o);
        store_global_whole(reinterpret_cast<P*>(out + offset) + r * stride, pack_of<T>(o));
      }
    }
  });
}

// a: x (forward) or y (backward); b: dy (backward). Packs of N elements: N divides inner and every
// pointer is aligned to a pack (the host picks N), so a pack is wholly inside the tensor or wholly
// past its end, and every access is one load or store (element-wise fallbacks for partial packs
// cost ptxas a register per element in flight: 128 registers a thread in 16-bit). `tiles` tiles
// of TX packs cover inner; block b works on group b / cs, segment b % cs (cs = 1 outside
// clusters). Registers: 64 a thread (four blocks an SM), 80 in the 16-bit forward past 4 packs
// (three: its conversions spilled ~100 bytes a thread at 64; column_kernel_min_blocks).
template <typename T, int N, int R, bool Log, bool Bwd>
__global__ void __launch_bounds__(kColumnMaxThreads, column_kernel_min_blocks<T, R, Bwd>())
    softmax_column_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                          int64_t axis, int64_t inner, FastDivisor tiles, int tx_log2,
                          FastDivisor blocks) {
  using A = acc_t<T>;
  // column_allreduce's scratch for a whole block (one row of TX per warp or per ty); the
  // cluster's mbarriers (its inboxes are the dynamic shared memory).
  __shared__ __align__(16) A scratch[kColumnMaxThreads * N];
  __shared__ uint64_t landed[2];
  const int TX = 1 << tx_log2, TY = int(blockDim.x) >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  const auto [cs, rank, slab, tile] = column_block(tiles, blocks);
  const int64_t first = int64_t(rank) * TY * R + ty;  // this thread's first step
  const int64_t col = (int64_t(tile) * TX + tx) * N;
  const int64_t base = int64_t(slab) * axis * inner;
  if (cs > 1) cluster_mbarriers_init(landed);

  using P = Pack<T, N>;
  using W = PackWords<T, N>;  // packs held as words (see PackWords)
  // Steps past the axis read as -inf (forward) or 0 (backward).
  const W fill_words = splat_words<T, N>(Bwd ? T(0.0f) : T(-INFINITY));
  // Pack r of this thread is r * stride packs past element `offset` of each tensor (addressed in
  // packs: in elements, the float32 and float64 kernels of 8 packs spilled 8-16 bytes).
  const int64_t offset = base + first * inner + col, stride = int64_t(TY) * inner / N;
  // Steps of this thread inside the axis, at most its R * TY (none for a pack past inner).
  const int live = col < inner ? int(std::clamp<int64_t>(axis - first, 0, int64_t(R) * TY)) : 0;
  // Loads ask L2 for the 256 bytes around them, as tier 4b's copies do (column_staged_tier.cuh).
  W v[R];
  [[maybe_unused]] W d[Bwd ? R : 1];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    v[r] = fill_words;
    if constexpr (Bwd) d[r] = fill_words;
    if (r * TY < live) {
      v[r] = load_global_words<true>(reinterpret_cast<const P*>(a + offset) + r * stride);
      if constexpr (Bwd)
        d[r] = load_global_words<true>(reinterpret_cast<const P*>(b + offset) + r * stride);
    }
    // Opaque from here on: nvcc otherwise splits the words into 16-bit pieces at the branch's
    // merge (one PRMT each, and 8-24 bytes of spill at 80 registers).
    forget_words(v[r]);
    if constexpr (Bwd) forget_words(d[r]);
  }

  column_group_finish<T, N, R, Log, Bwd>(v, d, live, TY, out, offset, stride, scratch, landed, cs,
                                         tx_log2);
}

// Tier 4a's one-block groups (cs = 1) over more than a round of blocks, forward (the host takes
// it for groups of R = 2 packs a thread: launch_column_prefetch): a grid of resident blocks, each
// looping over groups, whose threads copy their packs of the block's next group into shared
// memory (cp.async, two stages) before working on this one, so that a block's loads stay in
// flight through its reductions and stores, where the plain kernel's blocks load, then reduce,
// then store, and a second round waits to be launched. A thread reads back only the slots it
// filled, so the stages need no barrier.
template <typename T, int N, int R, bool Log>
__global__ void __launch_bounds__(kColumnMaxThreads, column_kernel_min_blocks<T, R, false>())
    softmax_column_prefetch_kernel(const T* __restrict__ x, T* __restrict__ out, int64_t axis,
                                   int64_t inner, FastDivisor tiles, int tx_log2,
                                   unsigned groups) {
  using A = acc_t<T>;
  using P = Pack<T, N>;
  using W = PackWords<T, N>;
  static_assert(sizeof(P) == 16, "16-byte packs only");
  __shared__ __align__(16) A scratch[kColumnMaxThreads * N];
  __shared__ uint64_t landed[2];  // (unused: no cluster)
  extern __shared__ __align__(kCopyLineBytes) unsigned char column_inboxes[];  // the stages
  const int TX = 1 << tx_log2, TY = int(blockDim.x) >> tx_log2;
  const int tx = threadIdx.x & (TX - 1), ty = threadIdx.x >> tx_log2;
  const int64_t stride = int64_t(TY) * inner / N;
  // Slot (stage, r) of this thread: [stage][r][thread] packs.
  const unsigned slots = shared_address(column_inboxes) + threadIdx.x * unsigned(sizeof(P));
  const unsigned slot_step = blockDim.x * unsigned(sizeof(P));
  // Group g: this thread's first pack and its steps inside the axis (at most R * TY).
  const auto place = [&](unsigned g, int64_t& offset, int& live) {
    const unsigned slab = tiles.quotient(g), tile = tiles.remainder(g, slab);
    const int64_t col = (int64_t(tile) * TX + tx) * N;
    offset = int64_t(slab) * axis * inner + int64_t(ty) * inner + col;
    live = col < inner ? int(std::clamp<int64_t>(axis - ty, 0, int64_t(R) * TY)) : 0;
  };
  // The copies of group g into stage `stage`, one batch (empty past the last group).
  const auto copy_group = [&](unsigned g, int stage) {
    if (g < groups) {
      int64_t offset;
      int live;
      place(g, offset, live);
      const P* src = reinterpret_cast<const P*>(x + offset);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r * TY < live)
          cp_async_to<16, true>(slots + (stage * R + r) * slot_step, src + r * stride);
    }
    cp_async_commit();
  };
  const W fill_words = splat_words<T, N>(T(-INFINITY));
  int stage = 0;
  copy_group(blockIdx.x, 0);
  for (unsigned g = blockIdx.x; g < groups; g += gridDim.x, stage ^= 1) {
    copy_group(g + gridDim.x, stage ^ 1);
    cp_async_wait(1);
    int64_t offset;
    int live;
    place(g, offset, live);
    W v[R], none[1];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      v[r] = r * TY < live ? as_words(reload_shared<T, N>(slots + (stage * R + r) * slot_step))
                           : fill_words;
      forget_words(v[r]);
    }
    column_group_finish<T, N, R, Log, false>(v, none, live, TY, out, offset, stride, scratch, landed,
                                             1u, tx_log2);
  }
}

}  // namespace mt
