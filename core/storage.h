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
  // last view is gone. `writable` false: the owner said the bytes are read-only (a non-writeable
  // array, an immutable `bytes`, a read-only mmap, DLPack's READ_ONLY flag).
  Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release, bool writable = true);
  ~Storage();

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool writable() const { return writable_; }
  // Every write into existing memory (in-place ops, copy_, fill_, index_put_) calls this first;
  // writing read-only memory would crash (a read-only mmap) or break an immutable Python object.
  void check_writable() const;

  // Counts in-place writes to these bytes (through any view), like torch's version counter:
  // autograd remembers it for every tensor it saves and refuses to use one written since.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  Device device_;
  std::function<void()> release_;  // empty when we allocated the bytes ourselves
  bool writable_ = true;
  std::atomic<uint64_t> version_{0};
};

}  // namespace mt
