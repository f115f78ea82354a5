// Tiers 1, 2 and 3a (inner == 1): rows staged through shared memory with cp.async.
//
// A row belongs to a group of threads, which the RowGroup names:
//   kLanes    `lanes` threads of a warp (a power of two <= 32): rows up to ~1K elements, several
//             rows a warp, reductions by butterfly shuffles (tier 1);
//   kBlock    one block: rows up to 16K-64K elements (tier 2);
//   kCluster  the `cs` blocks of a thread-block cluster (sm_90), each owning a chunk of the row,
//             the block results combined through distributed shared memory: long rows (tier 3a).
// Every thread owns PACKS 16-byte packs of each row, at the same places in every row, and copies
// them into its own slots of a shared-memory ring (cp.async: no register holds data in flight;
// each copy asks L2 to fetch the 256 bytes around it on a miss, since the rest of the row's
// packs follow: H100 kernel times [2097152, 32] float16 100.2 -> 97.8 us in two runs, the other
// row cases within 2%).
// The forward of float32 and float64 (and of 16-bit types past 16 values a thread, see
// holds_row_in_ring) then reads the row from the ring on each pass (max, sum of exp, output; the
// max taking each pack as it lands), instead of holding it in registers, so a thread can own 32-64
// values without spilling; so does the backward outside the lanes tier (sum(y * dy) as each pack
// lands, then the output). The rest hold their values in registers, and a forward lane of those
// loads them straight from global memory, with no ring (loads_direct). Each element crosses HBM
// once in and once out. A forward row's statistics take one barrier: each warp shifts exp by its
// own max, and the warps' (max, sum) pairs are folded once across a warp's lanes
// (block_maxsum_one_barrier); a cluster's blocks then exchange theirs one way (cluster_reduce.cuh)
// and fold them the same way.
//
// What keeps HBM busy: every tier launches a block (a cluster) for every row group and lets the
// scheduler overlap them (measured faster than a persistent grid of the same kernel on an H100:
// [524288, 128] float32 89% -> 97% of copy). Clusters of blocks so large that one fits an SM
// (rows too long for 16 blocks of 512 threads) may be persistent instead, where
// launch_cluster_row_tier finds their ring worth it: they loop over rows, and a thread issues the
// copies of row i + stages - 1 into the ring before it reduces row i, so the next rows' loads
// are in flight during this row's reductions. A thread only reads the slots it filled itself, so
// the ring needs no barrier of its own. Rows that are not 16-byte aligned (vec == false) are read
// in the 16-byte packs of the aligned row a few elements before each (Shifted kernels,
// misaligned_rows_shifted), or else element by element. The compile-time plan (which kernels an
// op has, the packs a thread owns, the ring's bytes, register caps) is staged_row_plan.cuh.
#pragma once

#include "core/dtype.h"
#include "ops/common/async_copy.cuh"
#include "ops/common/reduce.cuh"
#include "ops/common/vector_pack.cuh"
#include "ops/softmax/cuda/cluster_reduce.cuh"
#include "ops/softmax/cuda/epilogue.cuh"
#include "ops/softmax/cuda/staged_row_plan.cuh"

namespace mt {

// Fwd: a = x, out = y. Bwd: a = y, b = dy, out = dx. `chunk`: the packs of a row each block owns
// (kCluster; >= all of them otherwise). `block_shape`: staged_block_shape. cols < 2^31.
// `Shifted`: misaligned rows, read as misaligned_rows_shifted describes (`vec` is then unused).
// `Full`: aligned rows whose every pack a thread owns (cols == group threads x PACKS x N: a block
// a row, the lanes of a row, or a held cluster's blocks), so that the owned tests, the padding of
// unowned packs and the element-by-element paths compile away (staged_row_kernel_for says where
// it runs). `Held`: aligned rows of a 16-bit forward cluster or block (Full), PACKS packs a
// thread held in registers (see kHeldPacks).
template <typename T, int PACKS, bool Log, bool Bwd, RowGroup G, bool Shifted = false,
          bool Full = false, bool Held = false>
__global__ void __launch_bounds__(G == RowGroup::kLanes ? kLanesTierThreads
                                  : Held               ? kHeldThreads
                                                       : kRowTierMaxThreads,
                                  row_kernel_min_blocks<T, Log, Bwd, G>())
    __maxnreg__((row_kernel_max_registers<T, Log, Bwd, G, Held, Full, PACKS, Shifted>()))
    softmax_staged_row_kernel(const T* __restrict__ a, const T* __restrict__ b,
                              T* __restrict__ out, int64_t rows, int64_t cols, int chunk,
                              int block_shape, int stages, bool vec) {
  using A = acc_t<T>;
  if constexpr (Shifted) vec = true;  // the packs of the aligned row `shift` elements before
  static_assert(!(Full && (Shifted || (G == RowGroup::kCluster && !Held))),
                "Full: aligned rows of a group");
  static_assert(!Held || ((G == RowGroup::kBlock ? has_held_blocks<T, Log, Bwd>()
                                                 : has_held_kernels<T, Log, Bwd>()) &&
                          G != RowGroup::kLanes && !Shifted && PACKS == kHeldPacks),
                "Held: aligned rows of a 16-bit forward block or cluster, a float32 one's block");
  // (Held kernels are launched for aligned rows only, see launch_cluster_row_tier: their
  // element-by-element paths compile away.)
  if constexpr (Full || Held) vec = true;
  const int nthreads = block_shape >> 8, lanes_log2 = block_shape & 0xff;  // staged_block_shape
  constexpr bool kFast = sizeof(T) == 2;                 // the 16-bit output's exps and ex2
  // The forward's exps of x: the hardware ex2 (float32 too); float64's exp_nonpositive in clusters
  // only (float64_exp.cuh).
  constexpr bool kFastExp = fast_forward_exp<T>() || (sizeof(T) == 8 && G == RowGroup::kCluster);
  constexpr int N = pack_size<T>();
  constexpr int K = PACKS * N;
  constexpr int kTensors = Bwd ? 2 : 1;
  // Forward of float32 and float64 (outside the lanes tier), and of 16-bit types past 16 values
  // a thread: the row is not copied into registers; each pass (max, sum, output) reads it from
  // the ring again and converts it again, so a thread holds any number of values without
  // spilling (32 floats a thread spilled at 1024 threads a block), at the price of a second exp
  // per element in 16-bit (float32 and float64 keep exp in their slot instead).
  constexpr bool kFromRing = !Held && holds_row_in_ring<T, Log, Bwd, PACKS, G>();
  using P = Pack<T, N>;
  // Only a cluster's rows loop, through a ring of several stages (its persistent launch); a lanes
  // or block group owns one row group, a block of them one pass through one stage (the launch
  // covers the rows), and says so to the compiler. The general loop's bookkeeping (stage
  // arithmetic, a switch over the copies still pending, loop-carried row indices) was a fifth of
  // the 476 instructions of a warp of [1024, 512] float16 rows (ncu) and held registers across the
  // row: without it most of these kernels take 10-30% fewer (H100 kernel times, one call: [1024,
  // 512] float32 3.85 -> 3.6 us, float16 3.25 -> 3.1; [1024, 1024] 5.2 -> 4.95, 4.1 -> 3.9;
  // [2097152, 32] float32 192.3 -> 182.7; float64 [1024, 2048] 16.0 -> 13.9; backward [524288,
  // 128] float16 136.6 -> 134.5; the large rows alike, float64 lanes within 0.7%).
  // Held clusters loop neither: their launch is one round of clusters, a cluster a row (with
  // the cluster index from %clusterid and the exchange readied after the first copies, 141 -> 56
  // instructions before the first copy; H200 kernel times, two rounds: [16, 262144] float16
  // 8.67-8.70 -> 8.22-8.29 us, [128, 32768] 7.81-7.87 -> 7.46-7.55, [2, 65536] 4.03-4.10 ->
  // 3.78; the ring's clusters gained 0-10%, e.g. [16, 262144] float32 16.2-17.2 -> 15.5-15.6).
  constexpr bool kLoops = G == RowGroup::kCluster && !Held;
  if constexpr (!kLoops) stages = 1;
  constexpr bool kDirect = loads_direct<T, Log, Bwd, PACKS, G, Held, Full>();
  // (The direct loads of dy cover aligned rows and the element-by-element path, not a Shifted
  // row's last pack: the 16-bit backward's lanes take no Shifted kernel.)
  static_assert(!(kDirect && Bwd && Shifted), "direct backward loads: no Shifted kernel");
  // Direct loads ask L2 for the 256 bytes around each miss (load_global_words' Prefetch) in
  // blocks, not in lanes, whose warps load whole rows at once themselves. H200 kernel times, two
  // rounds, hinted -> plain lanes: [2097152, 32] float16 65.60 / 65.69 -> 64.96 / 64.99 us,
  // bfloat16 65.79 -> 65.15 / 65.02, float32 127.58 -> 126.88 / 126.85; [262144, 128] float16
  // 34.24 / 34.43 -> 34.11 / 33.86, bfloat16 34.24 / 34.34 -> 33.73 / 33.82; [67108, 1000] 67.07
  // / 67.23 -> 66.53 / 66.78; [131072, 64] float32 18.37 -> 18.08 / 18.21; backward [131072, 64]
  // float16 15.17 / 15.04 -> 14.85 / 14.69; [524288, 128] float16 65.22 / 64.86 -> 65.57 / 65.73
  // (an earlier call, 66.14 / 65.95 -> 65.86 / 65.70), bfloat16 66.40 / 66.05 -> 65.63 / 65.76;
  // rows of a few MiB within 1%. The held blocks' [1024, 2048] float32 lost 1.7% unhinted.
  constexpr bool kPrefetchDirect = G != RowGroup::kLanes;
  // The 16-bit backward's Full lanes keep y and dy as their 16-bit words and convert them in
  // each of the two passes (the sum of the terms, the output), instead of holding both as floats
  // across the row's sum: a pack of each costs 4 registers, its floats 8 (forget_words keeps the
  // compiler from carrying the first pass's conversions over). H200 kernel times, two rounds,
  // floats -> words: [2097152, 32] float16 96.3 -> 95.6 us, [524288, 128] 97.0 -> 96.1, bfloat16
  // 96.5 -> 95.6; [65536, 32] 5.46 -> 5.15; [1024, 512] 2.82 -> 2.62 (two packs). Only the Full
  // kernels: a misaligned row's packs loaded element by element into words ran [262144, 100]
  // 67.5 -> 81.5.
  constexpr bool kBwdWords = Bwd && kDirect && Full;
  // 16-bit lanes held in registers, aligned-row kernels (lanes_take_words): every row's packs
  // land as words (a misaligned row's element by element), the max is taken on the words, and an
  // aligned row's stores go through one pointer (see the loads and the stores below).
  constexpr bool kWords =
      G == RowGroup::kLanes && kDirect && !Bwd && lanes_take_words<T, PACKS, Full, Shifted>();
  // Lanes held in registers, aligned-row kernels (kWords, and float32's one and two packs):
  // `mine` kept in a register and an aligned row's stores through one pointer.
  constexpr bool kLaneStores =
      G == RowGroup::kLanes && kDirect && !Shifted && (sizeof(T) == 4 || kWords);
  // A lanes forward's aligned-row kernels (registers or ring): the owned packs from one count.
  constexpr bool kLaneCount = G == RowGroup::kLanes && !Bwd && !Shifted && sizeof(T) <= 4;
  extern __shared__ __align__(kCopyLineBytes) unsigned char smem_raw[];  // the ring
  P* ring = reinterpret_cast<P*>(smem_raw);
  __shared__ MaxSum<A> partials[64];  // block_maxsum_one_barrier, block_allreduce_one_barrier
  __shared__ ClusterSlots<MaxSum<A>> slots;
  ClusterRound round;
  int red_parity = 0;

  // This thread owns the packs at columns col0 + p * step (p < PACKS) of rows group,
  // group + ngroups, ...; `lead` is the row of the first group of its warp, which decides when
  // the warp stops (every lane must reach every shuffle).
  int col0, step;
  int64_t group, lead, ngroups;
  const int lanes = 1 << lanes_log2;
  int first = 0;  // the block's first pack
  if constexpr (G == RowGroup::kLanes) {
    const int per_block = nthreads >> lanes_log2;
    col0 = (threadIdx.x & (lanes - 1)) * N;
    step = lanes * N;
    group = int64_t(blockIdx.x) * per_block + (threadIdx.x >> lanes_log2);
    lead = int64_t(blockIdx.x) * per_block + ((threadIdx.x >> 5) << (5 - lanes_log2));
    ngroups = int64_t(gridDim.x) * per_block;
  } else {
    unsigned rank = 0, count = gridDim.x;
    group = lead = blockIdx.x;
    if constexpr (G == RowGroup::kCluster) {
      unsigned cs;
      rank = cluster_rank_and_size(cs);
      if constexpr (Held) {
        group = lead = blockIdx.y;  // one round of clusters, a row each (staged_block_shape)
        count = 1;
      } else {
        group = lead = cluster_index_and_count(count);
      }
    }
    first = int(rank) * chunk;
    col0 = (first + int(threadIdx.x)) * N;
    step = nthreads * N;
    ngroups = count;
  }
  // Which of this thread's packs lie in the block's part of the row (the same in every row).
  const int col_end = int(min(cols, int64_t(first + chunk) * N));
  unsigned owned = Full ? (1u << PACKS) - 1 : 0u;
  if constexpr (kLaneCount && !Full && PACKS >= 4) {
    // A lane's packs lie step = 2^(lanes_log2 + log2 N) elements apart from col0, so it owns the
    // first ceil((col_end - col0) / step) of them: seven instructions, where testing pack by pack
    // took a compare, a select and a merge each (~20 for four packs, ~40 for eight; fewer at two).
    constexpr int kLog2N = N == 8 ? 3 : N == 4 ? 2 : 1;
    const int n = (col_end - col0 + step - 1) >> (lanes_log2 + kLog2N);
    owned = (1u << min(max(n, 0), PACKS)) - 1u;
  } else if constexpr (!Full) {
#pragma unroll
    for (int p = 0; p < PACKS; ++p) owned |= (col0 + p * step < col_end ? 1u : 0u) << p;
  }
  // A held thread's packs lie at growing columns, so those it owns come first: pack p where
  // p * step < held_room, one register against a uniform value. The non-Full held kernel's
  // copies and stores test this (with the bits of `owned` it spilled 8 bytes at 80 registers and
  // took 17 SASS instructions more).
  [[maybe_unused]] const int held_room = col_end - col0;
  const auto held_owns = [&](int p, int room) { return Full || p * step < room; };
  // float64's forward clusters (kUniformOwned): a warp whose threads all own every pack
  // copies and passes over them with no owned test, which cost four or five instructions a pack
  // and pass (ncu: ~9 of the ~95 instructions an element of [8192, 50304], in kernels bound by
  // the instructions they issue); the other warps, and every other kernel, test each pack.
  constexpr bool kUniformOwned =
      kFromRing && !Bwd && sizeof(T) == 8 && G == RowGroup::kCluster && !Shifted;
  const bool all_owned =
      kUniformOwned && __all_sync(0xffffffffu, owned == (1u << PACKS) - 1u);
  // Shifted: the row's shift (its elements from the 16-byte boundary before it), the packs of
  // the shifted row this thread owns, whether pack p reaches past the row's end (past_end) and
  // whether it holds elements outside the row at all (partial: its first or last pack; columns
  // are counted from the boundary, the row at [shift, shift + cols)).
  const auto shift_of = [&](int64_t row) {
    return int(reinterpret_cast<uintptr_t>(a + row * cols) / sizeof(T) % N);
  };
  const auto owned_shifted = [&](int sh) {
    const int64_t end = G == RowGroup::kCluster ? min(sh + cols, int64_t(first + chunk) * N)
                                                : sh + cols;
    unsigned m = 0;
#pragma unroll
    for (int p = 0; p < PACKS; ++p) m |= (col0 + p * step < end ? 1u : 0u) << p;
    return m;
  };
  const auto past_end = [&](int p, int sh) { return col0 + p * step + N > sh + cols; };
  const auto partial = [&](int p, int sh) { return col0 + p * step < sh || past_end(p, sh); };
  const auto inside = [&](int c, int sh) { return c >= sh && c < sh + cols; };
  int row_shift = 0;  // Shifted: the shift of the row being reduced
  // Pads the values of pack p outside the row (Shifted): `v` unpacked (A) or a ring pack's (T).
  const auto pad_outside = [&](int p, auto& v, auto fill) {
    if (partial(p, row_shift)) {
#pragma unroll
      for (int j = 0; j < N; ++j)
        if (!inside(col0 + p * step + j, row_shift)) v[j] = fill;
    }
  };
  // Stores pack p of a row's output `ro` (Shifted: the shifted row's, element by element where
  // it holds elements outside the row).
  auto store_out = [&](T* ro, int p, const A (&o)[N]) {
    if constexpr (Shifted) {
      const int c = col0 + p * step;
      if (!partial(p, row_shift)) {
        store_global_whole(reinterpret_cast<P*>(ro + c), pack_of<T>(o));
      } else {
#pragma unroll
        for (int j = 0; j < N; ++j)
          if (inside(c + j, row_shift)) ro[c + j] = T(o[j]);
      }
    } else {
      store_row_pack<N>(ro, col0 + p * step, int(cols), vec, o);
    }
  };
  // Shifted: pack p of row `r` (the shifted row) element by element, outside the row `fill`:
  // for the last row's last pack, whose 16 bytes may reach past the tensor.
  const auto load_inside = [&](const T* r, int p, int sh, T fill) {
    P pk;
    const int c = col0 + p * step;
#pragma unroll
    for (int j = 0; j < N; ++j) pk.v[j] = inside(c + j, sh) ? r[c + j] : fill;
    return pk;
  };

  auto slot = [&](int stage, int tensor, int p) {
    return ring + ((stage * kTensors + tensor) * PACKS + p) * nthreads + threadIdx.x;
  };
  // The same slot as a shared address, from one computed once. The 16-bit passes that re-read
  // the ring take these (kSlotAddresses): from `slot`'s generic pointers the compiler rebuilt the
  // shared window's base for every pack of every pass (five instructions a pack, ~40 in a
  // cluster kernel), and it redid the row's 64-bit output offset for every pack stored
  // (held_pointer below). H200 kernel times, two rounds: float16 [8192, 50304] 427.5 -> 413 us,
  // [2048, 151936] 357-359 -> 339, [64, 152064] 17.1 -> 16.3-17.1, [16, 262144] 9.6-9.7 -> 9.4;
  // the rest within noise. float32 keeps the pointers: there the kernels took 1-3 registers
  // more, and where that cost a block an SM they lost ([2048, 151936] 613 -> 653 us, [64,
  // 152064] 24.5 -> 27.7). So does float64 outside its clusters: with slot addresses its lanes
  // and blocks lost ([2097152, 32] 255 -> 267-269 us, [1024, 10240] 49.2-49.3 -> 50.4-51.9,
  // [1024, 4096] 20.8-21.1 -> 21.2-22.3), while its clusters, held at 56 registers
  // (row_kernel_max_registers), gained: two rounds, [8192, 50304] 2,054 -> 1,969-1,971,
  // [4096, 32000] 594-596 -> 569-572, [2048, 32768] 305-308 -> 294, [2048, 151936] 2,047-2,058 ->
  // 1,959-1,962 (its persistent clusters), [4096, 50257] 1,153-1,154 -> 1,094-1,101; [64,
  // 152064] and [16, 262144] (tier 3d) and the backward alike. The packs held in registers keep
  // `slot` (plain loads, which the compiler may schedule). The float32 lanes forward that
  // re-reads the ring (log_softmax's four and eight packs; softmax's were measured here before
  // they moved to registers) takes slot addresses too: from the generic pointers
  // ptxas rebuilt the window's base for every pack and pass (sm_90, with the other changes of
  // their commit: eight packs 44 -> 32 registers not Full, 30 -> 32 Full; four packs 32 -> 31,
  // 22 -> 24; none past 32. H200 kernel times with those changes, two rounds: [524288, 128] 129.2
  // / 129.3 -> 128.6 / 128.4 us, [67108, 1000] 131.4 / 130.8 -> 130.4 / 130.6).
  constexpr bool kSlotAddresses = sizeof(T) == 2 || (sizeof(T) == 8 && G == RowGroup::kCluster) ||
                                  (sizeof(T) == 4 && G == RowGroup::kLanes && !Bwd);
  unsigned ring_at = shared_address(smem_raw) + threadIdx.x * 16u;
  // (kLaneCount: held opaque, so that the packs' tests do not each rebuild the shared window's
  // base, four instructions a pack and pass.)
  if constexpr (kLaneCount && kFromRing) asm("" : "+r"(ring_at));
  // A pack's slots.
  const unsigned ring_pack_bytes = kSlotAddresses ? unsigned(nthreads) * 16u : 0u;
  auto slot_at = [&](int stage, int tensor, int p) {
    return ring_at + unsigned((stage * kTensors + tensor) * PACKS + p) * ring_pack_bytes;
  };
  // A slot for the passes that re-read the ring, and a store to one: a shared address or a
  // generic pointer (kSlotAddresses).
  auto ring_slot = [&](int stage, int tensor, int p) {
    if constexpr (kSlotAddresses)
      return slot_at(stage, tensor, p);
    else
      return slot(stage, tensor, p);
  };
  auto ring_store = [&](auto s, const P& pk) {
    if constexpr (kSlotAddresses)
      store_shared(s, pk);
    else
      store_whole(s, pk);
  };
  // The shared address of stage `stage`'s first slot, and the bytes from one pack's slots to the
  // next. (Without slot addresses, the latter is computed where the copies start, as before
  // slot_at: computed at the top, float32's kernels came out rescheduled.)
  const auto pack_bytes_here = [&] {
    return kSlotAddresses ? ring_pack_bytes : unsigned(nthreads) * 16u;
  };
  auto stage_at = [&](int stage) {
    if constexpr (kSlotAddresses)
      return slot_at(stage, 0, 0);
    else
      return shared_address(slot(stage, 0, 0));
  };
  // A forward that re-reads the ring takes each pack as it lands (the copies of each pack are a
  // batch of their own) while the rest are on their way, instead of waiting for the whole row:
  // its max pass (H100 kernel times: [2048, 151936] float32 929 -> 901 us, [8192, 50304] float64
  // 2798 -> 2658). Packs batched so with a single ring stage only (every forward launch but a
  // forced persistent one).
  // A block's or cluster's thread that holds its packs in registers finds -inf in the slots of
  // the packs it does not own (stored where the copies start), so that it takes every slot as it
  // is: one store for such a pack, not a move of -inf into each of its values' registers (which
  // the compiler issued for every pack, owned or not: 16 moves a thread of 16-bit rows). With
  // the lanes' exps shifted by exp_shift and row_stats' 16-bit fold below, H200 kernel times, two
  // rounds: float16 [1024, 2048] 4.5 -> 4.3 us, [1024, 4096] 6.3 -> 6.0-6.1, [1024, 8192]
  // 11.2-11.3 -> 10.8, [1024, 10240] 14.0-14.1 -> 13.2-13.4, [8, 131072] 4.7-4.8 -> 4.6; bfloat16
  // alike; [8192, 50304] (a ring cluster: the fold only) 414 -> 410; the rest within 1%.
  constexpr bool kPadsSlots = !kFromRing && !kDirect && G != RowGroup::kLanes;
  const auto pad_slot = [&](int stage, int p) {
    store_whole(slot(stage, 0, p), from_words<T, N>(splat_words<T, N>(T(-INFINITY))));
  };
  const bool pack_batches = kFromRing && stages == 1;
  // Starts the copies of iteration `it`'s row into ring stage `stage`: one batch (maybe empty),
  // or a batch a pack (pack_batches).
  auto prefetch = [&](int64_t it, int stage) {
    const int64_t row = group + it * ngroups;
    if (Shifted && row < rows) {
      const int sh = shift_of(row);
      const unsigned own = owned_shifted(sh);
      const T* ra = a + row * cols - sh;
      const T* rb = Bwd ? b + row * cols - sh : nullptr;
      const bool last_row = row == rows - 1;
      const unsigned dst = stage_at(stage), pack_bytes = pack_bytes_here();
      constexpr float kPad = Bwd ? 0.0f : -INFINITY;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        if (own >> p & 1u) {
          if (last_row && past_end(p, sh)) {
            store_whole(slot(stage, 0, p), load_inside(ra, p, sh, T(kPad)));
            if constexpr (Bwd) store_whole(slot(stage, 1, p), load_inside(rb, p, sh, T(kPad)));
          } else {
            cp_async_to<16, true>(dst + p * pack_bytes, ra + col0 + p * step);
            if constexpr (Bwd)
              cp_async_to<16, true>(dst + (PACKS + p) * pack_bytes, rb + col0 + p * step);
          }
        } else if constexpr (kPadsSlots) {
          pad_slot(stage, p);
        }
        if (pack_batches && p + 1 < PACKS) cp_async_commit();
      }
    } else if (vec && row < rows) {
      const T* ra = a + row * cols + col0;
      const T* rb = Bwd ? b + row * cols + col0 : nullptr;
      // The first slot, stepped a pack's slots at a time.
      unsigned dst = stage_at(stage), pack_bytes = pack_bytes_here();
      // kLaneCount: the row's address and the first slot formed once, held opaque (each pack's
      // copy, under its owned test, rebuilt a + row * cols in 64 bits and the shared window's
      // base: ~20 instructions a pack).
      if constexpr (kLaneCount) {
        ra = held_pointer(ra);
        asm("" : "+r"(dst));
      }
      if (all_owned) {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          cp_async_to<16, true>(dst + p * pack_bytes, ra + p * step);
          if (pack_batches && p + 1 < PACKS) cp_async_commit();
        }
        cp_async_commit();
        return;
      }
      if constexpr (Held && !Full) {
        // Predicated copies, their addresses stepped as the Full kernel's (under a branch a pack
        // the compiler rebuilt each from the kernel's parameters: 28 SASS instructions more),
        // then the -inf padding, in threads whose last pack is not their own (held_room: those
        // not owned are the last).
#pragma unroll
        for (int p = 0; p < PACKS; ++p)
          cp_async_if(held_owns(p, held_room), dst + p * pack_bytes, ra + p * step);
        if (!held_owns(PACKS - 1, held_room)) {
          const P pad = from_words<T, N>(splat_words<T, N>(T(-INFINITY)));
#pragma unroll
          for (int p = 0; p < PACKS; ++p)
            if (!held_owns(p, held_room)) store_shared(dst + p * pack_bytes, pad);
        }
      } else {
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          if (owned >> p & 1u) {
            cp_async_to<16, true>(dst + p * pack_bytes, ra + p * step);
            if constexpr (Bwd) cp_async_to<16, true>(dst + (PACKS + p) * pack_bytes, rb + p * step);
          } else if constexpr (kPadsSlots) {
            pad_slot(stage, p);
          }
          if (pack_batches && p + 1 < PACKS) cp_async_commit();
        }
      }
    } else if (kFromRing && row < rows) {
      // A misaligned row goes through the ring too, element by element (and not ahead of time:
      // these loads complete before the thread goes on). Past the end: -inf, which adds nothing.
      // (The backward's padding is 0: it adds nothing to sum(y * dy) or sum(dy).)
      constexpr float kPad = Bwd ? 0.0f : -INFINITY;
      const T* ra = a + row * cols;
#pragma unroll
      for (int p = 0; p < PACKS; ++p) {
        if (owned >> p & 1u) {
          const int col = col0 + p * step;
          P pk;
#pragma unroll
          for (int j = 0; j < N; ++j) pk.v[j] = col + j < cols ? ra[col + j] : T(kPad);
          store_whole(slot(stage, 0, p), pk);
          if constexpr (Bwd) {
            const T* rb = b + row * cols;
#pragma unroll
            for (int j = 0; j < N; ++j) pk.v[j] = col + j < cols ? rb[col + j] : T(kPad);
            store_whole(slot(stage, 1, p), pk);
          }
        }
      }
      if (pack_batches) {  // as many batches as the vector path commits (empty ones)
#pragma unroll
        for (int p = 0; p + 1 < PACKS; ++p) cp_async_commit();
      }
    } else if (pack_batches) {
#pragma unroll
      for (int p = 0; p + 1 < PACKS; ++p) cp_async_commit();
    }
    cp_async_commit();
  };

  // The group's sum of one value per thread (the backward's): shuffles within the lanes; a
  // block's warps meet in shared memory after a single barrier.
  auto group_sum = [&](A v) {
    if constexpr (G == RowGroup::kLanes)
      return warp_allreduce(v, SumOp(), lanes);
    else
      return block_allreduce_one_barrier(v, SumOp(), A(0), reinterpret_cast<A*>(partials),
                                         red_parity);
  };
  // The forward shifts exp by the max of a row's lanes, or of a block's warp: shuffles only.
  auto shift_reduce = [&](auto v, auto op) {
    return warp_allreduce(v, op, G == RowGroup::kLanes ? lanes : 32);
  };
  // From a thread's shift m and its shift group's sum s of exp(x - m): the row's (max, sum), a
  // block's warps meeting after one barrier (not one for the max and one for the sum), a
  // cluster's blocks through distributed shared memory. Gives the constant the output needs
  // (fwd_coef) and the factor from exp(x - m) to the output; `m` becomes the row's max.
  // 16-bit outputs fold the warps' pairs and rescale on the hardware ex2 (elem_exp's Fast: ~2
  // ulp of float, against the output's rounding of 2^-11 or coarser), not the accurate expf's
  // ten instructions. (1 / s by the hardware reciprocal too spilled the 16-bit blocks at their 32
  // registers, and took wide clusters from 52 to 60.) float64 folds and rescales on
  // exp_nonpositive (the differences from the larger max are <= 0; within 1 ulp), not exp()'s
  // ~40 instructions and branch: three exps a thread a row, in kernels that are issue-bound.
  constexpr bool kF64Fold = sizeof(A) == 8;
  auto row_stats = [&](A& m, A s, A& coef, A& scale) {
    if constexpr (G == RowGroup::kLanes &&
                  (sizeof(T) == 4 || lanes_take_words<T, PACKS, Full, Shifted>() ||
                   (sizeof(T) == 2 && Shifted))) {
      // 16- and 32-bit lanes: a row's lanes are its one shift group, so their pair is the row's
      // and the factor from exp(x - m) to the output is coef itself (the test m == st.m below
      // fails only for a NaN m, whose coef is NaN too: five instructions, float32's accurate exp
      // thirteen), and 1 / s is the hardware reciprocal (fwd_coef's Fast: one instruction, not
      // the rounded division's eight and its slow path's call). Not float64 lanes, nor the 16-bit
      // kernels of one or two packs that test their packs (lanes_take_words): with this alone
      // those lost 2.6-4% in bfloat16 on long grids (H200 kernel times, two rounds: [524288, 128]
      // 67.1 / 66.1 -> 68.7 / 69.2 us, [2097152, 32] 65.9 / 66.5 -> 68.9 / 68.9, [262144, 128]
      // 34.3 / 34.1 -> 35.6 / 35.4; float16 within 1%): ncu, [524288, 128] bfloat16: 40 -> 41
      // registers, six blocks an SM -> five, warps active 60 -> 49%, 64.7 -> 66.3 us.
      coef = fwd_coef<Log, true>(s, m);
      scale = coef;
      return;
    }
    MaxSum<A> st{m, s};
    if constexpr (G != RowGroup::kLanes)
      st = block_maxsum_one_barrier<kFast || kF64Fold>(st, partials, red_parity);
    if constexpr (G == RowGroup::kCluster)
      st = cluster_allreduce<kF64Fold>(st, MaxSumOp(), maxsum_identity<A>(), slots, round);
    coef = fwd_coef<Log>(st.s, st.m);
    scale = m == st.m ? coef : coef * elem_exp<kFast || kF64Fold>(m - st.m);
    m = st.m;
  };
  // fn(p, ring_slot of tensor 0) for each of the packs in `mine` of a ring stage.
  auto each_ring_pack = [&](int stage, unsigned mine, auto&& fn) {
    if (all_owned && mine != 0u) {  // mine == owned: every pack (kUniformOwned)
#pragma unroll
      for (int p = 0; p < PACKS; ++p) fn(p, ring_slot(stage, 0, p));
      return;
    }
#pragma unroll
    for (int p = 0; p < PACKS; ++p)
      if (mine >> p & 1u) fn(p, ring_slot(stage, 0, p));
  };
  // The same for a row's first pass: each pack once its batch has landed.
  // (Shifted: the row's first and last packs padded in the ring, for every pass.)
  auto each_landed_ring_pack = [&](int stage, unsigned mine, auto&& fn) {
    each_ring_pack(stage, mine, [&](int p, auto s) {
      if (pack_batches) cp_async_wait(PACKS - 1 - p);
      if constexpr (Shifted) {
        if (partial(p, row_shift)) {  // only a row's end packs are rewritten in the ring
          constexpr float kPad = Bwd ? 0.0f : -INFINITY;
#pragma unroll
          for (int t = 0; t < kTensors; ++t) {
            P pk = reload_shared<T, N>(ring_slot(stage, t, p));
            pad_outside(p, pk.v, T(kPad));
            ring_store(ring_slot(stage, t, p), pk);
          }
        }
      }
      fn(p, s);
    });
  };
  // The backward's sum(y * dy) (log_softmax: sum(dy)) over the row, from a thread's part `t`.
  auto row_sum = [&](A t) {
    t = group_sum(t);
    if constexpr (G == RowGroup::kCluster)
      t = cluster_allreduce(MaxSum<A>{A(0), t}, SumOfSOp(), MaxSum<A>{A(0), A(0)}, slots, round).s;
    return t;
  };
  // The backward of one row from its ring stage (kFromRing): the sum of its terms, each pack as
  // it lands, then the output.
  auto ring_row_backward = [&](int stage, unsigned mine, T* ro) {
    A t = 0;
    each_landed_ring_pack(stage, mine, [&](int p, auto s) {
      A dy[N];
      unpack<N>(reload_shared<T, N>(ring_slot(stage, 1, p)), dy);
      if constexpr (!Log) {
        A y[N];
        unpack<N>(reload_shared<T, N>(s), y);
#pragma unroll
        for (int j = 0; j < N; ++j) dy[j] = bwd_term<Log>(y[j], dy[j]);
      }
      t += tree_reduce(dy, SumOp());
    });
    t = row_sum(t);
    each_ring_pack(stage, mine, [&](int p, auto s) {
      A y[N], dy[N], o[N];
      unpack<N>(reload_shared<T, N>(s), y);
      unpack<N>(reload_shared<T, N>(ring_slot(stage, 1, p)), dy);
#pragma unroll
      for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, kFast>(y[j], dy[j], t);
      store_out(ro, p, o);
    });
  };
  // The forward of one row from its ring stage (kFromRing): three passes over the stage.
  auto ring_row_forward = [&](int stage, unsigned mine, T* ro) {
    // float32 and float64 softmax write exp(x - m) back over x in their own slot, so the output
    // pass reads it instead of computing the (accurate, 8-instruction or dearer) exp again;
    // 16-bit types cannot hold it without a second rounding, and their exp is two instructions.
    constexpr bool kKeepExp = !Log && sizeof(T) >= 4;
    A m, st = 0;
    // Pass 1, the max (of each pack as it lands): 16-bit packs by their element-wise max in their
    // own type (two values an instruction, exact), converted once at the end. Pass 2, the sum of
    // exp(x - m), 16-bit softmax rows on the fused exp where it is exact enough (with_shifted_exp).
    // 16-bit rows took max and sum in one online pass before (a conversion, a max, a subtract, a
    // multiply and an ex2 an element, and a rescale a pack: ncu on [2048, 50304] float16 counted 64
    // instructions a pack there, 31% of the kernel's, in a kernel that kept 83% of the issue slots
    // busy; 20 now, and the sum pass 40). With the output's folded shift (with_fwd_out), H200
    // kernel times, two rounds: float16 [2048, 151936] 332.2 -> 320.8 us, [8192, 50304] 405.9 ->
    // 399.2, [1024, 128256] 137.6 -> 133.2, [1024, 65536] 71.5 -> 69.8, [100, 100000] 16.5 -> 15.4
    // (three rounds); bfloat16 alike (3-5% on the first three); [2048, 32768], [4096, 32000], [16,
    // 262144] and [8, 131072] alike; log_softmax [2048, 151936] 0.5-1.3% faster, the rest alike
    // (with its sums on the fused exp, which it has declined since).
    A mt = A(-INFINITY);
    if constexpr (sizeof(T) == 2) {
      PackWords<T, N> mx = splat_words<T, N>(T(-INFINITY));
      each_landed_ring_pack(stage, mine, [&](int, auto s) {
        mx = pack_max_words<T, N>(mx, as_words(reload_shared<T, N>(s)));
      });
      A x[N];
      unpack_words<T, N>(mx, x);
      mt = tree_reduce(x, MaxOp());
    } else {
      each_landed_ring_pack(stage, mine, [&](int, auto s) {
        A x[N];
        unpack<N>(reload_shared<T, N>(s), x);
        mt = nan_max(mt, tree_reduce(x, MaxOp()));
      });
    }
    m = shift_reduce(mt, MaxOp());
    if (m != A(-INFINITY)) {  // else all -inf or padding: the sum is 0, not NaN (see below)
      const auto sum_pass = [&](const auto& ex) {
        each_ring_pack(stage, mine, [&](int, auto s) {
          A x[N], e[N];
          unpack<N>(reload_shared<T, N>(s), x);
#pragma unroll
          for (int j = 0; j < N; ++j) e[j] = ex(x[j]);
          st += tree_reduce(e, SumOp());
          if constexpr (kKeepExp) ring_store(s, pack_of<T>(e));
        });
      };
      if constexpr (sizeof(T) == 2)
        with_shifted_exp<kFastExp, Log>(m, sum_pass);
      else
        sum_pass(ShiftedExp<kFastExp, A>(m));
    }
    st = shift_reduce(st, SumOp());
    // A warp whose part is all -inf outputs 0, unless the whole row is -inf, which scale (NaN)
    // turns into NaN: its exps are 0 (exp_shift), and kept ones (kKeepExp: the slots still hold
    // x) are read as 0.
    const A shift = exp_shift(m);
    // (Lanes: their part is the row, so a part of -inf is a row of -inf, whose scale is NaN
    // and gives NaN from x = -inf as well: no select a value.)
    const bool summed = G == RowGroup::kLanes || m != A(-INFINITY);
    A coef, scale;
    row_stats(m, st, coef, scale);
    // Pass 3, the output: softmax exp(x - shift) * scale (16-bit: one ex2), log_softmax
    // x - m - coef; each pack's values given to `store`.
    const auto out_pass = [&](auto&& store) {
      with_fwd_out<Log, kFast>(Log ? m : shift, Log ? coef : scale, [&](const auto& out) {
        each_ring_pack(stage, mine, [&](int p, auto s) {
          A x[N], o[N];
          unpack<N>(reload_shared<T, N>(s), x);
#pragma unroll
          for (int j = 0; j < N; ++j) o[j] = kKeepExp ? (summed ? x[j] : A(0)) * scale : out(x[j]);
          store(p, o);
        });
      });
    };
    if (kLaneCount && vec) {
      // Lanes, aligned rows: the output pointer formed once, each pack `lanes` packs on (as the
      // stores of the rows held in registers below; ro is held, kSlotAddresses), on a path of
      // its own: under one pack loop with store_out's element-by-element form, ptxas predicated
      // both and issued them all.
      P* dst = reinterpret_cast<P*>(ro + col0);
      int pack_step = lanes;
      asm("" : "+r"(pack_step));
      out_pass([&](int p, const A(&o)[N]) {
        store_global_whole(dst + p * pack_step, pack_of<T>(o));
      });
    } else {
      out_pass([&](int p, const A(&o)[N]) { store_out(ro, p, o); });
    }
  };

  for (int s = 0; s + 1 < stages; ++s) prefetch(s, s);
  int stage = 0;  // the ring stage iteration `it` reads; `it + stages - 1` fills the one before it
  for (int64_t it = 0; (kLoops || it == 0) && lead + it * ngroups < rows; ++it) {
    // kDirect rows load where they are reduced: no copies to start, no empty batches to commit
    // and wait for (4-8 fewer registers in the lanes kernels; H100 kernel times, three rounds:
    // [1024, 512] float16 3.07 -> 2.93 us, [2097152, 32] float32 180.7 -> 179.9, the rest alike).
    if constexpr (!kDirect) {
      prefetch(it + stages - 1, stage == 0 ? stages - 1 : stage - 1);
      // A cluster readies its exchange once the first copies are on their way, not before (ncu,
      // [8, 131072] float16 held: 141 instructions a warp before the first copy, QuACK's 61).
      if (G == RowGroup::kCluster && it == 0) cluster_exchange_init(slots);
      if (!pack_batches) cp_async_wait(stages - 1);  // this iteration's batch has landed
    }
    const int64_t row = group + it * ngroups;
    const bool live = (Full && G == RowGroup::kBlock) || row < rows;  // a lanes block may pass rows
    if constexpr (Shifted) row_shift = live ? shift_of(row) : 0;
    unsigned mine = !live ? 0u : Shifted ? owned_shifted(row_shift) : owned;
    // kLaneStores lanes that may own fewer than all their packs keep `mine` in a register (an
    // empty asm hides how it was made): ptxas rebuilt it from the columns where the stores test
    // it, a compare, two selects and a merge a pack.
    if constexpr (kLaneStores && !Full) asm("" : "+r"(mine));
    const T* ra = a + row * cols - row_shift;
    const T* rb = Bwd ? b + row * cols - row_shift : nullptr;
    T* ro = out + row * cols - row_shift;
    if constexpr (kFromRing && kSlotAddresses) ro = held_pointer(ro);  // see slot_at
    if constexpr (kFromRing && Bwd) {
      ring_row_backward(stage, mine, ro);
    } else if constexpr (kFromRing) {
      ring_row_forward(stage, mine, ro);
    } else {
      [[maybe_unused]] A va[kBwdWords ? 1 : K], vb[Bwd && !kBwdWords ? K : 1];
      // kDirect (a forward's x; the 16-bit backward lanes' y and dy): every pack's load issued
      // before the first is used, from one address (the packs a group's threads apart), into
      // registers that hold -inf (the backward: 0) where the thread owns no pack (four moves a
      // pack, not eight or sixteen for its converted values).
      // (Held as 32-bit words: a Pack of 16-bit values assigned whole under a condition moves as
      // 2-byte pieces.) With warp_allreduce's unrolled steps, H200 kernel times, two rounds:
      // [1024, 512] float16 2.7 -> 2.6 us, bfloat16 alike; [32, 64, 64, 64] 11.1-11.4 -> 10.9-11.0;
      // [2097152, 32] float16 67.5 -> 66.5-66.8; the other row shapes within 1%.
      [[maybe_unused]] PackWords<T, N> loaded[kDirect ? PACKS : 1];
      [[maybe_unused]] PackWords<T, N> loaded_b[kDirect && Bwd ? PACKS : 1];  // dy
      // kWords: a misaligned row's packs land in the same words, element by element, so that
      // everything after the loads runs one way for every row (the max on the words below, one
      // conversion a value). On a path of its own, with its own conversions and float max, the
      // element-wise one spilled 8 bytes at two packs' 32 registers (row_kernel_max_registers).
      if constexpr (kWords) {
        if (!vec) {
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
            loaded[p] = splat_words<T, N>(T(-INFINITY));
            if (mine >> p & 1u) {
              P pk;
              const int c = col0 + p * step;
#pragma unroll
              for (int j = 0; j < N; ++j) pk.v[j] = c + j < cols ? ra[c + j] : T(-INFINITY);
              loaded[p] = as_words(pk);
            }
          }
        }
      }
      if constexpr (kDirect) {
        if (vec) {
          // (The backward's padding is 0: it adds nothing to sum(y * dy) or sum(dy).)
          const PackWords<T, N> pad_words = splat_words<T, N>(T(Bwd ? 0.0f : -INFINITY));
          const P* src = reinterpret_cast<const P*>(ra + col0);
          [[maybe_unused]] const P* src_b = Bwd ? reinterpret_cast<const P*>(rb + col0) : nullptr;
          int pack_step = G == RowGroup::kLanes ? lanes : nthreads;  // step / N
          // (kLaneStores: held opaque, so that p * lanes is one multiply-add into the address, not
          // p shifted by lanes_log2 first; see the stores.)
          if constexpr (kLaneStores) asm("" : "+r"(pack_step));
          const bool last_row = Shifted && row == rows - 1;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
            loaded[p] = pad_words;
            if constexpr (Bwd) loaded_b[p] = pad_words;
            if (mine >> p & 1u) {
              if (last_row && past_end(p, row_shift)) {
                loaded[p] = as_words(load_inside(ra, p, row_shift, T(-INFINITY)));
              } else {
                loaded[p] = load_global_words<kPrefetchDirect>(src + p * pack_step);
                if constexpr (Bwd)
                  loaded_b[p] = load_global_words<kPrefetchDirect>(src_b + p * pack_step);
              }
            }
          }
        }
      }
      // A lane's 16-bit packs, held as words: their max taken two values an instruction in their
      // own type (exact, NaN-propagating), before any is converted, then one pair converted; not
      // a max an element after conversion (13 instructions for four packs, not 31).
      [[maybe_unused]] A lane_max;
      if constexpr (kWords) {
        PackWords<T, N> w[PACKS];
#pragma unroll
        for (int p = 0; p < PACKS; ++p) w[p] = loaded[p];
#pragma unroll
        for (int k = PACKS / 2; k > 0; k /= 2)
#pragma unroll
          for (int p = 0; p < k; ++p) w[p] = pack_max_words<T, N>(w[p], w[p + k]);
        lane_max = words_max<T, N>(w[0]);
      }
      // Pack p of tensor t, from registers (kDirect) or the ring.
      const auto landed = [&](int t, int p) {
        if constexpr (kDirect)
          return from_words<T, N>(t == 0 ? loaded[p] : loaded_b[Bwd ? p : 0]);
        else
          return load_whole(slot(stage, t, p));
      };
#pragma unroll
      for (int p = 0; p < (kBwdWords ? 0 : PACKS); ++p) {
        const int col = col0 + p * step;
        const bool here = mine >> p & 1u;
        const A fill = Bwd ? A(0) : A(-INFINITY);  // padding: exp gives 0; adds 0 to sum(y * dy)
        A tmp[N];
        if (kWords || vec) {
          if (kDirect || kPadsSlots || here) {
            unpack<N>(landed(0, p), tmp);
            if constexpr (Shifted) pad_outside(p, tmp, fill);
          } else {
#pragma unroll
            for (int j = 0; j < N; ++j) tmp[j] = fill;
          }
        } else {
          load_pack<N>(ra, col, here ? int(cols) : 0, false, tmp, fill);
        }
#pragma unroll
        for (int j = 0; j < N; ++j) va[p * N + j] = tmp[j];
        if constexpr (Bwd) {
          if (vec) {
            if (here) {
              unpack<N>(landed(1, p), tmp);
              if constexpr (Shifted) pad_outside(p, tmp, A(0));
            } else {
#pragma unroll
              for (int j = 0; j < N; ++j) tmp[j] = A(0);
            }
          } else {
            load_pack<N>(rb, col, here ? int(cols) : 0, false, tmp, A(0));
          }
#pragma unroll
          for (int j = 0; j < N; ++j) vb[p * N + j] = tmp[j];
        }
      }

      if constexpr (!Bwd) {
        // The shift group's max m (the row's lanes, a block's warp), then e = exp(x - m) and its
        // sum s. A group whose values are all -inf or padding sums 0 instead of exp(-inf - -inf)
        // = NaN, so that it adds nothing to the row's sum (a whole row of -inf still gives NaN,
        // through fwd_coef). The 16- and 32-bit lanes shift their exps by exp_shift(m), 0 there,
        // with no test an element (the test took a move of 0 into each exp's register); the rest
        // test m: float64's exps of a lane's 32 values interleaved through exp_shift, at up to 212
        // registers a thread, and the 16-bit blocks' spilled 16 bytes at their 32 registers.
        // 16-bit rows take the fused exp where it is exact enough (with_shifted_exp; H200 kernel
        // times: [2097152, 32] float16 73.8 -> 72.0 us, [32, 64, 64, 64] 11.9 -> 11.5, the rest
        // alike). Not the ring-reading passes: the test for each pack there spilled 270 bytes.
        // So do float32 lanes: one shift a row, so the fused exp's rounding of m log2(e), a
        // factor common to all the row's exps, cancels in their ratio to the sum (not in
        // log_softmax's log of the sum: it declines the fused form). A float32
        // held block's shift groups are its warps, whose factors would not cancel (~3e-6
        // relative): there exp(x - m) is the hardware ex2 of the exact difference, as in the
        // ring's passes, and row_stats rescales the warps with the accurate exp.
        if constexpr (!kWords) lane_max = tree_reduce(va, MaxOp());
        A m = shift_reduce(lane_max, MaxOp());
        A e[K];
        constexpr bool kShiftsEmpty = sizeof(T) <= 4 && (G == RowGroup::kLanes || Held);
        const auto take_exps = [&](const auto& ex) {
#pragma unroll
          for (int k = 0; k < K; ++k) e[k] = !kShiftsEmpty && m == A(-INFINITY) ? A(0) : ex(va[k]);
        };
        const A shift = kShiftsEmpty ? exp_shift(m) : m;
        if constexpr (sizeof(T) == 4 && G != RowGroup::kLanes)
          take_exps(ShiftedExp<kFastExp, A>(shift));
        else
          with_shifted_exp<kFastExp, Log>(shift, take_exps);
        A s = shift_reduce(tree_reduce(e, SumOp()), SumOp());
        A scale, coef;  // y = e * scale, or log y = x - m - coef
        row_stats(m, s, coef, scale);
        const auto out_pack = [&](int p, A (&o)[N]) {
#pragma unroll
          for (int j = 0; j < N; ++j) o[j] = Log ? va[p * N + j] - m - coef : e[p * N + j] * scale;
        };
        if (kLaneStores && vec) {
          // A lane's aligned packs: its output pointer formed once, each pack `lanes` packs on,
          // and only the stores under the owned tests (every pack's outputs computed, which its
          // row's other lanes take anyway). The per-pack form below rebuilt out + row * cols in
          // 64 bits and re-derived the owned bit for every pack, each under a branch of its own
          // (~16 instructions a pack besides its 13 of arithmetic and store). The step is held
          // opaque so that p * lanes is one multiply-add into the address, not p shifted by
          // lanes_log2 first.
          P* dst = held_pointer(reinterpret_cast<P*>(ro + col0));
          int pack_step = lanes;
          asm("" : "+r"(pack_step));
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
            A o[N];
            out_pack(p, o);
            const P pk = pack_of<T>(o);
            if (mine >> p & 1u) store_global_whole(dst + p * pack_step, pk);
          }
        } else {
          // Held rows store through the thread's output pointer, taken once: from ro + (col0 +
          // p * step) under each pack's owned test, the compiler rebuilt every address from the
          // row and column indices, which it kept live through the exps (the non-Full kernel took
          // 127 registers at a cap of 128, 196 bytes of spill at 80; the Full one 35 SASS
          // instructions more). Not Full: predicated stores (held_room; a branch a pack took 39
          // more).
          [[maybe_unused]] T* const held_out = ro + col0;
          [[maybe_unused]] const int mine_room = live ? held_room : 0;
#pragma unroll
          for (int p = 0; p < PACKS; ++p) {
            if ((Held && !Full) || mine >> p & 1u) {
              A o[N];
              out_pack(p, o);
              if constexpr (Held && !Full)
                store_global_whole_if(held_owns(p, mine_room),
                                      reinterpret_cast<P*>(held_out + p * step), pack_of<T>(o));
              else if constexpr (Held)
                store_global_whole(reinterpret_cast<P*>(held_out + p * step), pack_of<T>(o));
              else
                store_out(ro, p, o);
            }
          }
        }
      } else if constexpr (kBwdWords) {
        A pack_sums[PACKS];  // each pack's terms summed as it is converted
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          A y[N], dy[N];
          unpack_words<T, N>(loaded[p], y);
          unpack_words<T, N>(loaded_b[p], dy);
#pragma unroll
          for (int j = 0; j < N; ++j) dy[j] = bwd_term<Log>(y[j], dy[j]);
          pack_sums[p] = tree_reduce(dy, SumOp());
        }
        const A s = row_sum(tree_reduce(pack_sums, SumOp()));
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          if (mine >> p & 1u) {
            forget_words(loaded[p]);
            forget_words(loaded_b[p]);
            A y[N], dy[N], o[N];
            unpack_words<T, N>(loaded[p], y);
            unpack_words<T, N>(loaded_b[p], dy);
#pragma unroll
            for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, kFast>(y[j], dy[j], s);
            store_out(ro, p, o);
          }
        }
      } else {
        A terms[K];
#pragma unroll
        for (int k = 0; k < K; ++k) terms[k] = bwd_term<Log>(va[k], vb[k]);
        const A s = row_sum(tree_reduce(terms, SumOp()));
#pragma unroll
        for (int p = 0; p < PACKS; ++p) {
          if (mine >> p & 1u) {
            A o[N];
#pragma unroll
            for (int j = 0; j < N; ++j) o[j] = bwd_out<Log, kFast>(va[p * N + j], vb[p * N + j], s);
            store_out(ro, p, o);
          }
        }
      }
    }
    stage = stage + 1 == stages ? 0 : stage + 1;
  }
  if constexpr (!kDirect) cp_async_wait(0);  // nothing may land in shared memory after exit
  // (No cluster_exchange_finish: a cluster's blocks ready the exchange in the loop's first trip,
  // every trip exchanges, and a cluster without a row, if one were launched, readies nothing.)
}

}  // namespace mt
