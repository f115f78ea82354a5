// CHECK for the standalone CUDA tools (stage_floor.cu, split_column_probe.cu,
// cluster_placement_probe.cu), which build with plain nvcc and link nothing of the package: a
// failed call prints its line and exits (the package's own MT_CUDA_CHECK throws into Python
// instead, core/cuda_check.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                       \
  do {                                                                                    \
    const cudaError_t e = (call);                                                         \
    if (e != cudaSuccess) {                                                               \
      std::printf("%s failed at line %d: %s\n", #call, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)
