// Storage owns the bytes of one allocation on one device. Tensors (and all their views) share it
// through std::shared_ptr, so the memory lives exactly as long as the last view.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "core/device.h"

namespace mt {

class Storage {
 public:
  // Allocates `nbytes` on `device`: 64-byte aligned host memory, or the CUDA pool.
  Storage(std::size_t nbytes, Device device);
  // Wraps memory someone else owns (a NumPy array, a DLPack producer); `release` runs when the
  // last view is gone.
  Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release);
  ~Storage();

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_;
  std::function<void()> release_;  // empty when we allocated the bytes ourselves
};

}  // namespace mt
