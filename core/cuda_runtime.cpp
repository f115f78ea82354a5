#include "core/cuda_runtime.h"

#include "core/errors.h"

#ifdef MINITENSOR_WITH_CUDA

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/cuda_check.h"

namespace mt {

namespace {

// Errors that corrupt the CUDA context: cudaGetLastError cannot clear them and every later CUDA
// call in the process returns them again, so the user must be told to restart, not to retry.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

}  // namespace

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaErrorMemoryAllocation)
    MT_THROW(OutOfMemoryError, "CUDA out of memory (", cudaGetErrorString(err), ") in ", expr);
  MT_THROW(CudaError, "CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err),
           " (in ", expr, " at ", file, ":", line, ")",
           is_sticky(err) ? ". The CUDA context is lost: every later CUDA call in this process "
                            "will fail; restart the process"
                          : "");
}

}  // namespace mt

namespace mt::cuda {

namespace {

// All work goes to the legacy default stream: it orders everything the library launches and
// synchronizes with other libraries' default-stream work (torch, cupy) without extra events.
constexpr cudaStream_t kStream = nullptr;

// Frees go to the per-thread default stream instead. It is a blocking stream, so a free queued
// there still waits for everything queued before it on the legacy stream, and the pool hands
// the block to the next allocation on the legacy stream in order. Measured on an H200 (a tiny
// kernel, allocate and free a block, 20 to 200 times queued): a free on the legacy stream added
// 1.2 us of GPU time to each such step, one on the per-thread stream none, with the pool's
// reserved memory the same (one block) either way.
const cudaStream_t kFreeStream = cudaStreamPerThread;

std::mutex pools_mutex;
std::vector<cudaMemPool_t> pools;  // one per device, created on first use

cudaMemPool_t pool_for(int index) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  if (pools.empty()) pools.resize(device_count(), nullptr);
  if (!pools[index]) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = index;
    cudaMemPool_t pool;
    MT_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    // Keep freed memory in the pool instead of handing it back at every synchronization.
    uint64_t keep_all = UINT64_MAX;
    MT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    pools[index] = pool;
  }
  return pools[index];
}

}  // namespace

bool is_built() { return true; }

int device_count() {
  // Asked on every launch through DeviceGuard, so ask the driver once.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no GPU: clear the error, report none
      return 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

int current_device() {
  if (device_count() == 0) check_device(0);  // throws "CUDA is not available: ..."
  int index = 0;
  MT_CUDA_CHECK(cudaGetDevice(&index));
  return index;
}

void check_device(int index) {
  const int count = device_count();
  if (count == 0)
    MT_THROW(CudaError, "CUDA is not available: no CUDA GPU or driver was found on this machine");
  if (index < 0 || index >= count)
    MT_THROW(CudaError, "CUDA device index ", index, " is out of range: this machine has ", count,
             " CUDA device(s)");
}

void synchronize(int index) {
  DeviceGuard guard(index);
  MT_CUDA_CHECK(cudaDeviceSynchronize());
}

void* allocate(std::size_t nbytes, int index) {
  if (nbytes == 0) return nullptr;
  DeviceGuard guard(index);
  cudaMemPool_t pool = pool_for(index);
  void* ptr = nullptr;
  cudaError_t err = cudaMallocFromPoolAsync(&ptr, nbytes, pool, kStream);
  if (err == cudaErrorMemoryAllocation) {
    // Blocks freed but not yet reusable may be holding the memory: wait for every stream (frees
    // are queued on kFreeStream), trim, try once more.
    cudaGetLastError();
    MT_CUDA_CHECK(cudaDeviceSynchronize());
    MT_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
    err = cudaMallocFromPoolAsync(&ptr, nbytes, pool, kStream);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    MT_THROW(OutOfMemoryError, "CUDA out of memory: tried to allocate ", nbytes, " bytes (",
             nbytes / (1024.0 * 1024.0), " MiB) on cuda:", index, "; ", free_bytes,
             " bytes free of ", total_bytes);
  }
  MT_CUDA_CHECK(err);
  return ptr;
}

void release(void* ptr, int index) noexcept {
  if (!ptr) return;
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) return;
  cudaSetDevice(index);
  // A failure here means the context is gone; there is nothing left to free, so stay quiet.
  if (cudaFreeAsync(ptr, kFreeStream) != cudaSuccess) cudaGetLastError();
  cudaSetDevice(previous);
}

const DeviceInfo& device_info(int index) {
  // Asked several times per launch: after the first call for a device, no lock and no driver call.
  constexpr int kMaxDevices = 64;
  static DeviceInfo infos[kMaxDevices];
  static std::once_flag filled[kMaxDevices];
  check_device(index);
  MT_ASSERT(index < kMaxDevices, "more than ", kMaxDevices, " CUDA devices");
  std::call_once(filled[index], [index] {
    DeviceInfo& d = infos[index];
    int major = 0, smem = 0, cooperative = 0;
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, index));
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, index));
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index));
    MT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, index));
    d.smem_per_block_optin = smem;
    const auto env_off = [](const char* name) {
      const char* v = std::getenv(name);
      return v && v[0] == '1';
    };
    d.clusters = major >= 9 && !env_off("MT_SOFTMAX_NO_CLUSTER");
    d.cooperative = cooperative != 0 && !env_off("MT_SOFTMAX_NO_GRID_SYNC");
  });
  return infos[index];
}

const DeviceInfo& current_device_info() {
  int index = 0;
  MT_CUDA_CHECK(cudaGetDevice(&index));
  return device_info(index);
}

std::size_t pool_reserved_bytes(int index) {
  DeviceGuard guard(index);
  uint64_t reserved = 0;
  MT_CUDA_CHECK(cudaMemPoolGetAttribute(pool_for(index), cudaMemPoolAttrReservedMemCurrent, &reserved));
  return static_cast<std::size_t>(reserved);
}

void empty_cache(int index) {
  DeviceGuard guard(index);
  // Frees still queued on kFreeStream return their blocks only once they run.
  MT_CUDA_CHECK(cudaDeviceSynchronize());
  MT_CUDA_CHECK(cudaMemPoolTrimTo(pool_for(index), 0));
}

void copy(void* dst, const void* src, std::size_t nbytes, CopyKind kind, int index) {
  if (nbytes == 0) return;
  DeviceGuard guard(index);
  const cudaMemcpyKind direction = kind == CopyKind::HostToDevice   ? cudaMemcpyHostToDevice
                                   : kind == CopyKind::DeviceToHost ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
  MT_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, direction, kStream));
  MT_CUDA_CHECK(cudaStreamSynchronize(kStream));
}

void memset_zero(void* dst, std::size_t nbytes, int index) {
  if (nbytes == 0) return;
  DeviceGuard guard(index);
  MT_CUDA_CHECK(cudaMemsetAsync(dst, 0, nbytes, kStream));
}

DeviceGuard::DeviceGuard(int index) {
  check_device(index);
  MT_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != index) MT_CUDA_CHECK(cudaSetDevice(index));
}

DeviceGuard::~DeviceGuard() {
  int now = previous_;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

}  // namespace mt::cuda

#else  // built without CUDA: every GPU request explains why it cannot be served

namespace mt::cuda {

namespace {
[[noreturn]] void no_cuda() {
  MT_THROW(CudaError,
           "CUDA is not available: minitensor was built without CUDA support (no CUDA compiler "
           "was found at build time, or MINITENSOR_CUDA=OFF)");
}
}  // namespace

bool is_built() { return false; }
int device_count() { return 0; }
bool is_available() { return false; }
int current_device() { no_cuda(); }
void check_device(int) { no_cuda(); }
void synchronize(int) { no_cuda(); }
void* allocate(std::size_t, int) { no_cuda(); }
void release(void*, int) noexcept {}
std::size_t pool_reserved_bytes(int) { no_cuda(); }
void empty_cache(int) { no_cuda(); }
const DeviceInfo& device_info(int) { no_cuda(); }
const DeviceInfo& current_device_info() { no_cuda(); }
void copy(void*, const void*, std::size_t, CopyKind, int) { no_cuda(); }
void memset_zero(void*, std::size_t, int) { no_cuda(); }
DeviceGuard::DeviceGuard(int) { no_cuda(); }
DeviceGuard::~DeviceGuard() = default;

}  // namespace mt::cuda

#endif
