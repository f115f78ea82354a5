// CUDA softmax over a non-last dim (inner > 1): picks tier 4c (a short inner's whole slab staged
// flat), 4b (the group staged in shared memory), 4a (in registers) or 4 (a block's shared memory
// or a second read from L2) from the (outer, axis, inner) shape and dtype. The tier table heads
// softmax_cuda.cu.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/errors.h"
#include "ops/common/launch.cuh"
#include "ops/softmax/cuda/column_slab_tier.cuh"
#include "ops/softmax/cuda/column_staged_tier.cuh"
#include "ops/softmax/cuda/column_tier.cuh"
#include "ops/softmax/cuda/inner_tier.cuh"
#include "ops/softmax/cuda/tier_launch.cuh"

namespace mt {
namespace softmax_launch {
namespace {

// An inner-dim group is cached in shared memory up to this size (two blocks per SM still fit;
// allowing one block per SM measured slower on an H200: [4096, 4096] over dim 0 went from 814 to
// 618 GB/s in float32).
constexpr int64_t kInnerOnchipBytes = 96 * 1024;

// Whether a column tier's block may ask for `smem` bytes of dynamic shared memory: 4 KB of the
// opt-in limit stay for the kernels' static shared memory (their mbarriers) and headroom.
bool column_smem_fits(int64_t smem) {
  return smem <= device_info().smem_per_block_optin - 4 * 1024;
}

// How tier 4a lays a group out: R packs a thread, a block of TX packs along inner by TY steps,
// CS blocks a cluster.
struct ColumnPlan {
  int packs;
  int64_t tx, ty, cs;
};

// small_blocks: 128 threads a block instead of 256 (16-bit forward: [16, 21, 256, 256] 37.7 ->
// 35.8 us, [32, 4, 256, 256] 16.0 -> 14.9 us on an H100; the backward: see launch_column_tiers).
template <typename T, int N, bool Bwd>
ColumnPlan column_register_plan(SoftmaxShape s, bool narrow_packs, bool small_blocks) {
  constexpr int kMaxPacks = column_max_packs<T, Bwd>();
  const int64_t npk = ceil_div(s.inner, N);
  // Tuning overrides: MT_SOFTMAX_COLUMN_PACKS forces R (a power of two), MT_SOFTMAX_COLUMN_THREADS
  // the block size, MT_SOFTMAX_COLUMN_MIN_TX the fewest packs along inner a block takes.
  static const int forced_packs = env_int("MT_SOFTMAX_COLUMN_PACKS", 0);
  static const int min_tx = std::max(1, env_int("MT_SOFTMAX_COLUMN_MIN_TX", 2));
  static const int forced_threads = env_int("MT_SOFTMAX_COLUMN_THREADS", 0);
  const int want_threads = forced_threads > 0 ? forced_threads : small_blocks ? 128 : 256;
  const int block_threads = std::clamp(want_threads / 32 * 32, 32, kColumnMaxThreads);
  // Packs a thread: a short axis takes as many as it has; a long one the most that fit, or in
  // the forward half as many where that pads the axis less (33 steps: 9 x 4, not 5 x 8). The
  // backward keeps its 4 (H100, [16, 21, 256, 256] float16: 6 x 4 48.4 us, 11 x 2 55.3; float32
  // within 1%). Narrow packs (a misaligned inner) always take the most: they are compiled for
  // that alone.
  int packs = std::clamp(next_pow2(forced_packs > 0 ? forced_packs : s.axis), 2, kMaxPacks);
  if (!Bwd && forced_packs <= 0 && packs == kMaxPacks && packs >= 8 &&
      ceil_div(s.axis, packs / 2) * (packs / 2) < ceil_div(s.axis, packs) * packs)
    packs /= 2;
  if (narrow_packs) packs = kMaxPacks;
  const int64_t steps = ceil_div(s.axis, packs);  // threads along the axis, over the cluster
  // Packs along inner: as many as the block has room for beside the axis, at least 2 (a
  // 32-byte sector per step for 16-byte packs).
  const int64_t want_tx =
      std::min<int64_t>(next_pow2(npk), std::max<int64_t>(min_tx, block_threads / steps));
  int64_t tx = 1;
  while (tx * 2 <= want_tx) tx *= 2;
  const int64_t cs = ceil_div(steps, block_threads / tx);
  int64_t ty = ceil_div(steps, cs);
  if (tx < 32) ty = ceil_div(ty, 32 / tx) * (32 / tx);  // whole warps
  return {packs, tx, ty, cs};
}

// Launches a column kernel on `groups` groups of `cs` blocks of `threads` (a cluster a group when
// cs > 1), `tx` packs along inner; false when that shape cannot run here. The kernel takes
// (a, b, out, axis, inner, tiles, tx_log2, cs, extra...), tiles and cs as FastDivisors.
template <typename T, typename... Params, typename... Extra>
bool launch_column_groups(void (*kernel)(Params...), const Ptrs& p, SoftmaxShape s, int64_t tiles,
                          int64_t tx, int64_t cs, int threads, int64_t smem, Extra... extra) {
  const int64_t groups = s.outer * tiles;
  if (groups * cs >= (int64_t(1) << 31)) return false;
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  const int tx_log2 = log2_exact(int(tx));
  // Blocks know their group and tile by these (groups * cs < 2^31).
  const FastDivisor tiles_divisor{uint32_t(tiles)}, blocks{uint32_t(cs)};
  if (cs > 1) {
    if (!device_info().clusters || cs > kMaxClusterBlocks || tx > kColumnClusterMaxTx) return false;
    return launch_clustered(kernel, groups, int(cs), threads, smem, a, b, out, s.axis, s.inner,
                            tiles_divisor, tx_log2, blocks, extra...);
  }
  kernel<<<unsigned(groups), threads, smem>>>(a, b, out, s.axis, s.inner, tiles_divisor, tx_log2,
                                              blocks, extra...);
  MT_CUDA_CHECK_LAUNCH();
  return true;
}

// Tier 4a's forward of two-pack groups (axes of 2 steps) a block each, in 16-byte packs, through
// the prefetching kernel (softmax_column_prefetch_kernel) where the groups outnumber the plain
// kernel's blocks that fit at once; false otherwise. H200 kernel times, two rounds, plain ->
// prefetching: [16, 2, 512, 512] float16 12.26 / 12.13 -> 10.85 / 10.82 us, bfloat16 12.32 ->
// 10.98, float32 21.86 / 21.66 -> 19.65 / 19.65; [1100, 2, 1024] float16 4.99 / 4.96 -> 4.54 /
// 4.58, float32 7.78 / 7.71 -> 6.69 / 6.66. Not four packs, whose plain kernel already has four
// loads in flight a thread: [32, 4, 256, 256] float16 11.26 / 11.23 -> 11.42 / 11.43, [64, 3, 224,
// 224] bfloat16 12.80 -> 13.22, [96, 3, 20000] 8.90 -> 9.25, float32 alike or 1-3% slower (nor
// more blocks an SM there: at 51 or 40 registers [32, 4, 256, 256] float16 took 12.1 / 13.4).
// MT_SOFTMAX_COLUMN_PREFETCH=0/1 forces it off / on (for every two-step group a block).
template <typename T, int N, int R, bool Log>
bool launch_column_prefetch(const Ptrs& p, SoftmaxShape s, int64_t tiles, const ColumnPlan& plan) {
  static const int forced = env_int("MT_SOFTMAX_COLUMN_PREFETCH", -1);
  const int64_t groups = s.outer * tiles;
  const int threads = int(plan.tx * plan.ty);
  const DeviceInfo& dev = device_info();
  if (forced == 0 || plan.cs != 1 || groups >= (int64_t(1) << 31)) return false;
  if (forced < 0) {
    const int64_t plain_fit =
        int64_t(blocks_per_sm(softmax_column_kernel<T, N, R, Log, false>, threads, 0)) *
        dev.sm_count;
    if (groups <= plain_fit) return false;
  }
  auto kernel = softmax_column_prefetch_kernel<T, N, R, Log>;
  const int64_t smem = 2 * R * int64_t(threads) * int64_t(sizeof(Pack<T, N>));
  allow_dynamic_smem(kernel, smem);
  const int64_t fit = int64_t(blocks_per_sm(kernel, threads, smem)) * dev.sm_count;
  const int tx_log2 = log2_exact(int(plan.tx));
  kernel<<<unsigned(std::min(groups, fit)), threads, smem>>>(
      static_cast<const T*>(p.a), static_cast<T*>(p.out), s.axis, s.inner,
      FastDivisor{uint32_t(tiles)}, tx_log2, unsigned(groups));
  MT_CUDA_CHECK_LAUNCH();
  return true;
}

// Tier 4a with packs of N elements: false when the axis needs more than a cluster (or clusters
// cannot run here).
template <typename T, int N, bool Log, bool Bwd>
bool launch_column_tier(const Ptrs& p, SoftmaxShape s, const ColumnPlan& plan) {
  constexpr int kMaxPacks = column_max_packs<T, Bwd>();
  const int64_t tiles = ceil_div(ceil_div(s.inner, N), plan.tx);
  auto run = [&](auto packs_c) {
    constexpr int R = decltype(packs_c)::value;
    if constexpr (!Bwd && N == pack_size<T>() && R == 2)
      if (launch_column_prefetch<T, N, R, Log>(p, s, tiles, plan)) return true;
    return launch_column_groups<T>(softmax_column_kernel<T, N, R, Log, Bwd>, p, s, tiles, plan.tx,
                                   plan.cs, int(plan.tx * plan.ty),
                                   column_inbox_bytes<T, N, Bwd>(plan.cs, plan.tx));
  };
  if (N != pack_size<T>()) return run(std::integral_constant<int, kMaxPacks>());  // narrow packs
  switch (plan.packs) {
    case 2: return run(std::integral_constant<int, 2>());
    case 4: return run(std::integral_constant<int, 4>());
    case 8:
      if constexpr (kMaxPacks >= 8) return run(std::integral_constant<int, 8>());
  }
  return false;
}

// Tier 4b: the group staged in shared memory, a cluster's for a long axis. Tiles of inner a
// 128-byte line wide, except (as measured on an H100) 64 bytes where that keeps the group in one
// block (in the float32 and float64 forward only within a round: one_block_pays), and in the
// 16-bit forward where a line-wide group needs a cluster of more than 4 blocks on a grid of
// fewer than 8 rounds (line_pays_16bit). The backward, whose blocks stage y and dy, keeps the
// line-wide tile (H200, once the column reductions took a thread a column, 16 blocks instead of
// 8 of half a line: [8, 4096, 4096] float16 239 -> 218 us, float32 467 -> 406; [4096, 4096] over
// dim 0 float32 64.2 -> 56.0, float16 alike), as do 8-byte packs (rows not 16-byte aligned, e.g.
// [32, 1000, 14, 14] float16: backward 32.8 -> 28.4 us at 4 blocks instead of 2 of half a line;
// their forward measured no gain). Narrower still where the axis would need more than 16
// blocks; false when even 32-byte tiles would. Tuning overrides: MT_SOFTMAX_STAGED_TX the packs
// along inner a block takes, MT_SOFTMAX_STAGED_KB the shared memory a block stages,
// MT_SOFTMAX_STAGED_THREADS the most threads a block has (a power of two, 32-256).
template <typename T, int N, bool Log, bool Bwd>
bool launch_column_staged_tier(const Ptrs& p, SoftmaxShape s) {
  constexpr int64_t kPackBytes = N * int64_t(sizeof(T)), kLine = 128 / kPackBytes;  // packs a line
  static const int forced_tx = env_int("MT_SOFTMAX_STAGED_TX", 0);
  static const int forced_kb = env_int("MT_SOFTMAX_STAGED_KB", 0);
  static const int forced_threads = env_int("MT_SOFTMAX_STAGED_THREADS", 0);
  // The stage a block aims for and its most threads: 64 KB and 256 unless forced (short grids
  // take halved ones, below).
  struct Stages {
    int64_t budget;
    int max_threads;
  };
  const Stages full{int64_t(forced_kb > 0 ? forced_kb : 64) * 1024,
                    std::clamp(next_pow2(forced_threads > 0 ? forced_threads : kColumnMaxThreads),
                               32, kColumnMaxThreads)};
  const int64_t npk = s.inner / N;
  // A block of TX packs by TY steps; the blocks a group takes at TX packs.
  const auto ty_for = [&](const Stages& st, int64_t tx) {
    const int64_t steps = std::max<int64_t>(next_pow2(s.axis), ceil_div(32, tx));  // whole warps
    return std::max<int64_t>(1, std::min<int64_t>(st.max_threads / tx, steps));
  };
  const auto blocks_for = [&](const Stages& st, int64_t tx) {
    const int64_t ty = ty_for(st, tx), step_bytes = tx * kPackBytes * (Bwd ? 2 : 1);
    return ceil_div(s.axis, std::max<int64_t>(ty, st.budget / step_bytes / ty * ty));
  };
  auto kernel = softmax_column_staged_kernel<T, N, Log, Bwd>;
  // A group's layout at tx packs: TY steps a block, CS blocks, a block's seg steps and shared
  // memory.
  struct Layout {
    int64_t ty, cs, seg, smem;
  };
  const auto layout_for = [&](const Stages& st, int64_t tx) {
    const int64_t ty = ty_for(st, tx), cs = blocks_for(st, tx);
    const int64_t seg = ceil_div(ceil_div(s.axis, cs), ty) * ty;
    return Layout{ty, cs, seg, column_staged_smem<T, N, Bwd>(seg, int(tx), int(tx * ty), cs)};
  };
  // Rounds of the blocks that fit at once a grid of tx-pack tiles takes (0: its stage does not
  // fit).
  const auto rounds_for = [&](const Stages& st, int64_t tx) {
    const Layout g = layout_for(st, tx);
    if (!column_smem_fits(g.smem)) return 0.0;
    const int fit = blocks_per_sm(kernel, int(tx * g.ty), g.smem) * device_info().sm_count;
    return double(s.outer * ceil_div(npk, tx) * g.cs) / double(fit);
  };
  // The 16-bit forward's line-wide tiles over a cluster: they read whole lines, where half-line
  // tiles halve the cluster, whose blocks wait for each other. H200 kernel times, three rounds,
  // float16 (bfloat16 alike), half line -> line: clusters of 2-4 blocks [16, 1024, 4096] 75.5 ->
  // 69.7 us, [8, 2048, 4096] 77.9 -> 73.6; of 8, [8, 4096, 4096] (10 rounds) 157.2 -> 154.6
  // (bfloat16 157.3 -> 156.4), but [4, 4096, 4096] (5 rounds) 82.0 -> 83.2, [2, 4096, 4096] 45.7
  // -> 48.6, [8, 4096, 2048] 80.1 -> 81.6, [4096, 4096] over dim 0 26.9 -> 30.0. This rule on a
  // second H200, two rounds: [16, 1024, 4096] 75.6 -> 69.9, [8, 2048, 4096] 78.5 -> 74.2, [8,
  // 4096, 4096] float16 159.9 -> 160.1, bfloat16 156.7 -> 154.4; the rest within 0.5%.
  const auto line_pays_16bit = [&](const Stages& st) {
    return blocks_for(st, kLine) <= 4 || rounds_for(st, kLine / 2) >= 8;
  };
  // The tile width for stages `st`.
  const auto pick_tx = [&](const Stages& st) {
    int64_t tx = std::min<int64_t>(kLine, next_pow2(npk));
    if (forced_tx > 0) {
      tx = std::min<int64_t>({next_pow2(forced_tx), next_pow2(npk), kColumnMaxThreads});
    } else if (sizeof(T) == 2 && !Bwd && npk >= 2 * kLine && blocks_for(st, 2 * kLine) == 1) {
      tx = 2 * kLine;  // short 16-bit axes ([8, 150, 128, 128]): 256 bytes 33.0 us, 128 bytes 42.9
    } else if (tx == kLine && blocks_for(st, kLine) > 1) {
      // One block of half a line, where the float32 and float64 forward's one-block groups take
      // at most one round of the blocks that fit at once; beyond it they keep the line-wide
      // tile, clusters of two or more blocks a group (within one round the single blocks won).
      // H100 kernel times, float32: [32, 1000, 14, 14] 27.9 -> 26.0-26.9 us (416 blocks of half
      // a line, 396 at once), [16, 600, 1024] 30.1 -> 29.4; halved, [8, 1024, 512] 15.3 (16.0
      // line-wide), [16, 768, 256] 12.8 (13.5). float64 line-wide: [32, 1000, 14, 14] 44.2 ->
      // 42.8, [8, 1024, 512] 28.5 -> 27.2, [16, 600, 1024] 58.6 -> 57.6.
      const bool wide_forward = !Bwd && kPackBytes == 16;  // float32, float64 (16-bit: above)
      const bool one_block_pays =
          blocks_for(st, kLine / 2) == 1 && !(wide_forward && rounds_for(st, kLine / 2) > 1);
      if ((sizeof(T) == 2 && !Bwd && !line_pays_16bit(st)) || one_block_pays) tx = kLine / 2;
    }
    while (forced_tx <= 0 && tx > kLine / 4 && blocks_for(st, tx) > kMaxClusterBlocks) tx /= 2;
    return tx;
  };
  Stages stages = full;
  int64_t tx = pick_tx(full);
  // Short grids take blocks of 128 threads and 32 KB stages, twice as many an SM, so that one
  // block's copies overlap another's passes. H200 kernel times against the 64 KB stages of 256
  // threads, two or three rounds (BENCHMARKS.md, forty-fifth and forty-sixth sessions):
  // - The forward whose blocks take at most two rounds of those that fit at once (16-bit) or four
  //   (float32, float64). float16 (bfloat16 alike): [4096, 4096] over dim 0 26.9 -> 26.3 us,
  //   [3072, 4096] 21.4 -> 20.7, [2048, 4096] 16.6 -> 15.6-16.4, [8, 150, 128, 128] 22.1 -> 21.6;
  //   float32 / float64: [2048, 4096] over dim 0 24.5 -> 21.6 / 45.8 -> 43.7, [1536, 4096] 18.7
  //   -> 16.7 / 36.8 -> 33.8, [16, 512, 1024] 20.0 -> 19.2 / 39.9 -> 37.7, [32, 1000, 14, 14]
  //   float64 37.5 -> 36.4. Long grids, where the halved stages double the clusters, lost
  //   (float16 [8, 4096, 4096] 155.9 -> 187.0, [8, 2048, 4096] 73.9 -> 78.5; float64 [8, 4096,
  //   4096] 588 -> 592); [64, 128, 56, 56] (~2.4 rounds in 16-bit) tied.
  // - The backward on grids of a round or more where the halved stages take line-wide tiles over
  //   clusters of 2-8 blocks (by default: half-line tiles of one block, or line-wide ones over
  //   fewer blocks). float32 / float16 / float64: [16, 512, 1024] 30.7 -> 27.6 / 17.4 -> 16.4 /
  //   58.1 -> 50.4, [4, 512, 4096] 31.0 -> 27.7 / 17.0 -> 16.0 / 58.9 -> 52.0, [64, 384, 256]
  //   24.5 -> 21.9 / 14.0 -> 14.3 / 44.3 -> 38.7, [16, 600, 1024] 32.5 -> 31.5 / 20.3 -> 19.1 /
  //   60.6 -> 59.3. Where they would take half-line tiles of one block ([32, 256, 1024] 27.7 ->
  //   30.3, [8, 150, 128, 128] 59.5 -> 67.8), clusters of 16 ([2048, 4096] over dim 0 float16
  //   18.0 -> 20.6) or less than a round ([512, 4096] over dim 0 float16 6.5 -> 6.9) they lost.
  if (kPackBytes == 16 && forced_kb <= 0 && forced_threads <= 0 && forced_tx <= 0) {
    const double rounds = rounds_for(full, tx);
    if (Bwd ? rounds >= 1.0 : rounds <= (sizeof(T) == 2 ? 2.0 : 4.0)) {
      const Stages halved{32 * 1024, 128};
      const int64_t halved_tx = pick_tx(halved), halved_blocks = blocks_for(halved, halved_tx);
      if (!Bwd || (halved_tx == kLine && halved_blocks >= 2 && halved_blocks <= 8)) {
        stages = halved;
        tx = halved_tx;
      }
    }
  }
  const Layout layout = layout_for(stages, tx);
  const int64_t ty = layout.ty, cs = layout.cs, seg = layout.seg, smem = layout.smem;
  const int threads = int(tx * ty);
  if (!column_smem_fits(smem)) return false;
  allow_dynamic_smem(kernel, smem);
  // The forward's copies by the bulk tensor copy engine (sm_90, 16-byte packs) where the grid's
  // blocks take at most ~1.4 rounds of those that fit at once: a tile map of x as [outer][axis]
  // [inner], a box the tile's width by box_rows steps (a divisor of seg), copied by one thread;
  // box_rows 0: every thread copies its own packs with cp.async. H200 kernel times, two rounds:
  // [32, 1000, 14, 14] float32 24.2 -> 22.3 us (1.13 rounds), [4096, 4096] over dim 0 float16
  // 30.0 -> 28.6-29.3 (1.29), [2048, 4096] over dim 0 float32 23.2 -> 22.9 (1.29), [16, 512,
  // 1024] float16 14.3 -> 14.0 (0.65); over more rounds it lost ([8, 150, 128, 128] float16 23.4
  // -> 23.8 at 1.55, [64, 128, 56, 56] 29.2 -> 29.7) or tied ([8, 4096, 4096]), and so did the
  // backward (its y and dy: [8, 4096, 4096] float16 216.5 -> 223.2, [64, 128, 56, 56] 39.5 ->
  // 41.4; at 1.3 rounds [2048, 4096] over dim 0 float32 29.6 -> 30.0). The float64 forward
  // takes it over any number of rounds where inner is at most 2 KB a row: H100 kernel times,
  // [32, 1000, 14, 14] 43.0 -> 41.1 us (2.1 rounds), [24, 1000, 14, 14] 34.5 -> 32.5 (1.6),
  // [40, 1000, 14, 14] 51.2 -> 49.3 (2.6), [64, 500, 200] 42.1 -> 40.4 (2.1); past 1.4 rounds
  // longer rows lost or tied, aligned or not ([16, 600, 1000] 57.5 -> 58.2, [8, 600, 1024] 31.4
  // -> 32.1, [8, 150, 98, 98] 69.1 -> 70.9, [1536, 4096] over dim 0 42.5 -> 42.3), and float32's
  // short rows tied ([64, 500, 200] 21.9 -> 21.9). Not 16-bit types since their own copies take
  // the Unrolled kernel below: H200 kernel times, three rounds, engine -> own copies, [4096, 4096]
  // over dim 0 float16 28.4-28.8 -> 27.7-27.9 us, bfloat16 28.1-28.5 -> 27.7-27.8; [2048, 4096]
  // over dim 0 15.6-16.4 -> 15.1, bfloat16 15.8-16.7 -> 15.0-15.3; [16, 512, 1024] 14.1-14.2 ->
  // 13.7, bfloat16 alike. MT_SOFTMAX_STAGED_TMA=0 turns the engine off, =1 on wherever it can run.
  static const int forced_tma = env_int("MT_SOFTMAX_STAGED_TMA", -1);
  const int64_t tiles = ceil_div(npk, tx);
  CUtensorMap map_x{};
  int box_rows = 0;
  const DeviceInfo& dev = device_info();
  if (!Bwd && kPackBytes == 16 && dev.clusters && forced_tma != 0 && s.outer < INT32_MAX &&
      s.axis < INT32_MAX && s.inner < INT32_MAX) {
    const int64_t blocks = tiles * s.outer * cs;
    const int64_t fit = int64_t(blocks_per_sm(kernel, threads, smem)) * dev.sm_count;
    const int rows = int(std::gcd<int64_t>(seg, 256));
    const uint64_t dims[3] = {uint64_t(s.inner), uint64_t(s.axis), uint64_t(s.outer)};
    const uint32_t box[3] = {uint32_t(tx * N), uint32_t(rows), 1};
    const bool short_float64_rows = sizeof(T) == 8 && s.inner * int64_t(sizeof(T)) <= 2048;
    const bool few_rounds = sizeof(T) >= 4 && blocks * 10 <= fit * 14;
    if ((forced_tma > 0 || few_rounds || short_float64_rows) &&
        make_tile_map_3d(&map_x, p.a, int(sizeof(T)), dims, box))
      box_rows = rows;
  }
  // The 16-bit loops unrolled (the Unrolled kernel) where its threads copy their own packs
  // (box_rows 0) and that costs no block an SM. H200 kernel times, two rounds, rolled ->
  // unrolled, forward: [8, 4096, 4096] float16 160.6-161.1 -> 159.3-159.6 us, bfloat16
  // 161.2-161.5 -> 158.3-158.4; [64, 128, 56, 56] 29.3 -> 28.8-29.0, bfloat16 29.4 -> 28.7;
  // [8, 150, 128, 128] bfloat16 23.7-23.9 -> 23.2-23.3; [8, 128, 8192] alike. Backward (four
  // steps of y and dy copied a loop trip, 40 registers against 44): [8, 4096, 4096] bfloat16
  // 220.4-220.8 -> 217.8-218.1, log_softmax float16 224.4-225.6 -> 220.2-221.1; the other cases
  // within noise. Unrolled under the copy engine too, [4096, 4096] over dim 0 bfloat16 went
  // 28.5-28.7 -> 29.6-29.9, [2048, 4096] over dim 0 and [16, 512, 1024] 2-3% slower.
  // But the backward's groups over clusters of 8 or more blocks in at most three rounds stay
  // rolled. H200 kernel times, three rounds, unrolled -> rolled: [4096, 4096] over dim 0 float16
  // 34.5-35.1 -> 33.9-34.1 us, bfloat16 35.0-35.5 -> 34.4-34.6; [3072, 4096] 28.4-28.8 -> 27.8,
  // bfloat16 28.6-29.0 -> 27.9-28.1; [2048, 4096] bfloat16 18.6-19.2 -> 18.0-18.3 (float16
  // 18.0-18.2 -> 17.6-18.2). Over many rounds ([8, 4096, 4096], 20) bfloat16 went 214.1-215.7 ->
  // 216.8-217.6, and on one block a group ([8, 128, 8192]) 15.5-15.6 -> 16.3-16.7.
  // MT_SOFTMAX_STAGED_UNROLL=1/-1 forces it on / off.
  if constexpr (sizeof(T) == 2) {
    static const int forced_unroll = env_int("MT_SOFTMAX_STAGED_UNROLL", 0);
    auto unrolled = softmax_column_staged_kernel<T, N, Log, Bwd, true>;
    const bool few_rounds_of_wide_clusters = Bwd && cs >= 8 && rounds_for(stages, tx) <= 3.0;
    if (forced_unroll > 0 ||
        (forced_unroll == 0 && box_rows == 0 && !few_rounds_of_wide_clusters &&
         blocks_per_sm(unrolled, threads, smem) >= blocks_per_sm(kernel, threads, smem))) {
      kernel = unrolled;
      allow_dynamic_smem(kernel, smem);
    }
  }
  return launch_column_groups<T>(kernel, p, s, tiles, tx, cs, threads, smem, int(seg), map_x,
                                 box_rows);
}

// Tier 4c: an outer index's whole (axis x inner) slab over a cluster, each block a run of whole
// rows copied flat in 16-byte packs. False where the slab is not a whole number of aligned packs,
// a period of columns needs more than a block's threads, or the slabs' blocks of whole-pack rows
// would not all be resident at once (then the old tiers measured faster). The blocks a slab
// takes: of those that keep every block resident, the one whose runs are nearest 64 KB (H100,
// [32, 1000, 14, 14] float16: runs of 32 KB 19.4 us, 48 KB 18.5, 64 KB 17.7, 96 KB 20.2).
// The copies land in four batches, each reduced while the later ones are on their way (H100
// kernel times against one batch reduced in two passes once all had landed: float32 [64, 2048,
// 49] 26.8 -> 23.8-24.1 us, [64, 1000, 7, 7] 15.2 -> 14.5; float16 [32, 1000, 14, 14] 17.4 ->
// 16.9-17.1, [64, 2048, 49] 16.7 -> 16.4, but [64, 1000, 7, 7] 10.8 -> 11.0 and [8, 2048, 64]
// 9.3 -> 9.9 (8.4 with the few slabs' shorter runs below); one batch 17.9 us on [32, 1000, 14,
// 14] float16, two 17.2, eight 17.5; blocks of 512 or 1024 threads there: 19.4, 22.0).
// Tuning overrides: MT_SOFTMAX_SLAB_THREADS the block size it aims for, MT_SOFTMAX_SLAB_KB the
// run's budget, MT_SOFTMAX_SLAB_CLUSTER the blocks a slab takes, MT_SOFTMAX_SLAB_BATCHES the
// batches (1-8).
template <typename T, bool Log, bool Bwd>
bool launch_column_slab_tier(const Ptrs& p, SoftmaxShape s) {
  constexpr int N = pack_size<T>();
  static const int want_threads = env_int("MT_SOFTMAX_SLAB_THREADS", 256);
  static const int64_t budget = int64_t(env_int("MT_SOFTMAX_SLAB_KB", 64)) * 1024;
  static const int forced_cs = env_int("MT_SOFTMAX_SLAB_CLUSTER", 0);
  static const int batches = std::clamp(env_int("MT_SOFTMAX_SLAB_BATCHES", 4), 1, 8);
  if (!p.aligned() || (s.axis * s.inner) % N != 0 || s.inner > INT32_MAX) return false;
  const int64_t common = std::gcd<int64_t>(N, s.inner);
  const int64_t period = s.inner / common, period_rows = N / common;
  if (period > kSlabMaxThreads) return false;
  const int64_t groups =
      std::max<int64_t>(1, std::min<int>(want_threads, kSlabMaxThreads) / period);
  const int threads = int(std::min<int64_t>(ceil_div(groups * period, 32) * 32, kSlabMaxThreads));
  const int64_t row_bytes = s.inner * int64_t(sizeof(T)) * (Bwd ? 2 : 1);
  auto kernel = softmax_column_slab_kernel<T, Log, Bwd>;
  const DeviceInfo& dev = device_info();
  // A slab over cs blocks: rows a block (whole periods), and whether every block is resident.
  const auto rows_for = [&](int64_t cs) {
    return ceil_div(ceil_div(s.axis, cs), period_rows) * period_rows;
  };
  const auto smem_for = [&](int64_t cs) {
    return column_slab_smem<T, Log, Bwd>(rows_for(cs), s.inner, threads);
  };
  const auto one_wave = [&](int64_t cs) {
    const int64_t smem = smem_for(cs), blocks = ceil_div(s.axis, rows_for(cs));
    if (!column_smem_fits(smem)) return false;
    if (blocks > 1) return s.outer <= active_clusters(kernel, int(blocks), threads, smem);
    return s.outer <= int64_t(blocks_per_sm(kernel, threads, smem)) * dev.sm_count;
  };
  int64_t cs = 0;
  if (forced_cs > 0) {
    cs = std::min<int64_t>(forced_cs, kMaxClusterBlocks);
  } else {
    // Sizes tried nearest the budget first: the first that fits is the answer (each try is an
    // occupancy query, cached but not free, on every call).
    int64_t sizes[kMaxClusterBlocks];
    const int tries = dev.clusters ? kMaxClusterBlocks : 1;
    for (int i = 0; i < tries; ++i) sizes[i] = i + 1;
    // Few slabs take runs of half the budget where the budget's would leave more than half the
    // SMs without a block (H100, [8, 2048, 64] float16: 32 blocks of 64 KB 10.0 us, 64 of 32 KB
    // 8.4, 48 of 43 KB 9.4).
    const int64_t aim =
        s.outer * ceil_div(s.axis * row_bytes, budget) < dev.sm_count / 2 ? budget / 2 : budget;
    const auto off = [&](int64_t c) {
      return std::abs(std::log(double(rows_for(c) * row_bytes) / double(aim)));
    };
    std::stable_sort(sizes, sizes + tries, [&](int64_t x, int64_t y) { return off(x) < off(y); });
    for (int i = 0; i < tries && cs == 0; ++i)
      if (one_wave(sizes[i])) cs = sizes[i];
    // No wave holds them all: rows that are not whole packs still take 16 blocks a slab (the
    // smallest runs), where the old tiers' narrow packs measured slower still (H100, [64, 2048,
    // 49] float64 99.9 -> 54.1 us, backward float32 117.3 -> 33.9; whole 784-byte rows did not
    // gain: [32, 1000, 14, 14] float32 29.8 -> 31.1).
    if (cs == 0 && s.inner % N != 0 && dev.clusters) cs = kMaxClusterBlocks;
    if (cs == 0) return false;
  }
  const int64_t rows = rows_for(cs);
  cs = ceil_div(s.axis, rows);  // no block without rows
  if (s.outer * cs >= (int64_t(1) << 31) || rows * s.inner > INT32_MAX) return false;
  const int64_t smem = smem_for(cs);
  if (!column_smem_fits(smem)) return false;
  allow_dynamic_smem(kernel, smem);
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  T* out = static_cast<T*>(p.out);
  if (cs > 1) {
    if (!dev.clusters) return false;
    return launch_clustered(kernel, s.outer, int(cs), threads, smem, a, b, out, s.axis,
                            int(s.inner), int(period), int(rows), int(cs), batches);
  }
  kernel<<<unsigned(s.outer), threads, smem>>>(a, b, out, s.axis, int(s.inner), int(period),
                                               int(rows), 1, batches);
  MT_CUDA_CHECK_LAUNCH();
  return true;
}

// Whether tier 4c takes the shape: rows not a whole number of 16-byte packs (tiers 4a and 4b would
// take narrower packs) or at most a 128-byte line, in slabs of at least 32K elements. H100 kernel
// us, old tiers -> here: [64, 1000, 7, 7] float16 32.6 -> 11.1, float32 40.3 -> 15.7;
// [64, 2048, 49] float16 73.4 -> 16.9; [32, 1000, 14, 14] float16 22.3 -> 17.6 (float32, whole
// 784-byte rows: 30.6 -> 30.4, left to tier 4b); [8, 2048, 64] float16 11.4 -> 9.3. Smaller slabs
// measured slower here ([128, 64, 14, 14] float16 6.4 -> 8.6, [32, 256, 7, 7] 4.1 -> 6.1), as did
// 512-byte rows ([16, 512, 16, 16] float16 10.9 -> 11.4). MT_SOFTMAX_COLUMN_SLAB=1/-1 forces it
// on (where it can run) / off.
template <typename T>
bool prefers_column_slab(SoftmaxShape s) {
  static const int forced = env_int("MT_SOFTMAX_COLUMN_SLAB", 0);
  if (forced != 0) return forced > 0;
  const bool short_rows = s.inner % pack_size<T>() != 0 || s.inner * int64_t(sizeof(T)) <= 128;
  return short_rows && s.axis * s.inner >= 32 * 1024;
}

// Tiers 4b and 4a: the group in shared memory or registers (of a cluster), in the widest packs
// that divide inner and the pointers' alignment: 16 bytes, 8 (16-bit types: [32, 1000, 14, 14]
// has 392-byte rows), or one element. Registers take it when their tile is a 128-byte line wide
// (short axes); shared memory when registers could hold the group only as narrower tiles, whose
// lines L2 would look up once per tile (long axes; 16- and 8-byte packs). False when tier 4 must
// take it. MT_SOFTMAX_COLUMN_STAGED=1/-1 forces tier 4b on/off, MT_SOFTMAX_COLUMN_PACKS=-1
// turns both off (for comparisons).
template <typename T, bool Log, bool Bwd>
bool launch_column_tiers(const Ptrs& p, SoftmaxShape s) {
  static const bool turned_off = env_int("MT_SOFTMAX_COLUMN_PACKS", 0) < 0;
  if (turned_off) return false;
  if (prefers_column_slab<T>(s) && launch_column_slab_tier<T, Log, Bwd>(p, s)) return true;
  static const int staged = env_int("MT_SOFTMAX_COLUMN_STAGED", 0);
  constexpr int N = pack_size<T>();
  auto packs_of = [&](int n) { return s.inner % n == 0 && p.aligned_to(n * int(sizeof(T))); };
  // Tier 4b where tier 4a's tiles would be narrower than a line (or where it is preferred),
  // else tier 4a, in packs of n elements.
  const auto in_packs = [&](auto n_c, bool narrow_packs, bool small_blocks, bool prefer_staged) {
    constexpr int n = decltype(n_c)::value;
    const ColumnPlan plan = column_register_plan<T, n, Bwd>(s, narrow_packs, small_blocks);
    const bool narrow_tile =
        plan.tx * n * int64_t(sizeof(T)) < 128 && plan.tx < ceil_div(s.inner, n);
    if (staged > 0 || (staged == 0 && (narrow_tile || prefer_staged)))
      if (launch_column_staged_tier<T, n, Log, Bwd>(p, s)) return true;
    return launch_column_tier<T, n, Log, Bwd>(p, s, plan);
  };
  // 16-bit: tier 4a's blocks of 128 threads, and tier 4b from 64 steps forward, past 64 backward:
  // registers hold 16-bit values and convert them at each use; shared memory measured faster
  // (forward [64, 128, 56, 56]: 47.9 -> 42.7 us; shorter axes leave its blocks too little to do:
  // [16, 21, 256, 256] 37.7 -> 102.5 us). H200 kernel times, backward float16 (bfloat16 alike),
  // two rounds: [64, 128, 56, 56] 45.3 -> 41.6 us, [8, 128, 8192] 18.4 -> 16.7 in tier 4b;
  // [16, 21, 256, 256] 38.0 -> 36.4, [32, 64, 3136] 14.9 -> 13.8 in 4a's smaller blocks (4b:
  // 16.2), [4, 96, 16384] 14.1 either way (4a's smaller blocks: 15.0).
  constexpr bool k16Bit = sizeof(T) == 2;
  if (packs_of(N)) {
    const bool prefer_staged = k16Bit && s.axis > (Bwd ? 64 : 63);
    return in_packs(std::integral_constant<int, N>(), false, k16Bit, prefer_staged);
  }
  if constexpr (sizeof(T) == 2) {
    if (packs_of(4)) return in_packs(std::integral_constant<int, 4>(), true, false, false);
  }
  return launch_column_tier<T, 1, Log, Bwd>(p, s, column_register_plan<T, 1, Bwd>(s, true, false));
}

// Tier 4: inner > 1.
template <typename T, bool Log, bool Bwd>
void launch_inner_tier(const Ptrs& p, SoftmaxShape s) {
  // The group in shared memory or registers (of a cluster), when the axis allows.
  if (launch_column_tiers<T, Log, Bwd>(p, s)) return;
  constexpr int N = pack_size<T>();
  const DeviceInfo& dev = device_info();
  const int64_t npk = ceil_div(s.inner, N);
  // Threads along inner: 8 (128-byte segments) unless that leaves too few tiles to fill the GPU;
  // never below 2 (32-byte sectors).
  int64_t tx = std::min<int64_t>(8, next_pow2(npk));
  while (tx > 2 && s.outer * ceil_div(npk, tx) < 2 * dev.sm_count) tx /= 2;
  // A short axis leaves threads along it idle: hand them to inner instead.
  const int64_t ty = std::min<int64_t>(kInnerThreads / tx, next_pow2(s.axis));
  tx = std::max<int64_t>(tx, std::min<int64_t>(kInnerThreads / ty, next_pow2(npk)));
  const int64_t tiles = ceil_div(npk, tx);
  const bool vec = p.aligned() && (s.inner * int64_t(sizeof(T))) % 16 == 0;
  const bool onchip = inner_tier_smem<T, Bwd>(s.axis, int(tx), true) <= kInnerOnchipBytes;
  const int64_t smem = inner_tier_smem<T, Bwd>(s.axis, int(tx), onchip);
  auto kernel = softmax_inner_kernel<T, Log, Bwd>;
  allow_dynamic_smem(kernel, smem);
  const int64_t fill = int64_t(blocks_per_sm(kernel, kInnerThreads, smem)) * dev.sm_count;
  const int grid = int(std::min(s.outer * tiles, fill));
  kernel<<<grid, kInnerThreads, smem>>>(static_cast<const T*>(p.a),
                                               static_cast<const T*>(p.b), static_cast<T*>(p.out),
                                               s.outer, s.axis, s.inner, log2_exact(int(tx)),
                                               tiles, vec, onchip);
  MT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_inner_dim_tiers(const Ptrs& p, DType dtype, SoftmaxShape s, bool log, bool bwd) {
  const char* name = bwd ? (log ? "log_softmax_backward_cuda" : "softmax_backward_cuda")
                         : (log ? "log_softmax_cuda" : "softmax_cuda");
  MT_DISPATCH_FLOATING_TYPES(dtype, name, [&] {
    if (bwd && log)
      launch_inner_tier<scalar_t, true, true>(p, s);
    else if (bwd)
      launch_inner_tier<scalar_t, false, true>(p, s);
    else if (log)
      launch_inner_tier<scalar_t, true, false>(p, s);
    else
      launch_inner_tier<scalar_t, false, false>(p, s);
  });
}

}  // namespace softmax_launch
}  // namespace mt
