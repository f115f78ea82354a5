// The library's only door to the CUDA runtime for code that is not itself CUDA: device queries
// and launch sizes, the stream-ordered memory pool (tensors and kernel scratch), copies, and a
// device guard. Always compiled; in a build without
// CUDA every function that needs a GPU throws mt::CudaError saying so.
#pragma once

#include <cstddef>
#include <cstdint>

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
// Waits for the device, then hands the pool's unused memory back to the driver
// (torch.cuda.empty_cache()).
void empty_cache(int index);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };
// Copies and waits for the copy (host memory is pageable, so the copy is synchronous anyway).
void copy(void* dst, const void* src, std::size_t nbytes, CopyKind kind, int index);
void memset_zero(void* dst, std::size_t nbytes, int index);

// What sizes a launch: read from the driver once per device, then cached. Every CUDA launch
// sizes its grid from these instead of numbers written for one GPU.
struct DeviceInfo {
  int sm_count = 0;
  int64_t smem_per_block_optin = 0;  // the most dynamic shared memory one block may ask for
  // Thread-block clusters with distributed shared memory: sm_90 and later, unless the
  // environment sets MT_SOFTMAX_NO_CLUSTER=1 (to test the portable tiers on a Hopper GPU).
  bool clusters = false;
  // Cooperative launches (every block of a grid resident at once, grid-wide barriers), unless the
  // environment sets MT_SOFTMAX_NO_GRID_SYNC=1 (to test the split-row tier that stands in).
  bool cooperative = false;
};
const DeviceInfo& device_info(int index);
const DeviceInfo& current_device_info();  // of the device the caller's DeviceGuard made current

// Scratch memory for the kernels of one operation (partial results passed from one launch to the
// next), from the same pool as tensors. Freed stream-ordered when it goes out of scope: after the
// kernels queued before then have used it, and also when a launch in between throws.
class ScratchBuffer {
 public:
  ScratchBuffer(std::size_t nbytes, int index) : ptr_(allocate(nbytes, index)), index_(index) {}
  explicit ScratchBuffer(std::size_t nbytes) : ScratchBuffer(nbytes, current_device()) {}
  ~ScratchBuffer() { release(ptr_, index_); }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_;
  int index_;
};

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
