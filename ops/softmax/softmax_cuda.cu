// CUDA softmax / log_softmax, forward and backward: picks a kernel tier per (outer, axis, inner,
// dtype). Every tier reads and writes each element once when its reduction group fits on chip;
// the tiers differ in where the group lives. Kernels are in ops/softmax/cuda/*.cuh. This file
// picks the row tiers (launch_row_tiers, the ladder) and launches 2r and 2b itself; tiers 1, 2
// and 3a launch from cuda/staged_row_launch.cuh, 3b, 3c and 3d from cuda/long_row_launch.cuh;
// softmax_cuda_columns.cu picks and launches the column tiers (inner > 1).
//
//   tier  shape (inner == 1 unless said)            where a row lives              file
//   1     axis <= 32 lanes x 4-8 packs (~1K)        a warp's lanes, regs or smem   staged_row_tier
//   2     a row fits 1024 threads' packs            one block, smem staged         staged_row_tier
//   2r    backward, <= 512 or 1024 packs (16/32b)   one block, read twice (L1/L2)  reread_row_tier
//   2h    backward, rows of 131K-156K / 197K (16b)  a cluster's registers          reread_row_tier
//   3a    longer rows, sm_90, <= 16 blocks a row    a cluster, smem ring           staged_row_tier
//   3b    longer still (float64), sm_90             a cluster's smem (bwd dy: L2)  block_tier
//   2b    no clusters, a row fits shared memory     one block's shared memory      block_tier
//   3d    few rows past a cluster (e.g. [1, 1M])    the whole GPU's shared memory  grid_row_tier
//   3c    anything else, no cooperative launch      two passes, partials in HBM    split_row_tier
//   4c    inner > 1 short, slab <= 16 blocks' smem  a block/cluster's smem, flat   column_slab_tier
//   4b    inner > 1, axis <= ~16 blocks' smem       a block/cluster's smem         column_staged_tier
//   4a    inner > 1, axis <= ~16 blocks' registers  registers of a block/cluster   column_tier
//   4     inner > 1, longer axes                    a block's shared memory / L2   inner_tier
#include "ops/softmax/softmax_cuda.h"

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/errors.h"
#include "ops/common/launch.cuh"
#include "ops/softmax/cuda/long_row_launch.cuh"
#include "ops/softmax/cuda/reread_row_tier.cuh"
#include "ops/softmax/cuda/staged_row_launch.cuh"
#include "ops/softmax/cuda/tier_launch.cuh"

namespace mt {
namespace {

using namespace softmax_launch;

// Tier 3b: past this many bytes of a row on chip, one block per SM would be all that fits and
// the SM would idle between its load and store phases: split the row over more blocks.
constexpr int64_t kRowBlockBytes = 64 * 1024;

// Tier 2r (reread_row_tier.cuh, its measurements there): the backward's aligned 16- and 32-bit
// rows of many, up to 512 packs (a block of their packs rounded up to a warp, one trip) or of
// 1024 (512 threads, two trips), read twice. H200 kernel times, two rounds, against the block
// tier below (16-bit rows under 512 packs: one pack a thread, y and dy held in registers as
// words; else the ring): float16 [1024, 1024] 3.49 -> 2.72 us, [1024, 2048] 5.0 -> 4.32,
// [4096, 3000] 20.8 -> 19.25, [67108, 1000] 95.6 -> 93.2, bfloat16 alike; float32 [1024, 1024]
// 5.3 -> 4.21, [1024, 2048] 8.5-8.6 -> 7.3-7.4, [8192, 2048] 49.8-50.8 -> 47.2-47.5, [65536, 2048]
// 372.2-372.5 -> 362.8-363.1, [67108, 1000] 187.3 -> 183.0, [1024, 4096] 15.3-15.4 -> 14.4,
// [16384, 4096] 187.7-188.0 -> 184.3. 16-bit rows of 4096 and 8192 in the sweep's regime (the
// benchmark beside torch.compile, kernel times, two rounds, float16 / bfloat16): [1024, 4096] 8.8
// / 7.9-8.0 -> 7.6-7.7, [16384, 4096] 96.4 / 96.5-96.7 -> 93.6 / 94.5, [4096, 8192] 50.7-50.9 /
// 50.3-50.8 -> 48.4-49.6 / 48.7-49.2; [1024, 8192] alike in float16 (14.7-14.8), 14.5-14.6 ->
// 14.8-14.9 in bfloat16. Lost: rows whose second trip left threads idle ([8192, 6144], 768 packs:
// 73.3 -> 77.7; [1024, 10240], 1280: 18.2 -> 18.8), three or four trips (float16 [2048, 12288]
// 38.7 -> 39.1, [4096, 16384] 96.6 -> 104-106; float32 [1024, 8192] 27.2-27.4 -> 30.1-30.2,
// [4096, 8192] 96.4 -> 104-107); blocks of 256 threads at two packs each ran [1024, 4096] 7.50 us
// against 7.77 but [16384, 4096] 94.5 against 94.0 and [1024, 8192] 17.2 against 14.75.
// MT_SOFTMAX_REREAD=0 turns it off, 1 takes it for every aligned 16- or 32-bit backward row of
// many that reaches it.
template <typename T>
bool backward_rereads_rows(bool vec, int64_t npk) {
  static const int forced = env_int("MT_SOFTMAX_REREAD", -1);
  return sizeof(T) <= 4 && vec && forced != 0 &&
         (forced == 1 || npk <= kRereadThreads || npk == 2 * kRereadThreads);
}

// Tier 2r's block for `packs` packs (a row's, or a cluster block's share): a thread a pack,
// rounded up to a warp, at most kRereadThreads (past that, more trips).
inline int reread_threads(int64_t packs) {
  return int(std::min<int64_t>(kRereadThreads, ceil_div(packs, int64_t(32)) * 32));
}

template <typename T, bool Log>
void launch_reread_rows(const Ptrs& p, int64_t rows, int64_t cols) {
  const int threads = reread_threads(cols / pack_size<T>());
  for (int64_t first = 0; first < rows; first += INT32_MAX) {
    const int64_t n = std::min<int64_t>(rows - first, INT32_MAX), at = first * cols;
    softmax_bwd_reread_kernel<T, Log><<<unsigned(n), threads>>>(
        static_cast<const T*>(p.a) + at, static_cast<const T*>(p.b) + at,
        static_cast<T*>(p.out) + at, cols);
    MT_CUDA_CHECK_LAUNCH();
  }
}

// Tier 2r over clusters: few long aligned 16- and 32-bit backward rows of 16,384 to 32,768 packs
// (131,072 to 262,144 16-bit values, 65,536 to 131,072 floats), a 16-block cluster a row, each
// block reading its share twice (two to four trips), where every row's cluster is resident at once.
// H200 kernel times, two rounds, against the ring's clusters: float16 [8, 131072] 4.88-4.96 ->
// 4.30-4.34 us, [4, 262144] 6.08-6.14 -> 4.88-4.91, [16, 262144] 10.72-10.74 -> 10.22-10.27, [20,
// 151936] 8.0 -> 7.46, bfloat16 alike; float32 [8, 131072] 9.38-9.44 -> 6.22-6.46 ([32, 131072]
// alike in every dtype). Rows in two rounds lost ([64, 152064] float16 20.8-20.9 -> 24.3, float32
// 34.3-35.1 -> 46.3), as did 8 blocks a row ([8, 131072] float16 4.45, [16, 262144] 11.8) and
// longer rows, whose 16 blocks leave the GPU idle ([1, 1048576] float16 6.7 -> 10.9, [1, 16777216]
// 43.5 -> 254 in the sweep; float32 rows of 160K or more take the whole-GPU tier first).
// MT_SOFTMAX_REREAD_CLUSTER=0 turns them off, 1 takes them for every few aligned rows that reach
// them.
template <typename T, bool Log>
bool launch_reread_cluster_rows(const Ptrs& p, int64_t rows, int64_t cols) {
  static const int forced = env_int("MT_SOFTMAX_REREAD_CLUSTER", -1);
  constexpr int cs = kMaxClusterBlocks;
  const int64_t npk = cols / pack_size<T>();
  const int threads = reread_threads(ceil_div(npk, int64_t(cs)));
  const auto kernel = softmax_bwd_reread_kernel<T, Log, true>;
  if (forced == 0 || (forced != 1 && (npk < int64_t(cs) * 2 * kRereadThreads ||
                                      npk > int64_t(cs) * 4 * kRereadThreads ||
                                      rows > active_clusters(kernel, cs, threads, 0))))
    return false;
  return launch_clustered(kernel, rows, cs, threads, 0, static_cast<const T*>(p.a),
                          static_cast<const T*>(p.b), static_cast<T*>(p.out), cols);
}

// Tier 2h (reread_row_tier.cuh): softmax's aligned 16- and 32-bit backward rows of 131,073 to
// 155,648 floats or 196,608 16-bit values (a block's share of a 16-block cluster, at 4 or 6 packs a
// thread, fills 128 threads or more and at most held_bwd_max_threads), held in registers, where
// more rows than those clusters all fit at once take them: within one round tier 2r's clusters
// ran faster ([8, 131072] float32 6.4 against 6.8 us, float16 4.3 against 4.9). H200 kernel times,
// two rounds, the tiers before (tier 3a's ring, persistent or a cluster a row) -> this: float32
// [64, 152064] 34.9 / 34.2 -> 33.1 / 33.0 us, [16, 152064] 12.1 / 12.3 -> 10.8 / 10.9, [128,
// 152064] 63.2 / 63.0 -> 59.6 / 59.7, [64, 131080] 34.3 / 34.2 -> 31.8 / 30.8, [300, 131080] 119.0
// / 119.4 -> 116.8 / 118.6, [2048, 151936] 878.6 / 878.9 -> 863.5 / 864.2; float16 [64, 152064]
// 20.5 / 20.7 -> 18.6 / 18.9, [2048, 151936] 473.5 / 473.3 -> 428.7 / 429.2. Not longer rows (at 6
// or 8 packs a thread, float32 [64, 170000] 40.6 -> 41.0-41.7, float16 [300, 300000] 133.1-133.8
// -> 136.0-136.9), nor 16-bit rows at 4 or 8 packs ([64, 152064] 19.1-20.5), nor log_softmax,
// whose accurate exp an element tied ([64, 152064] float32 34.8 / 35.2 -> 35.4 / 34.1 at 4 packs).
// MT_SOFTMAX_HELD_BWD=0 turns it off, 1 takes it wherever its block fits.
template <typename T, bool Log>
bool launch_held_cluster_rows(const Ptrs& p, int64_t rows, int64_t cols) {
  static const int forced = env_int("MT_SOFTMAX_HELD_BWD", -1);
  if constexpr (sizeof(T) <= 4 && !Log) {
    constexpr int cs = kMaxClusterBlocks;
    const int64_t share = ceil_div(cols / pack_size<T>(), int64_t(cs));
    const int64_t threads = ceil_div(share, int64_t(held_bwd_packs<T>()) * 32) * 32;
    const auto kernel = softmax_bwd_held_cluster_kernel<T, Log>;
    if (forced == 0 || threads < 128 || threads > held_bwd_max_threads<T>() ||
        (forced != 1 && (cols <= 131072 || rows <= active_clusters(kernel, cs, int(threads), 0))))
      return false;
    return launch_clustered(kernel, rows, cs, int(threads), 0, static_cast<const T*>(p.a),
                            static_cast<const T*>(p.b), static_cast<T*>(p.out), cols);
  }
  return false;
}

// Whether a backward row of many that one block holds takes the narrow packs (2 of y and 2 of dy
// a thread) rather than the wide (4 and 4): while that block is at most 512 threads. Past that,
// half as many threads a row measured faster (H200 kernel times, two rounds: float32 [1024, 8192]
// 28.6-28.7 -> 27.6-27.7 us, [512, 8192] 15.9-16.0 -> 15.4-15.5, [1024, 5120] 18.6 -> 18.0-18.1,
// [2048, 8192] 51.0-51.8 -> 50.1-51.0, [4096, 6144] 74.0 -> 73.6; float16 [1024, 16384] 28.5 ->
// 27.6-27.7, [512, 16384] 16.2-16.5 -> 15.4, [2048, 12288] 39.2-39.4 -> 38.8-38.9, [4096, 16384]
// 97.5 -> 97.0; bfloat16 alike). At 512 threads it tied ([16384, 4096] float32 188.2-188.4 either
// way; [1024, 8192] float16 15.8-16.9 -> 15.2-15.3, bfloat16 15.4-15.8 -> 15.2-15.9).
template <typename T>
bool backward_takes_narrow(int64_t npk) {
  return ceil_div(npk, int64_t(block_row_packs<T, true, false>())) <= 512;
}

// Whether a forward row of many that one block holds in narrow packs takes them (more threads a
// row) rather than the wide packs (fewer, longer threads; 16-bit rows then re-read the ring and
// take exp twice). float32 and float64: narrow up to 224 threads a row (rows of 256: below); past
// 256 wide measured faster (H100 kernel times: [1024, 8192] float32 25.9 -> 24.4 us, [1024, 10240]
// 33.5 -> 30.5; [1024, 2048] float64 19.1 -> 15.3). float32 rows of 256 narrow threads (4096
// values) take the wide packs too (128 threads of 32; H200 kernel times, two rounds, the benchmark
// beside torch.compile and Liger for the short grids: [4096, 4096] 34.1 / 33.8 -> 33.4 / 33.1 us,
// [1024, 4096] 9.23 / 9.10 -> 8.96 / 9.12, [2048, 4096] 17.6 either way; softmax_tune: [8192, 4096]
// 67.4 / 67.7 -> 67.1 / 66.7, [16384, 4096] 132.4 / 132.6 -> 132.4 / 131.7), not of 192 ([1024,
// 3072] 7.71 / 7.73 -> 7.95 / 7.81; [8192, 3072] 49.6 / 49.5 -> 49.5 / 49.0). (Softmax rows that
// 64-256 held threads fill, 2048-8192 floats or 4096-16384 16-bit values, take held blocks before
// any of this: held_block_rows.) 16-bit softmax rows, whose narrow blocks fit 32 registers a
// thread: narrow while three blocks fit an SM, so that one block's reductions overlap another's
// loads ([1024, 8192] 14.9 -> 14.2 us at 512 threads, [1024, 10240] 17.8 -> 17.4 at 640; [1024,
// 16384] 25.2 -> 26.2 at 1024: wide). At 256 threads, over a long grid (16 or more rounds of the
// blocks that fit) the wide packs' occupancy won at 48 registers ([16384, 4096] float16 96.5 ->
// 91.9 us) and ties at 32; over a short one it does not ([2048, 4096] 14.9 -> 15.3, [1024, 4096]
// 9.1 -> 10.0). float64 rows take the wide packs over a long grid at any block size (H200 kernel
// times: [67108, 1000] 287.9 -> 259.4 us, 64 threads of 16 doubles a row instead of 128 of 8; [32,
// 64, 512, 512] 2175 -> 2026), and, like float32's, over a short one past 224 narrow threads
// (1,793-2,048 doubles: 113-128 wide threads). H200 kernel times, two rounds, narrow -> wide:
// [1024, 2048] 12.29-12.70 -> 11.23-11.39 us, [2048, 2048] 21.2-21.4 -> 19.7-20.2, [8192, 2048]
// 72.3-72.5 -> 68.4-68.6, [1024, 2047] (misaligned) 14.56 -> 14.14; log_softmax [1024, 2048] 12.54
// -> 11.49-11.55, [4096, 2048] 39.2-39.4 -> 35.8-36.4; [1024, 1792] (224 threads) 11.81-11.87 ->
// 11.78-11.81. Shorter rows won only where their wide threads fill whole warps, and then only on
// grids of 1,024 rows or more ([1024, 1536] 10.24-10.66 -> 9.28-9.63: 96 threads; [4096, 1536]
// 29.5-29.7 -> 27.7-27.9; but [300, 1536] 5.3 -> 5.9, [1024, 1500] 10.6 -> 11.1-11.2, [1024,
// 1408] 9.8-9.9 -> 10.3-10.4): no rule for so narrow a band. [1024, 1344] 9.70 -> 9.95 (84 wide
// threads in a block of 96), [1024, 1280] 9.25-9.38 -> 9.73-9.79, [1024, 1024] 7.49 -> 7.74;
// earlier [1024, 512] 5.7 -> 6.7, [2048, 512] 8.1 -> 9.3. (The build that set the long-grid
// rule measured [1024, 2048] 12.9 -> 13.2, before the float64 kernels' exp_nonpositive and
// 40-register clusters.)
template <typename T, bool Log>
bool forward_takes_narrow(int64_t rows, int64_t npk) {
  constexpr int kNarrow = block_row_packs<T, false, false>();
  const int threads = int(ceil_div(ceil_div(npk, kNarrow), 32) * 32);
  if (threads > (sizeof(T) == 2 ? kRowTierMaxThreads : 224)) return false;
  if (sizeof(T) == 4 || (sizeof(T) == 2 && threads < 256)) return true;
  const int fit = staged_blocks_per_sm<T, kNarrow, Log, false, RowGroup::kBlock>(threads);
  if (threads > 256) return fit >= 3;  // 16-bit only: float32 and float64 stopped at 224 above
  return rows < 16 * int64_t(fit) * device_info().sm_count;
}

// Whether a forward row fits one block of wide packs (at most 1024 threads) of which two fit an
// SM at once: float64 rows past 512 threads take such a block rather than a cluster (H200 kernel
// times: [1024, 10240] 57.3 -> 48.3 us in a block of 640 threads, not 5 of 128; [2048, 9000]
// 99.8 -> 81.2; [600, 8200] 33.6 -> 27.9); one block an SM lost ([4096, 12288] 248 -> 262 us at
// 768 threads, [1024, 16384] 86.6 -> 90.7 at 1024).
template <typename T, bool Log>
bool wide_block_fits_twice(int64_t npk) {
  constexpr int kWide = block_row_packs<T, false, true>();
  const int64_t threads = ceil_div(ceil_div(npk, kWide), 32) * 32;
  if (threads > kRowTierMaxThreads) return false;
  return staged_blocks_per_sm<T, kWide, Log, false, RowGroup::kBlock>(int(threads)) >= 2;
}

// Whether a forward row that the lanes tier would give a warp of more than two packs a lane
// runs faster in a block of its own: when warps a row would not fill the GPU twice over, the
// block tier's shorter threads and 32 registers won (H100 kernel times: [1024, 1024] float16
// 5.0 -> 4.1 us, float32 6.8 -> 5.9; [2048, 1024] 6.3 -> 5.3, 9.0 -> 8.3). But a float32 or
// 16-bit softmax row whose lanes hold it in registers (32 values a lane: holds_row_in_ring) stays
// a warp's, as in QuACK's kernel, while its warps fill the GPU at most once. H200 kernel times,
// two rounds, block -> lanes: float32 [1024, 512] 3.02 / 3.07 -> 2.82 / 2.85 us, [1024, 768]
// 3.71 / 3.65 -> 3.62 / 3.60, [1024, 1024] 4.18 / 4.18 -> 3.97 / 3.97, [2048, 1024] 5.94 / 5.84
// -> 5.81 / 5.87; float16 [1024, 1024] 3.10 / 3.12 -> 2.94 / 2.98, [2048, 1024] 4.22 / 4.29 ->
// 3.95 / 3.98 (bfloat16 alike). Near two fills float32 lost: [16384, 1024] 33.6 / 33.4 -> 34.2 /
// 34.1.
template <typename T, bool Log>
bool forward_prefers_block(int64_t rows, int64_t npk, bool bwd) {
  if (bwd || npk <= 64 || !under_gpu_fills(rows * 32, 2)) return false;
  // Every such row of the lanes tier fits its lanes' registers: 32 values a lane at most.
  if constexpr (sizeof(T) <= 4 && !Log) return !under_gpu_fills(rows * 32, 1);
  return true;
}

// Whether a forward float32 or 16-bit row runs in a block of one pack a thread (Liger's launch
// shape) rather than narrow packs: when those blocks fill the GPU at most once (16-bit: at most
// half of it), each thread's chain of load, reductions and store is the shortest it can be (ncu,
// [1024, 512] float32: 6.4K SM active cycles at 4 packs a thread, 3.6K for Liger's kernel). H100
// kernel times: [1024, 512] float32 4.6 -> 4.0 us, [1024, 1024] 5.8 -> 5.3; at two fills it lost
// ([1024, 2048] 8.1 -> 9.3). [1024, 1024] float16 3.87 -> 3.68 us, bfloat16 3.84 -> 3.65 (two
// bench runs, torch.compile beside and not; softmax_tune 3.9 -> 3.8 in three rounds); at a whole
// fill 16-bit rows gained in some runs and lost in others ([2048, 1024] float16 5.12 -> 4.93,
// 4.10 -> 4.54; [1024, 2048] 5.02 -> 4.99, 3.81 -> 3.87). float64 lost ([1024, 1024] 9.6 -> 12.7).
template <typename T>
bool forward_takes_one_pack(int64_t rows, int64_t npk) {
  if (sizeof(T) == 8 || npk > kRowTierMaxThreads) return false;
  const int64_t threads = rows * ceil_div(npk, 32) * 32;
  return under_gpu_fills(sizeof(T) == 2 ? 2 * threads : threads, 1);
}

// A row over a cluster of wide packs, a cluster a row, so that one block's reductions and
// exchange overlap another's loads (H100 kernel times, against persistent clusters looping over
// rows with the next rows in flight: forward [2048, 151936] float32 1125 -> 986 us, [8192, 50304]
// 1166 -> 1137, float64 5370 -> 3214; backward [8192, 50304] float16 920 -> 873, [4096, 32000]
// float32 579 -> 550). A row that one block of 512 threads holds stays there; a longer one is
// split into blocks of about 256 threads (at most 16 blocks), so that more of them, and more of
// the rows' bytes, are resident on an SM at once than in the fewest blocks of up to 512 (H200
// kernel times, one build, forward: [2048, 151936] float32 778 -> 659 us, float16 395 -> 384;
// [8192, 50304] float16 492 -> 456; [128, 131072] float32 46.6 -> 40.3, float16 30.2 -> 25.0;
// [64, 152064] float32 34.0 -> 26.8, but float16 17.7 -> 18.6; float64 [4096, 32000] 678 ->
// 649. Backward: [2048, 151936] float16 567 -> 496, [8192, 50304] float64 3149 -> 2969; the
// rest alike. Blocks of about 320: between the two). A row that 16 such blocks cannot hold (the
// backward's float32 rows of 152K, the forward's float64 rows of 152K) takes 16 larger ones (up to
// big_threads), one an SM with two ring stages: persistent clusters, so that the next row's copies
// are in flight during this row's reductions (the float64 forward's only where clusters of one
// stage would not hold more rows: launch_cluster_row_tier) (backward [2048, 151936] float32, one
// H100 call: 1,808 us a cluster a row, 1,463 persistent; 1,679 in shared memory, tier 3b. No
// better: 15 blocks of 640 threads, 1,461; the cluster size that keeps the most threads resident,
// 1,502-1,522. Forward float64, 16 blocks of 608 threads: 2,400 us, 3,221 through the split row).
// MT_SOFTMAX_CLUSTER_THREADS sets the 256 (and turns off the 16-bit forward's refinement,
// resident_bytes_cluster_size).
struct WideRowClusters {
  int64_t blocks;
  bool persistent;
};

// The 16-bit and float64 forward's wide clusters hold a row's packs in the rings of blocks that
// take 52-64 registers a thread, so the blocks an SM step unevenly with the block size (256
// threads: 4 blocks, 1,024 threads; 160: 7, 1,120), clusters of some sizes pack a GPC's SMs with
// holes, and a chunk that leaves many threads' last pack empty holds fewer bytes than its block
// could.
// From `cs` (the 256-thread size), the cluster of blocks of 128-256 threads that keeps the most
// of the rows' bytes resident on the GPU (clusters at once, from the occupancy API, x their
// packs), if that is at least 10% more; not 16 blocks, whose exchange costs more.
// H200 kernel times, float16, two rounds (bfloat16 alike): [8192, 50304] 452 -> 436 us (5 blocks
// of 160 threads, not 4 of 224), [2048, 151936] 385 -> 357 (15 of 160, not 10 of 256), [16384,
// 50304] 894 -> 862, [512, 200000] 141 -> 127, [4096, 50257] 700 -> 634, [64, 152064] 18.7 ->
// 17.9; 21 shapes, none slower. Counting blocks an SM instead of clusters lost [4096, 128256]
// (584.5 -> 602.6: 9 of 224, which 5 an SM leave GPCs with holes, not 8 of 256); 16 blocks lost
// [512, 131072] (78.6 -> 80.6 over 16 of 128). float64 follows it too ([1024, 10240] 64.0 ->
// 57.3 us, not 3 blocks of 224; [4096, 32000], [8192, 50304], [64, 152064], [2048, 32768]
// alike). float32 did not follow resident bytes ([8192, 50304] 816 us in 7 blocks of 256, 841 in
// 10 of 160; alike in a later run), nor did the backward.
// (A launch-configuration query, so cached_query keeps its answer per row width: the scan's
// occupancy queries run once, not on every call; the key is this function's own address.)
template <typename T, bool Log>
int resident_bytes_cluster_size(const void*, int64_t npk, int64_t cs) {
  constexpr int kWide = block_row_packs<T, false, true>();
  auto kernel = softmax_staged_row_kernel<T, kWide, Log, false, RowGroup::kCluster>;
  const auto threads_for = [&](int64_t blocks) {
    return row_block_threads<T, kWide>(npk * pack_size<T>(), blocks);
  };
  const auto resident_packs = [&](int64_t blocks) {
    const int threads = threads_for(blocks);
    const int64_t smem = row_ring_bytes<false>(1, threads, kWide);
    return active_clusters(kernel, int(blocks), threads, smem) * blocks * ceil_div(npk, blocks);
  };
  int64_t best_cs = cs, best = resident_packs(cs) * 11 / 10;
  for (int64_t c = cs + 1; c < kMaxClusterBlocks && threads_for(c) >= 128; ++c) {
    const int64_t packs = resident_packs(c);
    if (packs > best) best_cs = c, best = packs;
  }
  return int(best_cs);
}

template <typename T, bool Log, bool Bwd>
WideRowClusters wide_row_clusters(int64_t npk, int packs, int max_threads, int big_threads) {
  static const int forced_threads = env_int("MT_SOFTMAX_CLUSTER_THREADS", 0);
  const int cluster_threads =
      std::clamp(forced_threads > 0 ? forced_threads : 256, 32, kRowTierMaxThreads);
  const int64_t at_512 = ceil_div(npk, int64_t(std::min(max_threads, 512)) * packs);
  if (at_512 == 1) return {1, false};
  if (at_512 <= kMaxClusterBlocks) {
    const int64_t target = ceil_div(npk, int64_t(std::min(max_threads, cluster_threads)) * packs);
    const int64_t cs = std::clamp<int64_t>(target, at_512, kMaxClusterBlocks);
    if constexpr (!Bwd && sizeof(T) != 4) {
      if (forced_threads <= 0 && max_threads >= 256)
        return {cached_query(reinterpret_cast<const void*>(&resident_bytes_cluster_size<T, Log>),
                             npk, cs, resident_bytes_cluster_size<T, Log>),
                false};
    }
    return {cs, false};
  }
  const bool fits = ceil_div(npk, int64_t(big_threads) * packs) <= kMaxClusterBlocks;
  return {fits ? kMaxClusterBlocks : at_512, fits};
}

// Held blocks: 16-bit forward rows of one block of 64-256 threads, each holding 64 values in
// registers (kHeldPacks; 80 registers, six blocks of 128 an SM), every pack its own (the Full
// kernel), where the block tier's narrow packs gave 256-1024 threads 16 values each. H200 kernel
// times, two rounds, float16 / bfloat16: [1024, 8192] 10.72-10.75 -> 10.08-10.14 / 10.72 ->
// 10.08-10.24 us, [1024, 10240] 13.47-13.60 -> 13.02-13.09 / 13.41 -> 12.99-13.09; [4096, 8192],
// [2048, 16384] alike. Blocks of 64 threads lost in softmax_tune's isolated runs ([1024, 4096]
// 6.08-6.24 -> 6.34-6.50) but gained in the benchmark beside torch.compile and Liger, the
// sweep's regime (float16, two rounds: [16384, 4096] 68.77 / 68.72 -> 65.92 / 66.30, which the
// narrow packs' direct loads had slowed from 66.7; [2048, 4096] 9.62 / 9.63 -> 9.23 / 9.20;
// [1024, 4096] 5.20 / 5.14 -> 5.10 / 5.15); 32 lost there too ([1024, 2048] 3.46 / 3.46 -> 3.65 /
// 3.58). float32 softmax rows take them from 64 threads as well, 32 values a thread loaded
// straight into registers (loads_direct), where the block tier re-read narrow or wide packs from
// the ring in three passes (the same regime; block tier -> held through the ring -> held direct,
// the last in a later call: [1024, 4096] 8.86 / 8.83 -> 8.85 / 8.89 -> 8.58 / 8.53 us, Liger
// 8.70-8.85; [1024, 8192] 17.92 / 17.89 -> 17.63 / 17.55 -> 17.62 / 17.63; [1024, 2048] 5.87 /
// 5.92 in the block tier, 5.78 / 5.76 held direct; [2048-16384, 4096], [4096, 8192] within 1%).
// MT_SOFTMAX_HELD_BLOCKS=0 turns them off, 1 takes them from 32 threads.
template <typename T, bool Log, bool Bwd>
bool held_block_rows(bool vec, int64_t npk) {
  if constexpr (has_held_blocks<T, Log, Bwd>()) {
    static const int forced = env_int("MT_SOFTMAX_HELD_BLOCKS", -1);
    const int64_t threads = npk / kHeldPacks;
    return forced != 0 && vec && npk % (32 * kHeldPacks) == 0 && threads <= kHeldThreads &&
           (forced == 1 || threads >= 64);
  }
  return false;
}

// inner == 1: tiers 1, 2, 3a, 3b, 2b (no clusters), then 3c (the split row).
template <typename T, bool Log, bool Bwd>
void launch_row_tiers(const Ptrs& p, int64_t rows, int64_t cols) {
  constexpr int N = pack_size<T>();
  constexpr int kNarrow = block_row_packs<T, Bwd, false>(), kWide = block_row_packs<T, Bwd, true>();
  const DeviceInfo& dev = device_info();
  const int64_t npk = ceil_div(cols, N);
  const bool vec = p.aligned() && (cols * sizeof(T)) % 16 == 0;
  if constexpr (Bwd && sizeof(T) <= 4)
    if (vec && dev.clusters && launch_held_cluster_rows<T, Log>(p, rows, cols)) return;
  if (npk <= 32 * lanes_tier_max_packs<T, Bwd>() &&
      !forward_prefers_block<T, Log>(rows, npk, Bwd))
    return launch_lanes_tier<T, Log, Bwd>(p, rows, cols, vec);
  // Blocks a row needs to hold it in registers: with many rows, as few as possible (wide
  // threads); with few rows, enough for four blocks an SM, at most a 16-block cluster, without
  // making chunks shorter than 4K elements. (Against two an SM, on an H100: [8, 131072] takes
  // 16-block clusters instead of the split row, kernel 12.6 -> 7.9 us in float16; [16, 262144]
  // too, 18.0 -> 20.9 us: slower. Open: see docs/bench/history.md.)
  // float64 blocks stop at 512 threads: at 1024 the backward's 64-register cap spills the values
  // it holds, and the forward's rows of 152K-262K doubles ran slower over clusters of 1024-thread
  // blocks a row than through shared memory (tier 3b; H100: [2048, 151936] 3399 -> 5001 us).
  // Only the forward's persistent clusters (big_threads, see wide_row_clusters) go past 512.
  constexpr int kMaxThreads = sizeof(T) == 8 ? 512 : kRowTierMaxThreads;
  static const int forced_threads = env_int("MT_SOFTMAX_ROW_THREADS", 0);
  static const int max_threads =
      std::clamp(forced_threads > 0 ? forced_threads : kMaxThreads, 64, kRowTierMaxThreads);
  const int big_threads = forced_threads > 0 || Bwd ? max_threads : kRowTierMaxThreads;
  const int64_t narrow_cs = ceil_div(npk, int64_t(max_threads) * kNarrow);
  static const int forced_packs = env_int("MT_SOFTMAX_ROW_PACKS", 0);  // 1 narrow, 2 wide
  // Tier 3d ahead of the cluster tiers for few forward float64 rows that need more than a
  // block: their clusters re-read the row from shared memory (tier 3b) or spread it thin (H100
  // kernel times, one call: [8, 131072] 17.9 -> 14.7 us, [16, 262144] 57.8 -> 43.9, [64, 152064]
  // 133 -> 111). Not float32 or 16-bit rows ([8, 131072] float32 7.9 -> 9.6, float16 5.5 -> 8.2:
  // the grid's barrier and 264 partials cost more than a cluster's exchange), nor the backward
  // ([64, 152064] float64 127 -> 137). But the float32 backward's rows of 160K floats or more
  // (5/8 of what a 16-block cluster's wide packs hold), up to 32 of them, whose clusters hold one
  // row at a time (H200 kernel times: [8, 262144] 15.2 -> 11.5 us, [16, 262144] 24.5 -> 18.4,
  // [32, 262144] 43.1 -> 35.2, [8, 200000] 12.7 -> 9.9, [32, 200000] 31.9 -> 27.2, [16, 180000]
  // 17.3 -> 15.1, [32, 180000] 28.8 -> 25.3; not past 32 rows: [48, 262144] 60.4 -> 66.2, [64,
  // 200000] 54.4 -> 65.3; nor shorter rows: [16, 152064] 12.3 -> 12.4, [48, 152064] 27.6 -> 33.1,
  // [16, 131072] 10.8 -> 11.6). MT_SOFTMAX_GRID_ROWS=1: every few-rows shape; 0: never.
  static const int grid_rows = env_int("MT_SOFTMAX_GRID_ROWS", -1);
  const bool f32_backward_grid =
      Bwd && sizeof(T) == 4 && rows <= 32 &&
      npk * 8 >= int64_t(kRowTierMaxThreads) * kWide * kMaxClusterBlocks * 5;
  const bool grid_first =
      grid_rows == 1 ||
      (grid_rows < 0 && ((!Bwd && sizeof(T) == 8 && npk > int64_t(max_threads) * kNarrow) ||
                         f32_backward_grid));
  if (rows < 2 * dev.sm_count) {
    if (grid_first && launch_grid_row_tier<T, Log, Bwd>(p, rows, cols)) return;
    if constexpr (Bwd && sizeof(T) <= 4)
      if (vec && dev.clusters && launch_reread_cluster_rows<T, Log>(p, rows, cols)) return;
    // Held rows (kHeldPacks): few long 16-bit forward rows whose clusters of up to
    // kHeldThreads threads (2-16 blocks) all fit at once, where they cover half the SMs or more,
    // or where rows are too few for the clusters below, which leave them to the split row. H200
    // kernel times, float16, two rounds (bfloat16 alike), against the tiers below: split row
    // [2, 65536] 7.14 -> 4.06 us, [4, 262144] 7.71-7.78 -> 5.06; clusters [20, 151936] 7.94 ->
    // 7.33, [132, 32768] 8.74-8.77 -> 8.03 (7.84-7.94 in the Full kernel); and with the Full
    // kernel's three blocks an SM (which let their clusters all fit), [16, 262144] 9.34-9.41 ->
    // 8.74, [32, 131072] 8.80-8.86 -> 8.19-8.35, [64, 65536] 9.06-9.12 -> 8.19, [128, 32768]
    // 8.77-8.80 -> 7.74. Not [8, 131072] in the fewest blocks: its 64 held blocks ran 4.77
    // against 4.61 in 128 blocks of narrow packs below (since the cluster kernels' trimmed
    // start, 4.51-4.54 against 4.45); in 16 blocks (below) it ties them.
    // Rows of 131,072 values or more take 16 blocks of 128 threads or more, not the fewest blocks
    // of up to 256, wherever those clusters all fit at once (else the fewest, as before): twice
    // the SMs a row, half the warps a block. H200 kernel times, float16 softmax, two rounds, fewest
    // -> 16 (MT_SOFTMAX_HELD_CLUSTER=16): [1, 131072] 3.87 / 3.84 -> 3.46 / 3.46 us, [2, 131072]
    // 3.97 / 4.00 -> 3.52 / 3.55, [4, 131072] 4.10 / 4.13 -> 3.74 / 3.74 (bfloat16 4.22 -> 3.74),
    // [12, 131072] 5.18 / 5.15 -> 4.99 / 4.96, [16, 131072] 6.02 / 6.14 -> 5.69 / 5.70, [32,
    // 131072] 8.10 / 8.06 -> 7.49 / 7.42 (bfloat16 8.00 -> 7.39-7.46), [20, 151936] 7.14 -> 6.88 /
    // 6.91 (bfloat16 7.42 -> 7.01-7.07); [8, 131072] (the narrow packs before) 4.54 -> 4.51-4.54,
    // and [48, 131072], [128, 131072], [64, 152064], [16, 262144] within 1%. Not shorter rows:
    // [64, 65536] in 16 blocks of 64 threads 7.7-7.8 -> 8.9 (12 of 96: 7.9).
    // Shorter rows take blocks of 128 threads too where those blocks are a quarter of the SMs or
    // fewer (latency-bound: a row over twice the SMs) or more than the SMs (half the warps a
    // block, more blocks an SM). H200 kernel times, float16, two rounds, fewest -> 128 threads:
    // [1, 65536] 3.74 -> 3.07-3.10 us, [2, 65536] 3.87-3.90 -> 3.33, [4, 32768] 3.81 -> 3.17,
    // [24, 65536] 5.06-5.09 -> 4.89, [32, 65536] 6.59-6.62 -> 5.66-5.70, [64, 65536] 7.81-7.90 ->
    // 7.23-7.26, [80, 65536] 8.67-8.74 -> 7.90-8.00, [48, 32768] 5.06-5.09 -> 4.77-4.80, [100,
    // 32768] 7.04 -> 6.43, [132, 32768] 7.68-7.71 -> 7.42; [96, 65536], [200, 32768], [264, 32768]
    // within 1%. Not between: [8, 65536] 3.55 -> 3.52-3.58, [16, 65536] 4.22 -> 4.26-4.35, [32,
    // 32768] 4.13 -> 4.45-4.48, [64, 32768] 5.60 -> 5.57-5.60 ([128, 65536] 14.2 -> 14.3-14.4).
    // MT_SOFTMAX_HELD_ROWS=0 turns them off, 1 takes them wherever they fit;
    // MT_SOFTMAX_HELD_CLUSTER=N gives their clusters at least N blocks (0: the fewest).
    if constexpr (has_held_kernels<T, Log, Bwd>()) {
      static const int held_rows = env_int("MT_SOFTMAX_HELD_ROWS", -1);
      static const int forced_held_cs = env_int("MT_SOFTMAX_HELD_CLUSTER", -1);
      constexpr int64_t kThinBlockPacks = 128 * kHeldPacks;  // a thin block: 128 threads
      const int64_t fewest = ceil_div(npk, int64_t(kHeldThreads) * kHeldPacks);
      const int64_t thin = std::min<int64_t>(ceil_div(npk, kThinBlockPacks), kMaxClusterBlocks);
      // (Rows of 131,072 values or more always; not from the 122,881 that already round to 16.)
      const bool sixteen = npk >= kMaxClusterBlocks * kThinBlockPacks;
      const bool spread_thin =
          sixteen ||
          (fewest >= 2 && (rows * thin <= dev.sm_count / 4 || rows * thin > dev.sm_count));
      const int64_t widest = std::max<int64_t>(
          fewest, forced_held_cs >= 0 ? forced_held_cs : spread_thin ? thin : 0);
      const auto held = [&](int64_t cs) {
        const bool spread = rows * cs >= dev.sm_count / 2 ||
                            rows * kMaxClusterBlocks < dev.sm_count / 2;
        return (held_rows == 1 || spread) && cs >= 2 && cs <= kMaxClusterBlocks &&
               launch_cluster_row_tier<T, kHeldPacks, Log, false, true>(p, rows, cols, int(cs),
                                                                        false, vec);
      };
      if (held_rows != 0 && dev.clusters && (held(widest) || (widest != fewest && held(fewest))))
        return;
    }
    static const int64_t max_cs =
        std::clamp(env_int("MT_SOFTMAX_FEW_ROWS_CLUSTER", kMaxClusterBlocks), 1, kMaxClusterBlocks);
    const auto few_rows_cs = [&](int64_t cs) {
      if (!dev.clusters) return cs;
      return std::max(cs, std::min({ceil_div(4 * dev.sm_count, rows), ceil_div(cols, 4096), max_cs}));
    };
    // Narrow packs (more threads, more loads in flight) while all the row's blocks fit on the
    // GPU at once, else the wide packs' smaller blocks, so that every row runs in one round
    // (H100, float16: [8, 131072] narrow 7.9 us, wide 8.8; [16, 262144] narrow 20.8 (1024-thread
    // blocks, one an SM: two rounds), wide 13.7; [64, 152064] 55.5 -> 24.3).
    int64_t cs = few_rows_cs(narrow_cs);
    const bool wide = forced_packs == 2 ||
                      (forced_packs == 0 && cs > 1 &&
                       !cluster_rows_fit<T, kNarrow, Log, Bwd>(rows, cols, cs));
    // Wide blocks as for many rows (wide_row_clusters): about 256 threads, at most 512 (at 544
    // threads [64, 152064] float32 ran one block an SM: 40 -> 59 us).
    const WideRowClusters w =
        wide_row_clusters<T, Log, Bwd>(npk, kWide, max_threads, big_threads);
    if (wide) cs = few_rows_cs(w.blocks);
    // But 8 to 32 float32 forward rows of 200K floats or more go to tier 3d where their clusters
    // would take blocks of 1024 threads or would not all be resident at once, and tier 3d's
    // shared memory and held tails take the rows whole. H200 kernel times, two rounds, clusters
    // -> tier 3d (narrow 1024-thread blocks: [8, 262144] 13.0 -> 9.6 us; wide ones, [8, 524288]
    // 19.9 -> 14.5; more clusters than fit: [24, 262144] 20.0 -> 18.4, [32, 262144] 26.0 -> 24.3,
    // [32, 200000] 21.1 -> 20.2, [20, 400000] 27.7 -> 24.4; [16, 262144] 15.6 -> 14.4, whose 16
    // clusters of 16 fit by blocks an SM, not by the cluster query; log_softmax alike). Where the
    // clusters all fit in smaller blocks they stay ([12, 262144] 11.4 against 12.1; [24, 131072]
    // 10.9 against 12.1, [8, 131072] 6.4 against 7.7), as do rows with an uncached tail ([64,
    // 152064] 23.9 against 27.6).
    if constexpr (sizeof(T) == 4 && !Bwd) {
      if (grid_rows < 0 && dev.clusters && rows >= 8 && rows <= 32 && cols >= 200000 &&
          grid_rows_held<T, Log, Bwd>(rows, cols)) {
        const int threads = wide ? row_block_threads<T, kWide>(cols, cs)
                                 : row_block_threads<T, kNarrow>(cols, cs);
        const bool clusters_fit = wide ? cluster_rows_active<T, kWide, Log, Bwd>(rows, cols, cs)
                                       : cluster_rows_active<T, kNarrow, Log, Bwd>(rows, cols, cs);
        if ((threads >= kRowTierMaxThreads || !clusters_fit) &&
            launch_grid_row_tier<T, Log, Bwd>(p, rows, cols))
          return;
      }
    }
    if (wide ? launch_block_or_cluster<T, kWide, Log, Bwd>(p, rows, cols, cs, vec, w.persistent)
             : launch_block_or_cluster<T, kNarrow, Log, Bwd>(p, rows, cols, cs, vec))
      return;
  } else if (held_block_rows<T, Log, Bwd>(vec, npk)) {
    if constexpr (has_held_blocks<T, Log, Bwd>())
      return launch_staged<T, kHeldPacks, Log, false, RowGroup::kBlock, true>(
          p, rows, cols, int(npk), 0, int(npk / kHeldPacks), 1, vec);
  } else if (Bwd && forced_packs == 0 && backward_rereads_rows<T>(vec, npk)) {
    if constexpr (Bwd && sizeof(T) <= 4) return launch_reread_rows<T, Log>(p, rows, cols);
  } else if (!Bwd && forced_packs == 0 && forward_takes_one_pack<T>(rows, npk)) {
    // The same test for the compiler; launch_staged directly, since launch_block_or_cluster
    // would also compile a one-pack cluster kernel that never runs.
    if constexpr (!Bwd && sizeof(T) <= 4) {
      const auto block_holds = [](int64_t c) {
        return row_block_threads<T, 1>(c, 1) <= kRowTierMaxThreads;
      };
      const int threads = row_block_threads<T, 1>(
          planned_cols<T, false, RowGroup::kBlock>(p, cols, vec, block_holds), 1);
      return launch_staged<T, 1, Log, false, RowGroup::kBlock>(p, rows, cols, int(npk), 0, threads,
                                                              1, vec);
    }
  } else if (narrow_cs == 1 && forced_packs != 2 &&
             (forced_packs == 1 || (Bwd ? backward_takes_narrow<T>(npk)
                                        : forward_takes_narrow<T, Log>(rows, npk)))) {
    if (launch_block_or_cluster<T, kNarrow, Log, Bwd>(p, rows, cols, 1, vec)) return;
  } else {
    // Wide packs: forward rows that forward_takes_narrow turns away, backward rows past 512
    // narrow threads (backward_takes_narrow), and rows that need a cluster anyway. Those last,
    // and any 16-bit row, split as wide_row_clusters says
    // (H100 kernel times: forward [1024, 65536] float32 221 -> 196 us; [8192, 50304] float16 609
    // -> 579, [1024, 65536] 105 -> 100; backward [2048, 32768] float16 150 -> 145). A float32
    // forward row stays in one block up to kF32WholeBlockThreads wide threads (25,600 floats);
    // past it, a cluster (of four blocks of about 256 threads for rows of 32K). H200 kernel times,
    // two rounds, clusters past 768 threads against one block (on an H100 a cluster of two
    // 512-thread blocks had lost: [4096, 32000] 357 -> 416 us): [512, 32768] 38.7 -> 35.3 us,
    // [1024, 32768] 70.4 -> 67.4, [2048, 32768] 134.2 -> 132.2, [4096, 32000] 257.3 -> 254.7,
    // [2048, 28000] 116.4 -> 113.5, [1024, 28000] 60.4 -> 59.5, [4096, 28672] 228.8 -> 227.1; but
    // [4096, 25000] (782 threads) 202.2 -> 205.0, and past 512 threads [1024, 20000] (640) 43.1 ->
    // 45.2: the bound sits between 782 and 875 threads. (MT_SOFTMAX_ROW_THREADS under 800 lowers
    // it.) A float64 forward row past the 512 threads float64 blocks otherwise stop at stays in
    // one block while two such blocks fit an SM (wide_block_fits_twice).
    // But float64 forward rows that fill a block of 512 wide threads (8,129-8,192 doubles) take
    // clusters of about 256-thread blocks, as wide_row_clusters sizes them for blocks of at most
    // 256: at the cluster kernel's 40 registers six such blocks fit an SM, where the block
    // kernel's 64 left two of 512. H200 kernel times, two rounds, through
    // MT_SOFTMAX_ROW_THREADS=256 (the same launch): [1024, 8192] 38.3 -> 35.2 us, [2048, 8192]
    // 74.1 -> 67.4-68.3, [4096, 8192] 141.6-142.0 -> 132.0-132.2; [1024, 4096] alike (one block of
    // 256 either way). Rows of 640 threads did not follow ([1024, 10240] 47.8-48.3 -> 50.9-51.1);
    // rows of 449-511 threads are not measured, nor log_softmax (whose clusters gained alike from
    // their 40 registers), which follows.
    const bool f64_row_splits = sizeof(T) == 8 && !Bwd && forced_threads <= 0 &&
                                row_block_threads<T, kWide>(cols, 1) == 512;
    const bool whole_block = sizeof(T) == 8 && !Bwd && forced_threads <= 0 && !f64_row_splits &&
                             wide_block_fits_twice<T, Log>(npk);
    constexpr int kF32WholeBlockThreads = 800, kF64SplitThreads = 256;
    const int wide_max_threads = f64_row_splits ? kF64SplitThreads : max_threads;
    const int block_threads = sizeof(T) == 4 && !Bwd
                                  ? std::min(max_threads, kF32WholeBlockThreads)
                                  : wide_max_threads;
    int64_t cs = whole_block ? 1 : ceil_div(npk, int64_t(block_threads) * kWide);
    bool persistent = false;
    if (cs > 1 || sizeof(T) == 2) {
      const WideRowClusters w =
          wide_row_clusters<T, Log, Bwd>(npk, kWide, wide_max_threads, big_threads);
      cs = w.blocks;
      persistent = w.persistent;
    }
    if (launch_block_or_cluster<T, kWide, Log, Bwd>(p, rows, cols, cs, vec, persistent)) return;
  }
  // Tier 3b: the row's chunks cached in shared memory over a cluster, for rows too long for the
  // registers of 16 blocks.
  const int64_t row_bytes = cols * int64_t(sizeof(T)) * (Bwd ? 2 : 1);
  // Rows past 16 such blocks (float64 rows of 152K) take 16 larger ones, so long as they fit,
  // in the backward and for fewer rows than SMs; many forward rows run faster through the split
  // row (H100 kernel times, float64: backward [2048, 151936] 4389 -> 4085 us, [64, 152064] 164
  // -> 128; forward [16, 262144] 61.6 -> 55.5, [64, 152064] 130.5 -> 133.0, [2048, 151936]
  // 3395 -> 3961).
  int64_t cs_smem = std::max<int64_t>(narrow_cs, ceil_div(row_bytes, kRowBlockBytes));
  if (cs_smem > kMaxClusterBlocks && (Bwd || rows < dev.sm_count)) cs_smem = kMaxClusterBlocks;
  if (dev.clusters && cols < (int64_t(1) << 30) && cs_smem <= kMaxClusterBlocks &&
      rows * cs_smem >= dev.sm_count / 2 &&
      launch_cluster_tier<T, Log, Bwd>(p, rows, int(cols), int(cs_smem), vec))
    return;
  // Tier 2b (no clusters): one block a row, the row in shared memory.
  const int64_t smem = block_tier_smem<T, Bwd>(cols);
  if (!dev.clusters && smem <= dev.smem_per_block_optin - 1024 && rows >= dev.sm_count) {
    auto kernel = softmax_block_kernel<T, Log, Bwd, false>;
    allow_dynamic_smem(kernel, smem);
    const int threads = block_threads_for<T>(npk * N);
    const int64_t fill = int64_t(blocks_per_sm(kernel, threads, smem)) * dev.sm_count;
    kernel<<<int(std::min(rows, fill)), threads, smem>>>(
        static_cast<const T*>(p.a), static_cast<const T*>(p.b), static_cast<T*>(p.out), rows,
        int(cols), int(npk * N), vec);
    MT_CUDA_CHECK_LAUNCH();
    return;
  }
  if (grid_rows != 0 && launch_grid_row_tier<T, Log, Bwd>(p, rows, cols)) return;
  launch_split_row_tier<T, Log, Bwd>(p, rows, cols);
}

template <bool Bwd>
void dispatch(const Ptrs& p, DType dtype, SoftmaxShape s, bool log) {
  if (s.outer <= 0 || s.axis <= 0 || s.inner <= 0) return;
  if (s.inner > 1) return launch_inner_dim_tiers(p, dtype, s, log, Bwd);
  const char* name = Bwd ? (log ? "log_softmax_backward_cuda" : "softmax_backward_cuda")
                         : (log ? "log_softmax_cuda" : "softmax_cuda");
  MT_DISPATCH_FLOATING_TYPES(dtype, name, [&] {
    if (log)
      launch_row_tiers<scalar_t, true, Bwd>(p, s.outer, s.axis);
    else
      launch_row_tiers<scalar_t, false, Bwd>(p, s.outer, s.axis);
  });
}

}  // namespace

void softmax_forward_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch<false>(Ptrs{x, nullptr, y}, dtype, shape, log);
}

void softmax_backward_cuda(const void* y, const void* dy, void* dx, DType dtype,
                           SoftmaxShape shape, bool log) {
  dispatch<true>(Ptrs{y, dy, dx}, dtype, shape, log);
}

}  // namespace mt
