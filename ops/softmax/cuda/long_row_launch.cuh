// The launches of the tiers for rows past the registers of a 16-block cluster, or of a block
// where clusters are missing (softmax_cuda.cu's ladder picks the tier): 3b, a row cached in a
// cluster's shared memory (block_tier.cuh); 3c, the split row (split_row_tier.cuh); 3d, the whole
// GPU's shared memory (grid_row_tier.cuh).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "core/cuda_check.h"
#include "core/cuda_runtime.h"
#include "ops/common/launch.cuh"
#include "ops/softmax/cuda/block_tier.cuh"
#include "ops/softmax/cuda/grid_row_tier.cuh"
#include "ops/softmax/cuda/split_row_tier.cuh"
#include "ops/softmax/cuda/tier_launch.cuh"

namespace mt {
namespace softmax_launch {

// Threads for a block that caches `elems` elements in shared memory (tiers 2b, 3b): about eight
// packs each (two unrolled batches of loads), 128..1024.
template <typename T>
int block_threads_for(int64_t elems) {
  const int64_t want = next_pow2(ceil_div(ceil_div(elems, pack_size<T>()), 8));
  return int(std::clamp<int64_t>(want, 128, kBlockTierMaxThreads));
}

// Tier 3b: each row over a cluster, its chunks cached in shared memory (rows too long for the
// registers of 16 blocks); false when the cluster cannot be launched. The backward caches y and
// dy, unless that leaves one block an SM where y alone leaves two or more (blocks of at most 512
// threads) over at least two rounds of them: then the output pass reads dy again, from L2, which
// holds the rows of the clusters in flight (~20 MB on an H100), and one block's reductions
// overlap another's loads. H100 kernel times, float64: [2048, 151936] 3,622 -> 3,349 us,
// [300, 131080] 470 -> 412, [64, 152064] 117.9 -> 114.2, [40, 151936] 76.8 -> 76.4; within a
// round and a quarter it lost ([20, 151936] 39.4 -> 43.1) or tied ([10, 151936]). (A first
// version, one output loop for both kernels, re-read faster, 3,250 / 400 / 110.1 / 74.3 us, but
// slowed the caching kernel by 2-5%.) MT_SOFTMAX_BLOCK_REREAD=1/0 forces the re-read on
// (wherever y fits) / off.
template <typename T, bool Log, bool Bwd>
bool launch_cluster_tier(const Ptrs& p, int64_t rows, int cols, int cs, bool vec) {
  constexpr int N = pack_size<T>();
  const int chunk = int(ceil_div(ceil_div(cols, cs), N) * N);
  const int64_t smem_limit = device_info().smem_per_block_optin - 1024;
  const auto launch = [&](auto kernel, int threads, int64_t smem) {
    if (smem > smem_limit) return false;
    allow_dynamic_smem(kernel, smem);
    // One cluster per row: the scheduler overlaps one row's reductions with another's loads.
    return launch_clustered(kernel, rows, cs, threads, smem, static_cast<const T*>(p.a),
                            static_cast<const T*>(p.b), static_cast<T*>(p.out), rows, cols,
                            chunk, vec);
  };
  auto kernel = softmax_block_kernel<T, Log, Bwd, true>;
  const int threads = block_threads_for<T>(chunk);
  const int64_t smem = block_tier_smem<T, Bwd>(chunk);
  if constexpr (Bwd) {
    static const int reread = env_int("MT_SOFTMAX_BLOCK_REREAD", -1);
    auto reread_kernel = softmax_block_kernel<T, Log, Bwd, true, true>;
    const int small = std::min(threads, 512);
    const int64_t y_only = block_tier_smem<T, Bwd>(chunk, true);
    const auto blocks_an_sm = [&](auto k, int t, int64_t bytes) {
      return bytes > smem_limit ? 0 : blocks_per_sm(k, t, bytes);
    };
    const auto pays = [&] {
      const int fit = blocks_an_sm(reread_kernel, small, y_only);
      return blocks_an_sm(kernel, threads, smem) < 2 && fit >= 2 &&
             rows * cs >= 2 * int64_t(fit) * device_info().sm_count;
    };
    if (reread == 1 || (reread < 0 && pays())) return launch(reread_kernel, small, y_only);
  }
  return launch(kernel, threads, smem);
}

template <typename T, bool Log, bool Bwd>
void launch_split_row_tier(const Ptrs& p, int64_t rows, int64_t cols) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  const DeviceInfo& dev = device_info();
  // Enough chunks for ~4 blocks per SM, each chunk 1-16 packs per thread.
  const int64_t min_chunk = int64_t(kSplitRowThreads) * N, max_chunk = 16 * min_chunk;
  const int64_t want_chunks = std::max<int64_t>(1, ceil_div(4 * dev.sm_count, rows));
  const int64_t chunk =
      ceil_div(std::clamp(ceil_div(cols, want_chunks), min_chunk, max_chunk), N) * N;
  const int64_t chunks = ceil_div(cols, chunk);
  const int64_t blocks = rows * chunks;
  MT_ASSERT(blocks < (int64_t(1) << 31), "split-row softmax grid too large");
  const bool vec = p.aligned() && (cols * sizeof(T)) % 16 == 0;
  // The chunks' (max, sum) pass from the first kernel to the second through scratch memory from
  // the tensors' pool, freed stream-ordered after both (softmax, like the pool, runs on the
  // default stream).
  cuda::ScratchBuffer scratch(size_t(blocks) * sizeof(MaxSum<A>));
  MaxSum<A>* partials = scratch.as<MaxSum<A>>();
  const T* a = static_cast<const T*>(p.a);
  const T* b = static_cast<const T*>(p.b);
  softmax_split_stats_kernel<T, Log, Bwd><<<unsigned(blocks), kSplitRowThreads>>>(
      a, b, cols, chunk, chunks, vec, partials);
  MT_CUDA_CHECK_LAUNCH();
  softmax_split_apply_kernel<T, Log, Bwd><<<unsigned(blocks), kSplitRowThreads>>>(
      a, b, static_cast<T*>(p.out), cols, chunk, chunks, vec, partials);
  MT_CUDA_CHECK_LAUNCH();
}

// A tag for one launch's tier-3d partial slots (TaggedPartial): one sequence for every type and
// direction, since launches of any of them share the slots (tagged_partial_slots), and never 0.
inline unsigned next_partials_tag() {
  static std::atomic<unsigned> launches{0};
  unsigned tag = 0;
  while (tag == 0) tag = launches.fetch_add(1, std::memory_order_relaxed) + 1;
  return tag;
}

// Tier 3d's tagged slots, `count` of them (a block each), in memory of their own on the current
// device: zeroed once, never freed, never handed to a tensor. A block waits on a slot until it
// carries its launch's tag, so the slots may hold nothing else that looks like one. Scratch from
// the pool did: a tensor's bytes left there can (16-bit data: a +0 beside a subnormal whose bits
// equal a small tag), and a block then folded a stale partial (the tests, under twelve workers:
// float32 [6, 180000] log_softmax's backward wrong on 2,386 of its elements, two runs in five,
// after float16 [64, 152064] had freed its tensors). Here only earlier launches' tags remain,
// which do not recur (next_partials_tag), and every launch runs on the one stream. Room for the
// most blocks of kGridRowThreads an SM holds (a cooperative grid is all resident).
inline TaggedPartial* tagged_partial_slots(int64_t count) {
  constexpr int kMaxDevices = 64;
  constexpr int64_t kMaxBlocksPerSm = 2048 / kGridRowThreads;
  static std::mutex lock;
  static void* slots[kMaxDevices] = {};
  const int index = cuda::current_device();
  const int64_t room = kMaxBlocksPerSm * device_info().sm_count;
  MT_ASSERT(index < kMaxDevices && count <= room, "tier 3d asked for ", count, " slots");
  std::lock_guard<std::mutex> hold(lock);
  if (slots[index] == nullptr) {
    void* fresh = cuda::allocate(size_t(room) * sizeof(TaggedPartial), index);
    cuda::memset_zero(fresh, size_t(room) * sizeof(TaggedPartial), index);
    slots[index] = fresh;
  }
  return static_cast<TaggedPartial*>(slots[index]);
}

// Tier 3d's packs of each tensor a block caches: half an SM's shared memory (the SM's total is
// the per-block opt-in limit plus the 1 KB it reserves for each block), less that KB and one for
// the kernel's static scratch. MT_SOFTMAX_GRID_CACHE_PACKS caps it (tests reach the uncached
// tail with it).
template <bool Bwd>
int64_t grid_row_cache_packs() {
  static const int64_t cache_cap = env_int("MT_SOFTMAX_GRID_CACHE_PACKS", INT32_MAX);
  return std::clamp<int64_t>(
      ((device_info().smem_per_block_optin + 1024) / 2 - 2048) / (16 * (Bwd ? 2 : 1)), 1,
      cache_cap);
}

// Tier 3d's launch for `rows` rows of `cols`: its dynamic shared memory a block, and each row's
// chunk (elements a block, a multiple of the pack) over its share of the blocks resident at once
// (the cooperative grid's bound), with the chunks a row; none (chunks 0) where rows outnumber
// those blocks. One home for the split, which grid_rows_held asks before choosing tier 3d.
struct GridRowPlan {
  int64_t smem, chunk, chunks;
};

template <typename T, bool Log, bool Bwd>
GridRowPlan grid_row_plan(int64_t rows, int64_t cols) {
  constexpr int N = pack_size<T>(), kTensors = Bwd ? 2 : 1;
  const int64_t smem = grid_row_cache_packs<Bwd>() * 16 * kTensors;
  const int64_t resident =
      int64_t(blocks_per_sm(softmax_grid_row_kernel<T, Log, Bwd>, kGridRowThreads, smem)) *
      device_info().sm_count;
  if (rows > resident) return {smem, 0, 0};
  const int64_t chunk = ceil_div(ceil_div(cols, resident / rows), N) * N;
  return {smem, chunk, ceil_div(cols, chunk)};
}

// Whether tier 3d's blocks would hold `rows` rows whole: in their caches and, where the type
// keeps them (kHoldsTail), the tails held in registers.
template <typename T, bool Log, bool Bwd>
bool grid_rows_held(int64_t rows, int64_t cols) {
  const GridRowPlan plan = grid_row_plan<T, Log, Bwd>(rows, cols);
  const int64_t held = kHoldsTail<T, Bwd> ? int64_t(kHeldTail) * kGridRowThreads : 0;
  return plan.chunks > 0 &&
         ceil_div(plan.chunk, pack_size<T>()) <= grid_row_cache_packs<Bwd>() + held;
}

// Tier 3d: `rows` rows over one cooperative grid of the blocks resident at once (two an SM),
// each row over as many of them as it gets. False when the device cannot launch it (then the
// split row stands in), or when rows outnumber the blocks.
template <typename T, bool Log, bool Bwd>
bool launch_grid_row_tier(const Ptrs& p, int64_t rows, int64_t cols) {
  using A = acc_t<T>;
  constexpr int N = pack_size<T>();
  if (!device_info().cooperative) return false;
  auto kernel = softmax_grid_row_kernel<T, Log, Bwd>;
  const auto [smem, chunk, chunks] = grid_row_plan<T, Log, Bwd>(rows, cols);
  if (chunks == 0 || ceil_div(chunk, N) >= INT32_MAX) return false;
  allow_dynamic_smem(kernel, smem);  // (the plan's occupancy query set it too; cached)
  const bool vec = p.aligned() && (cols * sizeof(T)) % 16 == 0;
  // The cached copies' L2 lines evict-first, so that L2 keeps the tail for pass 2 (H200 kernel
  // times: [1, 16M] float16 32.5 -> 31.5 us, float32 55.9 -> 55.0; the rest alike).
  static const bool evict_cached = env_int("MT_SOFTMAX_GRID_EVICT_CACHED", 1) != 0;
  static const bool hold_tail = env_int("MT_SOFTMAX_GRID_HOLD_TAIL", 1) != 0;
  static const bool tagged = env_int("MT_SOFTMAX_GRID_TAGGED", 1) != 0;
  // The output's stores streaming (st.global.cs: L2 drops their lines first) where pass 2 reads
  // a tail back from L2, which they would evict; at the normal priority where the blocks hold
  // their chunks whole, so that L2 drops the cached copies' evict-first lines before them (H200
  // kernel times, two rounds: held [1, 16777216] float16 24.70 / 24.74 -> 24.58 / 24.45 us, [2,
  // 8388608] 24.35 -> 24.1, [1, 1048576] backward 6.34 -> 6.27; read back, float32 [1, 16777216]
  // 48.0 / 48.2 -> 48.9 / 48.6 and backward float16 42.3 -> 42.6 lost).
  static const int forced_out_evict = env_int("MT_SOFTMAX_GRID_OUT_EVICT", -2);
  const int out_evict = forced_out_evict >= -1 ? forced_out_evict
                        : grid_rows_held<T, Log, Bwd>(rows, cols) ? int(L2Evict::kNormal)
                                                                  : -1;
  // The cached packs summed online as they land (grid_row_tier.cuh) in 16- and 32-bit types;
  // float64's log_softmax keeps its two steps (not measured online).
  static const int forced_online = env_int("MT_SOFTMAX_GRID_ONLINE", -1);
  const bool online = forced_online >= 0 ? forced_online != 0 : sizeof(T) <= 4;
  const unsigned tag = tagged && kTaggable<T> ? next_partials_tag() : 0;  // 0: the grid barrier
  // A 16-byte slot a block: a TaggedPartial (its own memory), or float64's MaxSum (scratch: the
  // grid barrier orders its stores before the loads).
  cuda::ScratchBuffer scratch(tag != 0 ? 0 : size_t(rows * chunks) * sizeof(MaxSum<A>));
  MaxSum<A>* partials = tag != 0 ? reinterpret_cast<MaxSum<A>*>(tagged_partial_slots(rows * chunks))
                                 : scratch.as<MaxSum<A>>();
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  const cudaLaunchConfig_t config = attributed_config(rows * chunks, kGridRowThreads, smem, &attr);
  const cudaError_t err = cudaLaunchKernelEx(
      &config, kernel, static_cast<const T*>(p.a), static_cast<const T*>(p.b),
      static_cast<T*>(p.out), cols, chunk, chunks, int(grid_row_cache_packs<Bwd>()), vec,
      evict_cached, hold_tail, out_evict, online, tag, partials);
  if (err == cudaErrorCooperativeLaunchTooLarge) {  // another context holds part of the GPU
    (void)cudaGetLastError();
    return false;
  }
  MT_CUDA_CHECK(err);
  return true;
}

}  // namespace softmax_launch
}  // namespace mt
