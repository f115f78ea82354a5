#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/cuda_runtime.h"
#include "core/errors.h"

namespace mt {

namespace {
// Cache-line alignment keeps 16-, 32- and 64-byte vector loads aligned at offset 0.
constexpr std::size_t kHostAlignment = 64;
// Large buffers are placed on 2 MB boundaries and offered to the kernel as huge pages: a fresh
// 64 MB output otherwise costs 16K page faults (~40 ms here), more than the softmax that fills it.
constexpr std::size_t kHugePage = std::size_t(2) << 20;
constexpr std::size_t kHugePageThreshold = std::size_t(8) << 20;  // rounding wastes <= 25%

bool is_large(std::size_t nbytes) { return nbytes >= kHugePageThreshold; }
std::size_t large_size(std::size_t nbytes) { return (nbytes + kHugePage - 1) / kHugePage * kHugePage; }

// Freed large blocks are kept for reuse by a later allocation of the same rounded size (a loop
// that makes same-sized outputs). glibc hands blocks above 32 MB back to the kernel on free, and
// a fresh block is paid again in faults and zeroing. Bounded: 4 blocks, 512 MB. Off under
// AddressSanitizer, which must see every free.
class LargeBlockCache {
 public:
  void* take(std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].size != size) continue;
      void* data = blocks_[i].data;
      total_ -= size;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      return data;
    }
    return nullptr;
  }
  bool keep(void* data, std::size_t size) {
#if defined(__SANITIZE_ADDRESS__)
    return false;
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    if (blocks_.size() >= kMaxBlocks || total_ + size > kMaxBytes) return false;
    blocks_.push_back({data, size});
    total_ += size;
    return true;
  }

 private:
  static constexpr std::size_t kMaxBlocks = 4;
  static constexpr std::size_t kMaxBytes = std::size_t(512) << 20;
  struct Block {
    void* data;
    std::size_t size;
  };
  std::mutex mutex_;
  std::vector<Block> blocks_;
  std::size_t total_ = 0;
};

LargeBlockCache& large_blocks() {
  static LargeBlockCache* cache = new LargeBlockCache;  // never destroyed: frees may come late
  return *cache;
}

void* allocate_host(std::size_t nbytes) {
  if (!is_large(nbytes)) {
    const std::size_t rounded = (nbytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    return std::aligned_alloc(kHostAlignment, rounded);
  }
  const std::size_t size = large_size(nbytes);
  if (void* reused = large_blocks().take(size)) return reused;
  void* data = std::aligned_alloc(kHugePage, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (data) madvise(data, size, MADV_HUGEPAGE);  // a hint: failure changes nothing
#endif
  return data;
}

void free_host(void* data, std::size_t nbytes) {
  if (data && is_large(nbytes) && large_blocks().keep(data, large_size(nbytes))) return;
  std::free(data);
}
}  // namespace

Storage::Storage(std::size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (device.is_cuda()) {
    data_ = cuda::allocate(nbytes, device.index);
    return;
  }
  if (nbytes == 0) return;
  data_ = allocate_host(nbytes);
  if (!data_) MT_THROW(OutOfMemoryError, "out of host memory: tried to allocate ", nbytes, " bytes");
}

Storage::Storage(void* data, std::size_t nbytes, Device device, std::function<void()> release, bool writable)
    : data_(data), nbytes_(nbytes), device_(device), release_(std::move(release)), writable_(writable) {}

void Storage::check_writable() const {
  if (!writable_)
    MT_THROW(RuntimeError, "cannot write into a read-only tensor: its memory came from a non-writeable NumPy "
             "array or a read-only DLPack capsule. clone() it first, or make the source writeable.");
}

Storage::~Storage() {
  if (release_) {
    release_();
  } else if (device_.is_cuda()) {
    cuda::release(data_, device_.index);
  } else {
    free_host(data_, nbytes_);
  }
}

}  // namespace mt
