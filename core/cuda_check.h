// Checks for every CUDA runtime call and kernel launch. Included only by code compiled with
// MINITENSOR_WITH_CUDA. A failed call throws (never aborts): out-of-memory becomes
// mt::OutOfMemoryError (Python MemoryError), anything else mt::CudaError naming the CUDA error.
#pragma once

#include <cuda_runtime.h>

#include "core/errors.h"

namespace mt {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace mt

#define MT_CUDA_CHECK(expr)                                                  \
  do {                                                                       \
    const cudaError_t mt_cuda_err_ = (expr);                                 \
    if (mt_cuda_err_ != cudaSuccess)                                         \
      ::mt::throw_cuda_error(mt_cuda_err_, #expr, __FILE__, __LINE__);       \
  } while (0)

// After every <<<...>>>: catches bad launch configurations right away (errors inside the kernel
// surface at the next synchronizing call, which is checked too).
#define MT_CUDA_CHECK_LAUNCH() MT_CUDA_CHECK(cudaGetLastError())
