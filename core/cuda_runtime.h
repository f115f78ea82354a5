// The library's only door to the CUDA runtime for code that is not itself CUDA: device queries,
// the stream-ordered memory pool, copies, and a device guard. Always compiled; in a build without
// CUDA every function that needs a GPU throws mt::CudaError saying so.
#pragma once

#include <cstddef>

#include "core/device.h"

namespace mt::cuda {

bool is_built();       // compiled with CUDA support
int device_count();    // 0 when not built, no driver or no GPU; never throws
bool is_available();   // is_built() && device_count() > 0
int current_device();  // the device "cuda" without an index means

// Throws mt::CudaError when `index` is not a usable CUDA device, explaining why.
void check_device(int index);

void synchronize(int index);

// Stream-ordered allocation from a pool the library owns for each device (cudaMallocFromPoolAsync
// with the release threshold raised, so freed blocks are reused rather than returned to the
// driver). Throws mt::OutOfMemoryError naming the size when the device is full.
void* allocate(std::size_t nbytes, int index);
void release(void* ptr, int index) noexcept;
std::size_t pool_reserved_bytes(int index);  // bytes the pool holds from the driver

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };
// Copies and waits for the copy (host memory is pageable, so the copy is synchronous anyway).
void copy(void* dst, const void* src, std::size_t nbytes, CopyKind kind, int index);
void memset_zero(void* dst, std::size_t nbytes, int index);

// Makes `index` current for its lifetime (every launch and allocation goes through one).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace mt::cuda
