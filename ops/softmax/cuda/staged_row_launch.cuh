// The launches of tiers 1, 2 and 3a (softmax_cuda.cu's ladder picks the tier; the kernel is
// staged_row_tier.cuh's): which staged-row kernel a row takes, its ring in shared memory, the
// lanes tier's shape, a block a row, and tier 3a's clusters (a cluster a row, or persistent ones
// that loop over rows).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.h"
#include "ops/common/launch.cuh"
#include "ops/softmax/cuda/staged_row_tier.cuh"
#include "ops/softmax/cuda/tier_launch.cuh"

namespace mt {
namespace softmax_launch {

// Most packs a lane holds before rows move to the block tier (at most lanes_row_max_packs).
template <typename T, bool Bwd>
int lanes_tier_max_packs() {
  static const int forced = env_int("MT_SOFTMAX_LANE_PACKS", 0);
  constexpr int kMax = lanes_row_max_packs<T, Bwd>();
  return forced > 0 ? std::min(forced, kMax) : kMax;
}

// Ring depth of tier 3a's clusters. Persistent ones (a few blocks an SM, each looping over rows)
// keep a few rows in flight behind the one being reduced, but not so many that blocks stop
// sharing an SM; capped by the block's shared-memory limit. A cluster a row needs one stage: the
// scheduler overlaps clusters instead (as it does the lanes and block tiers' blocks, one stage
// always).
template <bool Bwd>
int row_ring_stages(int threads, int packs, bool persistent) {
  static const int forced = env_int("MT_SOFTMAX_STAGES", 0);
  const int64_t stage = row_ring_bytes<Bwd>(1, threads, packs);
  int stages = forced > 0 ? forced : persistent ? int(std::clamp<int64_t>((48 << 10) / stage, 2, 4)) : 1;
  while (stages > 1 && stage * stages > device_info().smem_per_block_optin - 2048) --stages;
  return stages;
}

// Whether misaligned rows (not `vec`) of group G may take the Shifted kernels: where
// misaligned_rows_shifted says so, and every tensor at the same offset within 16 bytes.
template <typename T, bool Bwd, RowGroup G>
bool shifts_rows(const Ptrs& p, bool vec) {
  return misaligned_rows_shifted<T, Bwd, G>() && !vec && p.same_offset(16);
}

// The columns a launch of group G plans its packs for: a row the Shifted kernels read spans up
// to one pack more than its own, where the group holds that many (`fits(columns)`); else the
// row's own (and staged_row_kernel_for takes a misaligned row element by element).
template <typename T, bool Bwd, RowGroup G, typename Fits>
int64_t planned_cols(const Ptrs& p, int64_t cols, bool vec, Fits fits) {
  const int64_t shifted = cols + pack_size<T>() - 1;
  return shifts_rows<T, Bwd, G>(p, vec) && fits(shifted) ? shifted : cols;
}

// Whether `threads` would fill the GPU (2048 resident threads an SM) fewer than `fills` times
// over: short forward grids. The lanes tier spreads them over more lanes and reads them with the
// Full kernel, and the block tier takes them instead (twice), or gives one pack a thread (once).
inline bool under_gpu_fills(int64_t threads, int fills) {
  return threads < int64_t(fills) * 2048 * device_info().sm_count;
}

// The 16-bit backward's aligned rows whose threads own every pack: the Full kernel, y and dy
// loaded straight into registers and held as words (loads_direct, kBwdWords). Lanes at one pack
// a lane on every grid, at two on grids of under two fills of the GPU (H200 kernel times, two
// rounds, the ring -> Full: [1024, 512] float16 2.91 -> 2.62 us, bfloat16 2.89 -> 2.59; [1048576,
// 512] 731 -> 740, where the ring stays).
template <typename T, int PACKS, bool Bwd, RowGroup G>
bool bwd_takes_words(int64_t rows, int64_t cols, bool vec, int64_t packs) {
  if constexpr (Bwd && G == RowGroup::kLanes && sizeof(T) == 2)
    return vec && packs * pack_size<T>() == cols &&
           (PACKS == 1 || under_gpu_fills(rows * (packs / PACKS), 2));
  return false;
}

// A staged-row kernel and whether it loads its packs straight into registers (loads_direct of
// the same template arguments), so that its launch gives it a ring in shared memory exactly when
// it reads one.
template <typename T>
struct StagedKernel {
  void (*fn)(const T*, const T*, T*, int64_t, int64_t, int, int, int, bool);
  bool direct;
};
template <typename T, int PACKS, bool Log, bool Bwd, RowGroup G, bool Shifted = false,
          bool Full = false, bool Held = false>
StagedKernel<T> staged_kernel() {
  return {softmax_staged_row_kernel<T, PACKS, Log, Bwd, G, Shifted, Full, Held>,
          loads_direct<T, Log, Bwd, PACKS, G, Held, Full>()};
}

// The staged-row kernel: the Shifted one for misaligned rows that shifts_rows admits and whose
// group holds `packs` packs of a row (planned_cols), else the one for aligned rows, which takes
// misaligned ones element by element. (Shifted kernels are instantiated only where
// misaligned_rows_shifted holds.) `Held`: the held rows' or held blocks' kernel (aligned rows;
// a block's the Full one, a cluster's where its threads' packs are the row's: `packs` ==
// cols / N).
template <typename T, int PACKS, bool Log, bool Bwd, RowGroup G, bool Held = false>
auto staged_row_kernel_for(const Ptrs& p, int64_t rows, int64_t cols, bool vec, int64_t packs) {
  if constexpr (Held && G == RowGroup::kBlock) {
    return staged_kernel<T, PACKS, Log, Bwd, G, false, true, true>();
  } else if constexpr (Held) {
    if (packs * pack_size<T>() == cols)
      return staged_kernel<T, PACKS, Log, Bwd, G, false, true, true>();
    return staged_kernel<T, PACKS, Log, Bwd, G, false, false, true>();
  }
  if constexpr (misaligned_rows_shifted<T, Bwd, G>())
    if (shifts_rows<T, Bwd, G>(p, vec) && packs * pack_size<T>() >= cols + pack_size<T>() - 1)
      return staged_kernel<T, PACKS, Log, Bwd, G, true>();
  // The forward's aligned rows that fill their group's packs exactly take the Full kernel:
  // float32 rows of a block (H200 kernel times, two rounds: [1024, 2048] 6.37-6.40 -> 6.02 us,
  // [1024, 10240] 22.3 -> 21.9, [1024, 4096] 9.8-10.0 -> 9.8-9.9, [16384, 4096] 130.9-131.4 ->
  // 131.7-132.2, [4096, 8192] 66.6-66.8 -> 66.9-67.3; float16 and bfloat16 alike either way on
  // [1024, 2048-10240], [16384, 4096], [2048, 32768], and keep the one kernel), and 16- and
  // 32-bit rows of lanes whose threads would not fill the GPU twice over (H200, two rounds:
  // [65536, 32] float32 6.53-6.56 -> 6.27-6.37, float16 4.13-4.22 -> 4.03-4.10; [1024, 512]
  // bfloat16 2.56-2.59 -> 2.46-2.47; [32, 64, 16, 16] bfloat16 2.40-2.43 -> 2.30-2.31; [32, 64,
  // 32, 32] float32 6.34 -> 6.24; the rest within 1%). On long grids it lost 1-2% in 16-bit
  // ([2097152, 32] bfloat16 65.9 -> 67.5, [524288, 128] float16 66.6 -> 67.7, [32, 64, 128, 128]
  // float16 34.3 -> 35.0). float64 rows of a block take it on such short grids too: at 60-64
  // registers (42 not Full) it loses blocks an SM, which long grids and blocks of 640 threads
  // felt (H200, two rounds: [1024, 512] 5.63 / 5.68 -> 5.07 / 5.07 us, [1024, 1024] 8.29 / 8.35
  // -> 7.66 / 7.54, [1024, 4096] 21.78 / 21.86 -> 20.53 / 20.70, [1024, 8192] 41.17 / 40.78 ->
  // 38.30 / 38.43; everywhere, [1024, 10240] 47.9 -> 59.4, [16384, 4096] 259.8 -> 262.4).
  // float32 lanes take it on long grids too (sm_90: 304 instructions and 26 registers against
  // 464 and 23 at two packs a lane; H200 kernel times, two rounds: [131072, 64] 18.58 / 19.74 ->
  // 18.38 / 19.07 us, [32, 64, 128, 128] 66.06 / 65.23 -> 65.22 / 65.58, [524288, 128] 128.94 /
  // 129.04 -> 128.56 / 128.75, [2097152, 32] alike), and so do 16-bit lanes of one pack, which
  // grids of up to two fills at the lanes' default count take (launch_lanes_tier; QuACK's shape
  // for rows of 64, which ran 7% ahead of the kernel that tests its packs). H200 kernel times,
  // two rounds: [131072, 64] float16 10.88 / 10.82 -> 10.40 / 10.43 us, bfloat16 10.94 / 10.88
  // -> 10.56 / 10.59; [262144, 64] 19.71 / 19.71 -> 18.85 / 18.78; [260000, 32] 10.72 / 10.69
  // -> 10.37 / 10.40; [140000, 32] 6.82 / 6.75 -> 6.53 / 6.53; in the benchmark's regime [32,
  // 64, 64, 64] 11.17 / 11.15 -> 10.86 / 10.82. Two packs a lane on the Full kernel lost again
  // ([524288, 128] float16 66.9 / 67.1 -> 67.7 / 67.7, [2097152, 32] 66.8 -> 67.1 / 67.0).
  constexpr bool kFullAlways =
      ((G == RowGroup::kBlock || G == RowGroup::kLanes) && sizeof(T) == 4) ||
      (G == RowGroup::kLanes && sizeof(T) == 2 && PACKS == 1);
  if constexpr (Bwd && G == RowGroup::kLanes && sizeof(T) == 2)
    if (bwd_takes_words<T, PACKS, Bwd, G>(rows, cols, vec, packs))
      return staged_kernel<T, PACKS, Log, Bwd, G, false, true>();
  constexpr bool kFullShort = (G == RowGroup::kLanes && sizeof(T) <= 4) ||
                              (G == RowGroup::kBlock && sizeof(T) == 8);
  if constexpr ((kFullAlways || kFullShort) && !Bwd)
    if (vec && packs * pack_size<T>() == cols &&  // packs / PACKS below: a row's threads
        (kFullAlways || under_gpu_fills(rows * (packs / PACKS), 2)))
      return staged_kernel<T, PACKS, Log, Bwd, G, false, true>();
  return staged_kernel<T, PACKS, Log, Bwd, G>();
}

// Tiers 1 and 2: a block for each group of `rows_per_block` rows (more than INT32_MAX blocks'
// worth of rows, if ever, in several launches: the kernel takes one pass).
template <typename T, int PACKS, bool Log, bool Bwd, RowGroup G, bool Held = false>
void launch_staged(const Ptrs& p, int64_t rows, int64_t cols, int chunk, int lanes_log2,
                   int threads, int64_t rows_per_block, bool vec) {
  const int group_threads = G == RowGroup::kLanes ? 1 << lanes_log2 : threads;
  const int64_t packs = int64_t(group_threads) * PACKS;
  const StagedKernel<T> chosen =
      staged_row_kernel_for<T, PACKS, Log, Bwd, G, Held>(p, rows, cols, vec, packs);
  const auto kernel = chosen.fn;
  const int64_t smem = chosen.direct ? 0 : row_ring_bytes<Bwd>(1, threads, PACKS);
  allow_dynamic_smem(kernel, smem);
  const int64_t launch_rows = int64_t(INT32_MAX) * rows_per_block;
  for (int64_t first = 0; first < rows; first += launch_rows) {
    const int64_t n = std::min(rows - first, launch_rows), at = first * cols;
    kernel<<<unsigned(ceil_div(n, rows_per_block)), threads, smem>>>(
        static_cast<const T*>(p.a) + at, Bwd ? static_cast<const T*>(p.b) + at : nullptr,
        static_cast<T*>(p.out) + at, n, cols, chunk,
        staged_block_shape(threads, lanes_log2), 1, vec);
    MT_CUDA_CHECK_LAUNCH();
  }
}

// Tier 1: `lanes` threads a row (a power of two <= 32), PACKS packs a lane. A lane takes 4
// packs once the row has them (the two butterfly reductions cost the same per lane whatever it
// holds: at 4 values a lane they made [524288, 128] float32 instruction-bound), but a forward
// row keeps at least 8 lanes in float32 and 2 in 16-bit, measured best on an H100:
// [2097152, 32] float32 8 lanes x 1 pack 190 us, 2 x 4 205 us; float16 2 x 2 111 us, 1 x 4
// 147 us; [524288, 128] float16 4 x 4 96 us, 8 x 2 100 us. float32 rows of up to 8 packs keep 4
// lanes, two packs a lane held in registers (two loads in flight a thread, one butterfly step
// fewer; H200 kernel times: [2097152, 32] 138.6 -> 131.1 us at 4 x 2, 166.7 at 2 x 4 in the
// ring). The backward holds y and dy in registers: half of lanes_row_max_packs a lane.
// MT_SOFTMAX_LANE_MIN_LANES overrides the least lane count.
template <typename T, bool Log, bool Bwd>
void launch_lanes_tier(const Ptrs& p, int64_t rows, int64_t cols, bool vec) {
  constexpr int N = pack_size<T>();
  const auto lanes_hold = [](int64_t c) {
    return ceil_div(c, int64_t(N)) <= 32 * lanes_row_max_packs<T, Bwd>();
  };
  const int64_t npk =
      ceil_div(planned_cols<T, Bwd, RowGroup::kLanes>(p, cols, vec, lanes_hold), N);
  static const int forced_min_lanes = env_int("MT_SOFTMAX_LANE_MIN_LANES", 0);
  const int min_lanes = forced_min_lanes > 0 ? forced_min_lanes
                        : Bwd                ? 1
                        : sizeof(T) == 4     ? (npk <= 8 ? 4 : 8)
                        : sizeof(T) == 2     ? 2
                                             : 1;
  static const int forced_min_packs = env_int("MT_SOFTMAX_LANE_MIN_PACKS", 0);
  const auto lanes_for = [&](int min_packs) {
    min_packs = std::clamp(min_packs, 1, lanes_row_max_packs<T, Bwd>());
    return int(std::clamp<int64_t>(next_pow2(ceil_div(npk, min_packs)),
                                   std::min<int64_t>(min_lanes, next_pow2(npk)), 32));
  };
  // 16-bit forward rows of 16 or 32 packs (128 or 256 values) take two packs a lane, 8 or 16
  // lanes a row: H200 kernel times, two rounds against four packs, [262144, 128] float16 34.9-35.2
  // -> 34.2 us, bfloat16 35.0-35.1 -> 34.0-34.3, [524288, 128] float16 66.0-67.0 -> 65.3-66.5,
  // bfloat16 66.6 -> 66.1-66.3; [131072, 256] float16 35.3-35.4 -> 34.4-34.5, bfloat16 34.8-35.0
  // -> 34.3, [262144, 256] and [65536, 256] alike. Not rows of 25 packs ([262144, 200] float16
  // 56.1-56.6 -> 58.5-58.7), nor float32 rows of 128 (131.3 -> 132.2 us).
  const int default_min_packs = Bwd ? lanes_row_max_packs<T, Bwd>() / 2
                                : sizeof(T) == 2 && (npk == 16 || npk == 32) ? 2
                                                                            : 4;
  int lanes = lanes_for(forced_min_packs > 0 ? forced_min_packs : default_min_packs);
  // A forward whose threads would not fill the GPU twice over spreads its rows over more lanes,
  // two packs a lane: [131072, 64] float16 18.0 -> 15.3 us on an H100 (at 15 waves, [524288,
  // 128] float16, four packs a lane stay faster). 16-bit rows of up to 8 packs, which load
  // straight into registers (loads_direct), one pack a lane: H100 kernel times, three rounds,
  // [65536, 32] float16 5.7 -> 5.15 us, bfloat16 alike; [131072, 64] 14.8 -> 14.2; [65536, 64]
  // 8.2 -> 7.95 (at 16 packs alike, at 32 slower: [65536, 256] 25.1 -> 25.25; float32 rows gained
  // nothing: [16384, 128] 8.2 -> 8.4). float32 rows of up to 8 packs keep one pack a lane there
  // too (at two, [65536, 32] 6.2 -> 6.6 us on an H200).
  if (!Bwd && forced_min_packs <= 0 && under_gpu_fills(rows * lanes, 2))
    lanes = lanes_for(sizeof(T) <= 4 && npk <= 8 ? 1 : 2);
  const int packs = next_pow2(ceil_div(npk, lanes));
  MT_ASSERT((packs <= lanes_row_max_packs<T, Bwd>()), "lanes tier got ", cols, " columns");
  // Long grids of float32 and float64 rows run in blocks of 64 threads (finer blocks, as QuACK's
  // 128 threads of 8 rows). H200 kernel times, two rounds, float32 at 256 threads -> 64 (128 in
  // brackets): forward [524288, 128] 130.4-130.5 -> 128.5 us (130.5-130.6), [67108, 1000]
  // 132.0-132.1 -> 130.8-131.1 (131.2-131.3), [131072, 64] 19.3 -> 18.9 (18.9); [2097152, 32],
  // which took 128 before, 127.6-127.7 -> 127.4-127.5; backward (one round) [131072, 64] 27.7 ->
  // 27.1 (27.2), [524288, 128] 187.3 -> 186.5 (186.6), [67108, 1000] alike. float64 at 256 -> 64:
  // forward [32, 64, 64, 64] 35.4 -> 34.5, [32, 64, 128, 128] 129.5 -> 127.7, [524288, 128] 257.2
  // -> 254.4, [131072, 64] 35.1 -> 34.5 ([2097152, 32] alike); backward 0.5-1.8% faster on the
  // same shapes. 16-bit rows did not follow (within 1% either way at 64 and 128 in the forward;
  // the backward's [131072, 64] float16 15.9 -> 16.9 at both).
  static const int forced_threads = env_int("MT_SOFTMAX_LANE_THREADS", 0);
  const int block_threads =
      forced_threads > 0 ? std::clamp(forced_threads / 32 * 32, 32, kLanesTierThreads)
      : sizeof(T) >= 4 && !under_gpu_fills(rows * lanes, 2) ? kLanesTierThreads / 4
                                                             : kLanesTierThreads;
  auto run = [&](auto packs_c) {
    constexpr int P = decltype(packs_c)::value;
    if constexpr (P <= lanes_row_max_packs<T, Bwd>())
      launch_staged<T, P, Log, Bwd, RowGroup::kLanes>(p, rows, cols, int(npk), log2_exact(lanes),
                                                      block_threads, block_threads / lanes, vec);
  };
  switch (packs) {
    case 1: return run(std::integral_constant<int, 1>());
    case 2: return run(std::integral_constant<int, 2>());
    case 4: return run(std::integral_constant<int, 4>());
    case 8: return run(std::integral_constant<int, 8>());
  }
}

// The block size for rows of `cols` over `cs` blocks (tier 3a's clusters; 1: tier 2's block a
// row), PACKS packs a thread.
template <typename T, int PACKS>
int row_block_threads(int64_t cols, int64_t cs) {
  return int(ceil_div(ceil_div(ceil_div(cols, pack_size<T>()), cs), PACKS * 32) * 32);
}

// Blocks of the tiers 2-3a kernel of `threads`, PACKS packs a thread and one ring stage, that
// fit an SM at once.
template <typename T, int PACKS, bool Log, bool Bwd, RowGroup G>
int staged_blocks_per_sm(int threads) {
  auto kernel = softmax_staged_row_kernel<T, PACKS, Log, Bwd, G>;
  return blocks_per_sm(kernel, threads, row_ring_bytes<Bwd>(1, threads, PACKS));
}

// Whether tier 3a's `rows * cs` blocks of PACKS packs a thread all fit on the GPU at once.
template <typename T, int PACKS, bool Log, bool Bwd>
bool cluster_rows_fit(int64_t rows, int64_t cols, int64_t cs) {
  const int threads = row_block_threads<T, PACKS>(cols, cs);
  if (threads > kRowTierMaxThreads) return false;
  const int fit = staged_blocks_per_sm<T, PACKS, Log, Bwd, RowGroup::kCluster>(threads);
  return rows * cs <= int64_t(fit) * device_info().sm_count;
}

// Whether those clusters are all resident at once by the cluster occupancy query, which also
// places each cluster's blocks within one GPC (cluster_rows_fit counts blocks an SM only).
template <typename T, int PACKS, bool Log, bool Bwd>
bool cluster_rows_active(int64_t rows, int64_t cols, int64_t cs) {
  const int threads = row_block_threads<T, PACKS>(cols, cs);
  if (threads > kRowTierMaxThreads || cs > kMaxClusterBlocks) return false;
  auto kernel = softmax_staged_row_kernel<T, PACKS, Log, Bwd, RowGroup::kCluster>;
  return rows <= active_clusters(kernel, int(cs), threads, row_ring_bytes<Bwd>(1, threads, PACKS));
}

// MT_SOFTMAX_CLUSTER_PERSISTENT: -1 unset, 0/1 tier 3a's clusters forced to a cluster a row /
// persistent (launch_cluster_row_tier), which also keeps the backward's wide packs
// (backward_rows_take_double_packs).
inline int forced_cluster_persistent() {
  static const int forced = env_int("MT_SOFTMAX_CLUSTER_PERSISTENT", -1);
  return forced;
}

// Tier 3a: each row over the `cs` blocks of a cluster, staged in their rings. `persistent`
// (MT_SOFTMAX_CLUSTER_PERSISTENT=0/1 forces it off/on): as many clusters as fit at once, looping
// over rows with a ring of several stages; else a cluster a row with one stage (the scheduler
// overlaps them). False when such clusters cannot run here. `Held`: the held rows' kernel
// (kHeldPacks), aligned rows whose clusters all fit at once, else false.
template <typename T, int PACKS, bool Log, bool Bwd, bool Held = false>
bool launch_cluster_row_tier(const Ptrs& p, int64_t rows, int64_t cols, int cs, bool persistent,
                             bool vec) {
  const int max_threads = Held ? kHeldThreads : kRowTierMaxThreads;
  const int64_t plan =
      Held ? cols : planned_cols<T, Bwd, RowGroup::kCluster>(p, cols, vec, [&](int64_t c) {
        return row_block_threads<T, PACKS>(c, cs) <= kRowTierMaxThreads;
      });
  const int chunk = int(ceil_div(ceil_div(plan, pack_size<T>()), cs));
  const int threads = row_block_threads<T, PACKS>(plan, cs);
  if (threads > max_threads || (Held && !vec)) return false;
  // (Held: the packs its threads hold, which says whether they own all of them.)
  const auto kernel = staged_row_kernel_for<T, PACKS, Log, Bwd, RowGroup::kCluster, Held>(
                          p, rows, cols, vec, int64_t(Held ? threads * PACKS : chunk) * cs)
                          .fn;
  const int forced_persistent = forced_cluster_persistent();
  if (forced_persistent >= 0) {
    persistent = forced_persistent != 0;
  } else if (persistent && sizeof(T) == 8 && !Bwd) {
    // The float64 forward's rows past 16 blocks of 512 threads: a cluster a row where clusters
    // of one stage keep as many rows on chip as the persistent ones' rings, and at least twice
    // as many clusters, so that the scheduler overlaps whole clusters (one block's reductions
    // and stores with another's loads) rather than a ring overlapping only the next row's
    // loads. At 40 registers two blocks of up to ~640 threads fit an SM: H200 kernel times, two
    // rounds, persistent -> a cluster a row (14 clusters at once against 7 of two stages):
    // [2048, 151936] 1,805-1,806 -> 1,535 us, [300, 151936] 273-274 -> 234-235, [1024, 140000]
    // 979-981 -> 781-782, [1000, 180000] 1,142-1,145 -> 908-913. [4096, 200000] keeps its
    // persistent clusters (4,655-4,666 us either way; a cluster a row forced: 5,601-5,607), as
    // does [512, 262144], whose ring holds one stage (777-779; a cluster a row 833-834).
    const int ring = row_ring_stages<Bwd>(threads, PACKS, true);
    const int looping =
        active_clusters(kernel, cs, threads, row_ring_bytes<Bwd>(ring, threads, PACKS));
    const int one_stage =
        active_clusters(kernel, cs, threads, row_ring_bytes<Bwd>(1, threads, PACKS));
    persistent = one_stage < std::max(ring, 2) * looping;
  }
  const int stages = row_ring_stages<Bwd>(threads, PACKS, persistent);
  const int64_t smem = row_ring_bytes<Bwd>(stages, threads, PACKS);
  allow_dynamic_smem(kernel, smem);
  const int active = active_clusters(kernel, cs, threads, smem);
  if (active == 0 || (Held && rows > active)) return false;
  const int64_t clusters = std::min<int64_t>(rows, persistent ? active : INT32_MAX / cs);
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t config = cluster_config(clusters * cs, cs, threads, smem, &attr);
  // Held clusters lie along y, a row each, which the kernel reads from blockIdx.y
  // (staged_block_shape says why); they are one round (rows <= active), far under y's 65,535.
  if (Held) config.gridDim = dim3(unsigned(cs), unsigned(clusters));
  MT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const T*>(p.a),
                                   static_cast<const T*>(p.b), static_cast<T*>(p.out), rows, cols,
                                   chunk, staged_block_shape(threads, 0), stages, vec));
  return true;
}

// The backward's rows past 16 blocks of 512 threads' wide packs (float32 rows of 131K-262K values,
// 16-bit ones of 262K-524K), which wide_row_clusters gives 16 blocks of up to 1,024 threads and
// persistent clusters: a cluster a row of 16 blocks of twice the packs a thread (half the threads;
// QuACK's backward takes 16 blocks of 256) over many rows (twice the SMs or more), and over fewer
// where two of the wide packs' blocks would not fit an SM (past ~672 threads at their 48
// registers). There the persistent ring held one block an SM on 112 of the 132 SMs (seven 16-block
// clusters), and where its ring held one stage a cluster a row ran (one block an SM). H200 kernel
// times, two rounds, before -> after (the experiment's build, exp/bwd-cs8): float32 [2048, 151936]
// 925.9 / 930.1 -> 879.5 / 879.8 us, [300, 131080] 130.1 / 130.9 -> 119.9 / 119.6, [300, 152064]
// 139.5 / 139.3 -> 135.4 / 135.0; fewer rows, [64, 200000] 51.0 / 53.0 -> 47.7 / 47.6, [40, 256000]
// 45.1 / 45.5 -> 43.6 / 44.1; float16 [48, 524288] 55.6 / 54.4 -> 52.7 / 52.5, [64, 480000] 69.4 /
// 69.6 -> 68.3 / 68.6. Fewer rows of two such blocks an SM keep the persistent ring: there the new
// clusters lost ([16, 152064] 12.2 -> 12.9, [64, 152064] 35.0 -> 36.4, its log_softmax 35.1 ->
// 36.3; [128, 152064] 63.0 either way, [64, 160000] 37.6 -> 37.6) or won ([64, 131080] 35.1 ->
// 31.8). MT_SOFTMAX_CLUSTER_PERSISTENT=0/1 keeps the wide packs (a cluster a row / persistent).
// (launch_block_or_cluster asks it for the backward's 16- and 32-bit wide packs only.)
template <typename T, bool Log, int PACKS>
bool backward_rows_take_double_packs(int64_t rows, int64_t cols, int64_t cs, bool persistent) {
  if (!persistent || forced_cluster_persistent() >= 0) return false;
  const int threads = row_block_threads<T, PACKS>(cols, cs);
  return rows >= 2 * int64_t(device_info().sm_count) ||
         staged_blocks_per_sm<T, PACKS, Log, true, RowGroup::kCluster>(threads) < 2;
}

// Tiers 2 and 3a with PACKS packs a thread (`persistent`: tier 3a's clusters loop over rows, see
// launch_cluster_row_tier): false when the row needs more than 16 blocks.
template <typename T, int PACKS, bool Log, bool Bwd>
bool launch_block_or_cluster(const Ptrs& p, int64_t rows, int64_t cols, int64_t cs, bool vec,
                             bool persistent = false) {
  const int64_t npk = ceil_div(cols, pack_size<T>());
  if (cs == 1) {
    const int threads = row_block_threads<T, PACKS>(
        planned_cols<T, Bwd, RowGroup::kBlock>(p, cols, vec, [](int64_t c) {
          return row_block_threads<T, PACKS>(c, 1) <= kRowTierMaxThreads;
        }),
        1);
    // A block a row, not persistent even for wide rows that fill an SM ([2048, 32768] float16
    // 85% -> 92% of copy on an H100).
    launch_staged<T, PACKS, Log, Bwd, RowGroup::kBlock>(p, rows, cols, int(npk), 0, threads, 1,
                                                         vec);
    return true;
  }
  // A cluster a row pays off only when the clusters cover a good part of the GPU; one or two
  // rows on 16 SMs each run faster split over every SM (the split-row tier).
  const DeviceInfo& dev = device_info();
  if (cs > kMaxClusterBlocks || !dev.clusters || cols >= (int64_t(1) << 30) ||
      rows * cs < dev.sm_count / 2)
    return false;
  if constexpr (Bwd && sizeof(T) <= 4 && PACKS == block_row_packs<T, true, true>())
    if (backward_rows_take_double_packs<T, Log, PACKS>(rows, cols, cs, persistent))
      return launch_cluster_row_tier<T, 2 * PACKS, Log, Bwd>(p, rows, cols, int(cs), false, vec);
  return launch_cluster_row_tier<T, PACKS, Log, Bwd>(p, rows, cols, int(cs), persistent, vec);
}

}  // namespace softmax_launch
}  // namespace mt
