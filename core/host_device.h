// Functions compiled for both the host and the GPU: MT_HOST_DEVICE marks them under nvcc and
// makes them plain inline functions for the C++ compiler (the CPU build, the C++ example).
#pragma once

#if defined(__CUDACC__)
#define MT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MT_HOST_DEVICE inline
#endif
