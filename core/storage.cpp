#include "core/storage.h"

#include <cstdlib>
#include <new>

#include "core/cuda_runtime.h"
#include "core/errors.h"

namespace mt {

namespace {
// Cache-line alignment keeps 16-, 32- and 64-byte vector loads aligned at offset 0.
constexpr std::size_t kHostAlignment = 64;
}  // namespace

Storage::Storage(std::size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (device.is_cuda()) {
    data_ = cuda::allocate(nbytes, device.index);
    return;
  }
  if (nbytes == 0) return;
  const std::size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  data_ = std::aligned_alloc(kHostAlignment, rounded);
  if (!data_) MT_THROW(OutOfMemoryError, "out of host memory: tried to allocate ", nbytes, " bytes");
}

Storage::Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)) {}

Storage::~Storage() {
  if (release_) {
    release_();
  } else if (device_.is_cuda()) {
    cuda::release(data_, device_.index);
  } else {
    std::free(data_);
  }
}

}  // namespace mt
