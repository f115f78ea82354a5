// The floor of "stage it all on chip, one barrier, write it all back": how long moving B bytes
// in and out takes when each block copies its chunk into shared memory (cp.async), waits, meets
// the others at a barrier (none / its cluster / the whole grid) and stores the chunk back, with
// no arithmetic at all, beside a plain copy of the same bytes. A softmax whose group (a row, a
// slab, a column group) must be read whole before its first output is written cannot beat this;
// the gap between a tier and its floor is what its arithmetic, reductions and exchanges cost.
//
//   nvcc -std=c++17 -arch=sm_90 -O3 -I. -o /tmp/stage_floor tools/stage_floor.cu
//   ncu --clock-control none --metrics gpu__time_duration.sum --csv /tmp/stage_floor > t.csv
//
// The program prints one CFG line per configuration; each is launched kReps times, so the
// kernel durations in ncu's output (caches flushed before each) come in groups of kReps, in the
// order of the CFG lines. See docs/bench/history.md (eleventh session) for what it measured on an
// H100. With STAGE_FLOOR_H200=1 in the environment it runs tier 3d's [1, 16777216] 16-bit shape
// instead, also through the bulk copy engine and with the load phase alone (BENCHMARKS.md,
// sixtieth session).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "ops/common/async_copy.cuh"
#include "tools/tool_cuda_check.h"

namespace cg = cooperative_groups;

constexpr int kReps = 5;

enum Barrier { kNone = 0, kCluster = 1, kGrid = 2 };

__device__ __forceinline__ void meet(int barrier) {
  if (barrier == kCluster) cg::this_cluster().sync();
  if (barrier == kGrid) cg::this_grid().sync();
}

// Block b stages 16-byte packs [b * per_block, (b + 1) * per_block). Halves: the second half's
// copies are waited for (and met over) only after the first half is stored.
template <bool Halves>
__global__ void stage_kernel(const int4* __restrict__ in, int4* __restrict__ out, long per_block,
                             long total, int barrier) {
  extern __shared__ int4 staged[];
  const long base = long(blockIdx.x) * per_block;
  const long n = min(per_block, total - base);
  const long first = Halves ? (n + 1) / 2 : n;
  for (long i = threadIdx.x; i < first; i += blockDim.x)
    mt::cp_async<16>(&staged[i], &in[base + i]);
  mt::cp_async_commit();
  for (long i = first + threadIdx.x; i < n; i += blockDim.x)
    mt::cp_async<16>(&staged[i], &in[base + i]);
  mt::cp_async_commit();
  mt::cp_async_wait(1);
  __syncthreads();
  meet(barrier);
  for (long i = threadIdx.x; i < first; i += blockDim.x) out[base + i] = staged[i];
  mt::cp_async_wait(0);
  __syncthreads();
  if (Halves) meet(barrier);
  for (long i = first + threadIdx.x; i < n; i += blockDim.x) out[base + i] = staged[i];
}

// The same with the chunk copied by the bulk copy engine: thread 0 issues `batches` 1-D bulk
// copies (cp.async.bulk, one mbarrier each), every thread waits for them all; no copy loop in the
// threads at all. flags & 1: no stores (the load phase and barrier alone); flags & 2: the
// stores evict-first (st.global.cs, as tier 3d's output).
__global__ void stage_bulk_kernel(const int4* __restrict__ in, int4* __restrict__ out,
                                  long per_block, long total, int barrier, int batches, int flags) {
#if defined(MT_HAVE_BULK_COPY)
  extern __shared__ __align__(128) int4 staged_bulk[];
  __shared__ uint64_t landed[8];
  const long base = long(blockIdx.x) * per_block;
  const long n = min(per_block, total - base);
  const long per_batch = (n + batches - 1) / batches;
  if (threadIdx.x == 0) {
    for (int i = 0; i < batches; ++i) mt::mbarrier_init(mt::shared_address(&landed[i]));
    mt::mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < batches; ++i) {
      const long s = i * per_batch, c = min(per_batch, n - s);
      const unsigned bar = mt::shared_address(&landed[i]), bytes = unsigned(c * 16);
      mt::mbarrier_expect_bytes(bar, bytes);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
          ::"r"(mt::shared_address(&staged_bulk[s])), "l"(&in[base + s]), "r"(bytes), "r"(bar)
          : "memory");
    }
  }
  for (int i = 0; i < batches; ++i) mt::mbarrier_wait(mt::shared_address(&landed[i]), 0);
  __syncthreads();
  meet(barrier);
  if (flags & 1) return;
  for (long i = threadIdx.x; i < n; i += blockDim.x) {
    if (flags & 2)
      __stcs(&out[base + i], staged_bulk[i]);
    else
      out[base + i] = staged_bulk[i];
  }
#endif
}

// A read of every byte into registers and nothing else (the load phase's floor without shared
// memory): grid-stride, four 16-byte loads in flight a thread, xor-folded so none is dropped.
__global__ void read_kernel(const int4* __restrict__ in, int4* __restrict__ sink, long total) {
  const long stride = long(gridDim.x) * blockDim.x;
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i + 3 * stride < total; i += 4 * stride) {
    const int4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < total; i += stride) acc ^= in[i].x;
  if (acc == 0x7fffffff) sink[0].x = acc;
}

// Grid-stride copy, four 16-byte loads in flight a thread.
__global__ void copy_kernel(const int4* __restrict__ in, int4* __restrict__ out, long total) {
  const long stride = long(gridDim.x) * blockDim.x;
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < total; i += 4 * stride) {
    const int4 a = in[i], b = in[i + stride], c = in[i + 2 * stride], d = in[i + 3 * stride];
    out[i] = a;
    out[i + stride] = b;
    out[i + 2 * stride] = c;
    out[i + 3 * stride] = d;
  }
  for (; i < total; i += stride) out[i] = in[i];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const long kMaxBytes = 1L << 30;
  int4 *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, kMaxBytes));
  CHECK(cudaMalloc(&out, kMaxBytes));
  CHECK(cudaMemset(in, 1, kMaxBytes));

  const auto copy = [&](long bytes, const char* tag) {
    const int grid = sms * 8;
    for (int r = 0; r < kReps; ++r) copy_kernel<<<grid, 256>>>(in, out, bytes / 16);
    CHECK(cudaDeviceSynchronize());
    std::printf("CFG copy %s bytes=%ld grid=%d\n", tag, bytes, grid);
  };
  const auto stage = [&](long bytes, int blocks, int threads, int cluster, int barrier,
                         bool halves, const char* tag) {
    long total = bytes / 16, per_block = (total + blocks - 1) / blocks;
    const size_t smem = size_t(per_block) * 16;
    void* kernel = halves ? (void*)stage_kernel<true> : (void*)stage_kernel<false>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const int4* a = in;
    int4* b = out;
    void* args[] = {&a, &b, &per_block, &total, &barrier};
    for (int r = 0; r < kReps; ++r) {
      if (barrier == kGrid) {
        CHECK(cudaLaunchCooperativeKernel(kernel, blocks, threads, args, smem));
        continue;
      }
      cudaLaunchConfig_t config = {};
      config.gridDim = blocks;
      config.blockDim = threads;
      config.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = cluster;
      attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
      config.attrs = &attr;
      config.numAttrs = 1;
      CHECK(cudaLaunchKernelExC(&config, kernel, args));
    }
    CHECK(cudaDeviceSynchronize());
    std::printf("CFG stage %s bytes=%ld blocks=%d threads=%d cluster=%d barrier=%d halves=%d "
                "smem_kb=%.1f\n",
                tag, bytes, blocks, threads, cluster, barrier, int(halves), smem / 1024.0);
  };

  const auto read = [&](long bytes, const char* tag) {
    const int grid = sms * 8;
    for (int r = 0; r < kReps; ++r) read_kernel<<<grid, 256>>>(in, out, bytes / 16);
    CHECK(cudaDeviceSynchronize());
    std::printf("CFG read %s bytes=%ld grid=%d\n", tag, bytes, grid);
  };
  const auto bulk = [&](long bytes, int blocks, int threads, int barrier, int batches, int flags,
                        const char* tag) {
    long total = bytes / 16, per_block = (total + blocks - 1) / blocks;
    const size_t smem = size_t(per_block) * 16;
    void* kernel = (void*)stage_bulk_kernel;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    const int4* a = in;
    int4* b = out;
    void* args[] = {&a, &b, &per_block, &total, &barrier, &batches, &flags};
    for (int r = 0; r < kReps; ++r) {
      if (barrier == kGrid)
        CHECK(cudaLaunchCooperativeKernel(kernel, blocks, threads, args, smem));
      else
        CHECK(cudaLaunchKernel(kernel, blocks, threads, args, smem));
    }
    CHECK(cudaDeviceSynchronize());
    std::printf("CFG bulk %s bytes=%ld blocks=%d threads=%d barrier=%d batches=%d flags=%d "
                "smem_kb=%.1f\n",
                tag, bytes, blocks, threads, barrier, batches, flags, smem / 1024.0);
  };
  if (std::getenv("STAGE_FLOOR_H200")) {
    // Tier 3d's [1, 16777216] 16-bit row: 2 blocks an SM of 512 threads, 112 KB each (29.6 MB
    // of the 32 staged), against a copy and a read of the same bytes.
    const long row = 2L * sms * 112 * 1024;
    copy(row, "tier-3d-bytes");
    copy(32L << 20, "32MB");
    read(row, "tier-3d-bytes");
    read(32L << 20, "32MB");
    stage(row, 2 * sms, 512, 1, kGrid, false, "3d bytes, cp.async, grid barrier");
    stage(row, 2 * sms, 512, 1, kNone, false, "3d bytes, cp.async, no barrier");
    bulk(row, 2 * sms, 512, kGrid, 8, 0, "3d bytes, bulk x8, grid barrier");
    bulk(row, 2 * sms, 512, kGrid, 1, 0, "3d bytes, bulk x1, grid barrier");
    bulk(row, 2 * sms, 512, kGrid, 8, 2, "3d bytes, bulk x8, grid barrier, evict-first stores");
    bulk(row, 2 * sms, 512, kGrid, 8, 1, "3d bytes, bulk x8, grid barrier, no stores");
    bulk(row, 2 * sms, 512, kNone, 8, 1, "3d bytes, bulk x8, no barrier, no stores");
    bulk(row, sms, 1024, kGrid, 8, 0, "3d bytes, one block an SM, bulk x8, grid barrier");
    bulk(row, 4 * sms, 256, kGrid, 4, 0, "3d bytes, 4 blocks an SM, bulk x4, grid barrier");
    const long half = row / 2;  // float32's [1, 16777216] cannot stage; a smaller row can
    bulk(half, 2 * sms, 512, kGrid, 8, 0, "half the bytes, bulk x8, grid barrier");
    stage(half, 2 * sms, 512, 1, kGrid, false, "half the bytes, cp.async, grid barrier");
    copy(half, "half");
    return 0;
  }
  const long slab = 32L * 1000 * 196 * 2;  // [32, 1000, 14, 14] float16
  const long mb24 = 24L << 20;
  copy(slab, "slab-size");
  copy(mb24, "24MB");
  copy(32L << 20, "32MB");
  copy(64L << 20, "64MB");
  copy(kMaxBytes, "1GB");
  stage(slab, 192, 256, 6, kCluster, false, "slab, clusters of 6 (tier 4c's shape)");
  stage(slab, 192, 512, 6, kCluster, false, "slab, clusters of 6, 512 threads");
  stage(slab, 192, 256, 1, kNone, false, "slab, no barrier");
  stage(slab, 96, 256, 6, kCluster, true, "slab, half the clusters, in halves");
  stage(slab, 2 * sms, 512, 1, kGrid, false, "slab, grid barrier");
  stage(slab, sms, 512, 1, kGrid, true, "slab, grid barrier, in halves");
  stage(slab, 512, 256, 16, kCluster, false, "slab, clusters of 16");
  stage(mb24, 2 * sms, 512, 1, kGrid, false, "24MB, grid barrier (tier 3d's shape)");
  stage(mb24, 2 * sms, 512, 1, kNone, false, "24MB, no barrier");
  stage(mb24, 2 * sms, 512, 1, kGrid, true, "24MB, grid barrier, in halves");
  stage(mb24, 2 * sms, 1024, 1, kGrid, false, "24MB, grid barrier, 1024 threads");
  stage(mb24, 256, 512, 8, kCluster, false, "24MB, clusters of 8");
  return 0;
}
