// Probe: where the CTA scheduler puts the blocks of thread-block clusters, launched in the shapes
// of the held rows (a cluster a row; blocks of 256 or 128 threads, three or six an SM, as the held
// kernel's 80 registers allow). Each block records its SM and start time, then waits 20 us so
// that every block of the launch is resident together, as the kernel's are. Per launch it prints
// the SMs used, the most blocks on one SM, how many SMs a cluster spans on average (a cluster
// packed on one SM shares that SM's load bandwidth) and the spread of the start times.
//
//   nvcc -std=c++17 -arch=sm_90 -O3 -I. -o /tmp/placement tools/cluster_placement_probe.cu
//   /tmp/placement
//
// Why (sixty-fifth session, BENCHMARKS.md): held 16-bit rows in blocks of 128 threads gained
// 15-20% on few rows and many, and lost up to 8% between, where the blocks number between a
// quarter of the SMs and the SMs ([32, 32768]: 4 blocks of 128 a row, 4.13 -> 4.45 us). Whether
// the scheduler packs those clusters' blocks onto fewer SMs is what this answers. First run
// (sixty-sixth session, H200): a cluster's blocks each take an SM of their own while the launch
// fits the SMs its cluster size reaches, but those are fewer than 132: 128 blocks in clusters of
// 4 or 8 found only 120 SMs (16: 112; 2: 128), so 8-16 SMs held two. The last two shapes ask
// the same of the float32 backward's 16-block clusters two an SM: whether a cluster's blocks
// share SMs (its blocks then load and reduce in step) or each sits beside another cluster's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "tools/tool_cuda_check.h"

struct Placement {
  unsigned sm;
  unsigned long long start_ns;
};

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void record_placement(Placement* out, unsigned long long wait_ns) {
  extern __shared__ unsigned char occupy[];  // sized on the host to set blocks an SM
  const unsigned long long t0 = global_ns();
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    out[blockIdx.x] = {sm, t0};
    occupy[0] = 1;
  }
  while (global_ns() - t0 < wait_ns) {
  }
}

struct Shape {
  const char* name;  // the held rows it stands for
  int clusters, cs, threads, blocks_per_sm;
};

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  CHECK(cudaFuncSetAttribute(record_placement, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("%s: %d SMs, %zu B shared memory an SM\n", prop.name, prop.multiProcessorCount,
              prop.sharedMemPerMultiprocessor);
  // The held kernel at 80 registers: three blocks of 256 threads an SM, six of 128.
  const std::vector<Shape> shapes = {
      {"[1, 65536] fewest", 1, 4, 256, 3},      {"[1, 65536] 128 thr", 1, 8, 128, 6},
      {"[8, 65536] fewest", 8, 4, 256, 3},      {"[8, 65536] 128 thr", 8, 8, 128, 6},
      {"[16, 65536] fewest", 16, 4, 256, 3},    {"[16, 65536] 128 thr", 16, 8, 128, 6},
      {"[32, 32768] fewest", 32, 2, 256, 3},    {"[32, 32768] 128 thr", 32, 4, 128, 6},
      {"[32, 65536] fewest", 32, 4, 256, 3},    {"[32, 65536] 128 thr", 32, 8, 128, 6},
      {"[64, 32768] fewest", 64, 2, 256, 3},    {"[64, 32768] 128 thr", 64, 4, 128, 6},
      {"[8, 131072] fewest", 8, 8, 256, 3},     {"[8, 131072] 128 thr", 8, 16, 128, 6},
      {"[32, 131072] 128 thr", 32, 16, 128, 6},
      // The float32 backward's wide rows a cluster a row, two blocks an SM (shared memory):
      // 608 threads ran faster than the persistent ring, 544 slower (seventy-second session).
      {"bwd [64, 152064] 608", 16, 16, 608, 2}, {"bwd [64, 131080] 544", 16, 16, 544, 2},
  };
  Placement* d_out = nullptr;
  CHECK(cudaMalloc(&d_out, 4096 * sizeof(Placement)));
  std::printf("%-22s %6s %5s %6s %8s %10s %14s\n", "shape", "blocks", "SMs", "max/SM",
              "SMs/clus", "occupancy", "start spread us");
  for (const Shape& s : shapes) {
    const size_t smem = prop.sharedMemPerMultiprocessor / s.blocks_per_sm -
                        prop.reservedSharedMemPerBlock;
    CHECK(cudaFuncSetAttribute(record_placement, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(smem)));
    int fit = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, record_placement, s.threads, smem));
    const int blocks = s.clusters * s.cs;
    for (int rep = 0; rep < 3; ++rep) {
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = unsigned(s.cs);
      attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(unsigned(blocks));
      config.blockDim = dim3(unsigned(s.threads));
      config.dynamicSmemBytes = smem;
      config.attrs = &attr;
      config.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(&config, record_placement, d_out, 20000ull));
      CHECK(cudaDeviceSynchronize());
      std::vector<Placement> h(blocks);
      CHECK(cudaMemcpy(h.data(), d_out, blocks * sizeof(Placement), cudaMemcpyDeviceToHost));
      std::map<unsigned, int> per_sm;
      unsigned long long first = ~0ull, last = 0;
      for (const Placement& p : h) {
        ++per_sm[p.sm];
        first = std::min(first, p.start_ns);
        last = std::max(last, p.start_ns);
      }
      int most = 0;
      for (const auto& [sm, n] : per_sm) most = std::max(most, n);
      double spans = 0;  // distinct SMs a cluster's blocks sit on, averaged over the clusters
      for (int c = 0; c < s.clusters; ++c) {
        std::set<unsigned> sms;
        for (int b = 0; b < s.cs; ++b) sms.insert(h[c * s.cs + b].sm);
        spans += double(sms.size()) / s.clusters;
      }
      std::printf("%-22s %6d %5zu %6d %8.2f %7d/SM %14.2f\n", s.name, blocks, per_sm.size(),
                  most, spans, fit, double(last - first) / 1e3);
    }
  }
  CHECK(cudaFree(d_out));
  return 0;
}
