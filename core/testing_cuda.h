// Test-only ways to make the CUDA runtime fail on purpose, so the test suite can prove that each
// kind of CUDA failure reaches Python as minitensor.CudaError and the process lives on.
// Reached only through minitensor._C._testing_cuda_error; never called by the library itself.
#pragma once

#ifdef MINITENSOR_WITH_CUDA

namespace mt::cuda::testing {

// A launch with more threads per block than any GPU allows: cudaErrorInvalidConfiguration,
// reported at launch and not sticky (the context stays usable).
void launch_invalid_configuration(int device);

// A kernel that stores through an invalid pointer, then a synchronize: cudaErrorIllegalAddress,
// which is sticky (the context is lost for the rest of the process).
void launch_illegal_address(int device);

}  // namespace mt::cuda::testing

#endif
