// What the softmax tier launchers share (softmax_cuda.cu: rows; softmax_cuda_columns.cu: inner
// > 1): the tensors' pointers, the tuning overrides, and launches in thread-block clusters.
#pragma once

#include <cstdint>
#include <cstdlib>

#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "core/dtype.h"
#include "ops/common/launch.cuh"
#include "ops/softmax/softmax_shape.h"

namespace mt {
namespace softmax_launch {

struct Ptrs {
  const void* a;  // x (forward) or y (backward)
  const void* b;  // dy (backward) or null
  void* out;
  bool aligned() const { return aligned_to(16); }
  // Whether every pointer sits at the same offset within `bytes`.
  bool same_offset(int bytes) const {
    const auto at = [bytes](const void* q) { return reinterpret_cast<uintptr_t>(q) % bytes; };
    return at(a) == at(out) && (!b || at(b) == at(a));
  }
  bool aligned_to(int bytes) const {
    const auto at = [bytes](const void* q) { return reinterpret_cast<uintptr_t>(q) % bytes == 0; };
    return at(a) && (!b || at(b)) && at(out);
  }
};

// Tuning overrides for experiments on the GPU machine (unset in normal use), each read once per
// process. The row tiers' (softmax_cuda.cu): MT_SOFTMAX_STAGES forces the ring depth of tier 3a's
// clusters, MT_SOFTMAX_LANE_PACKS the most packs a lane takes before rows move from the lanes tier
// to the block tier, MT_SOFTMAX_LANE_MIN_PACKS the fewest a lane takes, MT_SOFTMAX_LANE_THREADS the
// lanes tier's block size, MT_SOFTMAX_ROW_THREADS the most threads a block of the block and cluster
// tiers has, MT_SOFTMAX_ROW_PACKS=1/2 forces their narrow/wide packs,
// MT_SOFTMAX_CLUSTER_PERSISTENT=0/1 a cluster for every row / clusters that loop over rows in the
// cluster tier (the backward's long rows in the wide packs either way),
// MT_SOFTMAX_CLUSTER_THREADS the threads a block of a wide-pack cluster aims at,
// MT_SOFTMAX_FEW_ROWS_CLUSTER the most blocks a row of few rows is spread over,
// MT_SOFTMAX_HELD_ROWS=0/1 never / wherever they fit the held rows of few 16-bit rows,
// MT_SOFTMAX_HELD_BLOCKS=0/1 never / from 32 threads the held blocks of 16-bit and float32 rows,
// MT_SOFTMAX_GRID_ROWS=0/1 never / first for few rows the whole-GPU tier,
// MT_SOFTMAX_GRID_CACHE_PACKS the packs of each tensor its blocks cache,
// MT_SOFTMAX_GRID_EVICT_CACHED=0 leaves its cached copies' L2 lines at the normal priority,
// MT_SOFTMAX_GRID_OUT_EVICT its output stores' L2 policy (-1 streaming, else an L2Evict: 0 normal,
// 1 first, 2 last), MT_SOFTMAX_GRID_ONLINE=0/1 its cached packs summed in two steps / online. The
// column tiers' (softmax_cuda_columns.cu) are listed at their launchers.
inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// A launch configuration on the default stream with one attribute (`attr`, filled by the caller,
// must outlive the returned config).
inline cudaLaunchConfig_t attributed_config(int64_t grid, int threads, int64_t smem,
                                            cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = size_t(smem);  // config.stream 0: the default stream
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// A launch configuration with a cluster dimension; `attr` must outlive the returned config.
inline cudaLaunchConfig_t cluster_config(int64_t grid, int cluster, int threads, int64_t smem,
                                         cudaLaunchAttribute* attr) {
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = unsigned(cluster);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  return attributed_config(grid, threads, smem, attr);
}

// Clusters of `cs` blocks that fit on the device at once (0: this shape cannot run here); the
// kernel is first allowed its dynamic shared memory, as in blocks_per_sm.
template <typename Kernel>
int active_clusters(Kernel kernel, int cs, int threads, int64_t smem) {
  allow_dynamic_smem(kernel, smem);
  return cached_query(
      reinterpret_cast<const void*>(kernel), cs * 4096 + threads / 32, smem,
      [](const void* k, int64_t key, int64_t bytes) {
        const int cluster = int(key / 4096), nthreads = int(key % 4096) * 32;
        if (cluster > 8)  // 9..16 blocks: the non-portable cluster sizes Hopper allows
          MT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t config = cluster_config(cluster, cluster, nthreads, bytes, &attr);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, k, &config) != cudaSuccess) {
          (void)cudaGetLastError();
          n = 0;
        }
        return n;
      });
}

// Launches `kernel` on `rows * cs` blocks in clusters of `cs` (one cluster a row); false when
// clusters of that shape cannot run on this device (then the caller takes another tier).
template <typename... Params, typename... Args>
bool launch_clustered(void (*kernel)(Params...), int64_t rows, int cs, int threads, int64_t smem,
                      Args... args) {
  if (rows * cs >= (int64_t(1) << 31)) return false;
  const int active = active_clusters(kernel, cs, threads, smem);
  if (active == 0) return false;
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = cluster_config(rows * cs, cs, threads, smem, &attr);
  MT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, args...));
  return true;
}

// Softmax over a non-last dim (inner > 1): tiers 4b, 4a and 4 (softmax_cuda_columns.cu).
void launch_inner_dim_tiers(const Ptrs& p, DType dtype, SoftmaxShape s, bool log, bool bwd);

}  // namespace softmax_launch
}  // namespace mt
