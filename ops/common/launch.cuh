// Launch-shape helpers: the current device's launch sizes (core/cuda_runtime.h's DeviceInfo),
// cached occupancy queries, and the integer helpers grid sizing needs.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "core/cuda_check.h"
#include "core/cuda_runtime.h"

namespace mt {

// The kernels here launch on the device the caller's DeviceGuard made current.
using cuda::DeviceInfo;
inline const DeviceInfo& device_info() { return cuda::current_device_info(); }

// Launch-configuration queries cost microseconds of host time each, which shows up in the
// timeline of small softmaxes; their answers never change for a (kernel, device, config), so
// they are cached.
inline int cached_query(const void* kernel, int64_t a, int64_t b, int (*query)(const void*, int64_t, int64_t)) {
  struct Entry {
    const void* kernel;
    int device;
    int64_t a, b;
    int value;
  };
  static std::mutex mu;
  static Entry entries[512];
  static int count = 0;
  int dev = 0;
  MT_CUDA_CHECK(cudaGetDevice(&dev));
  {
    std::lock_guard<std::mutex> lock(mu);
    for (int i = 0; i < count; ++i)
      if (entries[i].kernel == kernel && entries[i].device == dev && entries[i].a == a &&
          entries[i].b == b)
        return entries[i].value;
  }
  const int value = query(kernel, a, b);
  std::lock_guard<std::mutex> lock(mu);
  if (count < 512) entries[count++] = {kernel, dev, a, b, value};
  return value;
}

// Lets `kernel` take up to the device's per-block maximum of dynamic shared memory (once per
// kernel). Done for any size: the 48 KB default counts the kernel's static shared memory too, so
// exactly 48 KB of dynamic memory already needs it.
template <typename Kernel>
inline void allow_dynamic_smem(Kernel kernel, int64_t bytes) {
  if (bytes == 0) return;
  cached_query(reinterpret_cast<const void*>(kernel), -1, -1, [](const void* k, int64_t, int64_t) {
    cudaFuncAttributes attr;
    MT_CUDA_CHECK(cudaFuncGetAttributes(&attr, k));  // static shared memory counts too
    MT_CUDA_CHECK(cudaFuncSetAttribute(
        k, cudaFuncAttributeMaxDynamicSharedMemorySize,
        int(device_info().smem_per_block_optin - int64_t(attr.sharedSizeBytes))));
    // All of the SM's unified L1 / shared memory as shared memory: these kernels stage their
    // data there, and the driver's default split capped blocks per SM by shared memory (4 blocks
    // of 256 threads with a 33 KB ring on an H100).
    MT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       int(cudaSharedmemCarveoutMaxShared)));
    return 0;
  });
}

// Resident blocks per SM for this kernel, block size and dynamic shared memory (at least 1).
// The kernel is first allowed its dynamic shared memory: without that, a query past 48 KB would
// answer for a block that cannot launch.
template <typename Kernel>
inline int blocks_per_sm(Kernel kernel, int threads, int64_t smem) {
  allow_dynamic_smem(kernel, smem);
  return cached_query(reinterpret_cast<const void*>(kernel), threads, smem,
                      [](const void* k, int64_t t, int64_t sm) {
                        int n = 0;
                        MT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &n, k, int(t), static_cast<size_t>(sm)));
                        return n > 0 ? n : 1;
                      });
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for a grid-stride loop over n items, `threads` a block: one item a thread, at most
// `per_sm` blocks an SM of this device (32: enough to fill it several times over; the loop does
// the rest, so a larger grid would only cost launch and scheduling time).
inline unsigned grid_stride_blocks(int64_t n, int threads, int per_sm = 32) {
  const int64_t cap = int64_t(device_info().sm_count) * per_sm;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(ceil_div(n, threads), cap)));
}

inline int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

inline int log2_exact(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

}  // namespace mt
