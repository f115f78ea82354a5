// Tensor = shared Storage + shape + strides + offset (in elements) + dtype. The device is the
// storage's. Every view op (reshape of a viewable tensor, view, transpose, permute, select,
// slice, squeeze/unsqueeze) only builds new metadata over the same Storage; contiguous() and the
// conversions (to(device), to(dtype)) are the places that copy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace mt {

class Tensor {
 public:
  Tensor() = default;  // undefined: no storage
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype);

  static Tensor empty(const Shape& shape, DType dtype, Device device = Device());

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  int64_t size(int64_t d) const { return shape_[wrap_dim(d, dim())]; }
  int64_t stride(int64_t d) const { return strides_[wrap_dim(d, dim())]; }
  int64_t itemsize() const { return mt::itemsize(dtype_); }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Address of element [0, 0, ...] (storage base + offset).
  void* data_ptr() const;
  template <typename T>
  T* data() const {
    MT_ASSERT(DTypeOf<T>::value == dtype_, "data<T>() with the wrong element type");
    return static_cast<T*>(data_ptr());
  }

  bool is_contiguous() const;
  Tensor contiguous() const;  // itself when already contiguous
  Tensor clone() const;       // always a fresh contiguous copy

  Tensor view(const Shape& shape) const;     // throws when the strides do not allow a view
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor select(int64_t dim, int64_t index) const;  // drops `dim`
  Tensor slice(int64_t dim, int64_t start, int64_t stop, int64_t step) const;  // clamps like Python
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor squeeze() const;

  Tensor to(Device device) const;  // itself when already there
  Tensor to(DType dtype) const;    // itself when already that dtype

  // Writes `value` into every element (this tensor must be contiguous).
  // Int64 refuses NaN, inf and values outside its range (casting those is undefined behaviour).
  Tensor& fill_(double value);
  // The same for an integer: exact for int64 (double holds only 53 bits), converted otherwise.
  Tensor& fill_int_(int64_t value);

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

// Whether a and b read the same bytes: views of one Storage, or Storages wrapping one allocation
// (`t.data` has a Storage of its own, with its own version counter, over t's bytes).
inline bool same_memory(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() || a.storage()->data() == b.storage()->data();
}

// torch's assert_no_internal_overlap, for every write into an existing tensor (in-place ops,
// copy_, index_put_, an output a C++ caller supplies): a dim of stride 0 and size > 1 (an
// expand) makes several elements one memory location, so what lands there would depend on the
// order of the writes. Raises RuntimeError with torch's words. fill_ of a number (zero_) skips
// it, as torch's does: one value written everywhere is the same in any order.
void check_no_internal_overlap(const Tensor& self);

// Creation. randn/rand draw from one process-wide generator seeded by manual_seed (on the host,
// then copied), so a seed gives the same numbers on every device.
Tensor zeros(const Shape& shape, DType dtype, Device device);
Tensor ones(const Shape& shape, DType dtype, Device device);
Tensor full(const Shape& shape, double value, DType dtype, Device device);
Tensor full_int(const Shape& shape, int64_t value, DType dtype, Device device);  // exact for int64
Tensor randn(const Shape& shape, DType dtype, Device device);
Tensor rand(const Shape& shape, DType dtype, Device device);
void manual_seed(uint64_t seed);

}  // namespace mt
