// Storage owns the bytes of one allocation on one device. Tensors (and all their views) share it
// through std::shared_ptr, so the memory lives exactly as long as the last view.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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

  // Counts in-place writes to these bytes (through any view), like torch's version counter:
  // autograd remembers it for every tensor it saves and refuses to use one written since.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_;
  std::function<void()> release_;  // empty when we allocated the bytes ourselves
  std::atomic<uint64_t> version_{0};
};

}  // namespace mt
