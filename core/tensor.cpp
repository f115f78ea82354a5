#include "core/tensor.h"

#include <algorithm>
#include <mutex>
#include <random>

#include "core/checked_math.h"
#include "core/copy.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"

namespace mt {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset), dtype_(dtype) {
  MT_ASSERT(storage_ && shape_.size() == strides_.size());
  // Every view is checked against the bytes it may touch, so no shape, stride or offset arithmetic
  // anywhere can hand a kernel an out-of-bounds view. Cost: O(ndim) per view.
  for (std::size_t d = 0; d < shape_.size(); ++d)
    MT_CHECK_VALUE(shape_[d] >= 0 && strides_[d] >= 0, "invalid view: sizes ", shape_str(shape_), ", strides ",
                   shape_str(strides_));
  MT_CHECK_VALUE(offset_ >= 0, "invalid view: negative storage offset ", offset_);
  shape_numel(shape_);  // throws when the element count does not fit in int64
  const int64_t need = storage_extent(shape_, strides_, offset_);
  const int64_t have = static_cast<int64_t>(storage_->nbytes()) / mt::itemsize(dtype_);
  if (need > have)
    MT_THROW(RuntimeError, "setStorage: sizes ", shape_str(shape_), ", strides ", shape_str(strides_),
             ", storage offset ", offset_, ", and itemsize ", mt::itemsize(dtype_), " requiring a storage size of ",
             need * mt::itemsize(dtype_), " are out of bounds for storage of size ", storage_->nbytes());
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape)
    MT_CHECK_VALUE(s >= 0, "negative dimension ", s, " in shape ", shape_str(shape));
  // Checked before anything is allocated: a wrapped size would be a tiny buffer behind a huge view.
  const int64_t nbytes = contiguous_nbytes(shape, mt::itemsize(dtype));
  auto storage = std::make_shared<Storage>(static_cast<std::size_t>(nbytes), device);
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

void* Tensor::data_ptr() const {
  MT_ASSERT(defined(), "data_ptr() of an undefined tensor");
  return static_cast<char*>(storage_->data()) + offset_ * itemsize();
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;  // a size-1 dim's stride never matters
    if (strides_[d] != expected) return shape_numel(shape_) == 0;
    expected *= shape_[d];
  }
  return true;
}

void check_no_internal_overlap(const Tensor& self) {
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.strides()[d] == 0 && self.shape()[d] > 1)
      MT_THROW(RuntimeError, "unsupported operation: more than one element of the written-to tensor refers to a "
               "single memory location. Please clone() the tensor before performing the operation.");
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape_, dtype_, device());
  copy_to_contiguous(*this, out);
  return out;
}

Tensor Tensor::view(const Shape& requested) const {
  const Shape shape = infer_reshape(requested, numel());
  // A view exists when the strides of the old shape can be regrouped into the new one. The simple
  // and common case: a contiguous tensor takes any shape.
  if (is_contiguous()) return Tensor(storage_, shape, contiguous_strides(shape), offset_, dtype_);
  // General case (torch's computeStride): walk chunks of old dims that are contiguous among
  // themselves and split each chunk over new dims of the same element count.
  Shape new_strides(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = strides_.empty() ? 1 : strides_.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    tensor_numel *= shape_[d];
    if (d == 0 || (shape_[d - 1] != 1 && strides_[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      MT_CHECK_SHAPE(view_numel == tensor_numel,
                     "view size is not compatible with input tensor's size and stride (at least one dimension "
                     "spans across two contiguous subspaces). Use .reshape(...) instead.");
      if (d > 0) {
        chunk_base_stride = strides_[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  MT_CHECK_SHAPE(view_d == -1, "view size is not compatible with input tensor's size and stride (at least one "
                 "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return Tensor(storage_, shape, new_strides, offset_, dtype_);
}

Tensor Tensor::reshape(const Shape& requested) const {
  try {
    return view(requested);
  } catch (const ShapeError&) {
    return contiguous().view(requested);  // a bad element count throws again, from here
  }
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  dim0 = wrap_dim(dim0, dim());
  dim1 = wrap_dim(dim1, dim());
  Shape shape = shape_, strides = strides_;
  if (dim() > 0) {
    std::swap(shape[dim0], shape[dim1]);
    std::swap(strides[dim0], strides[dim1]);
  }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  MT_CHECK_SHAPE(static_cast<int64_t>(dims.size()) == dim(), "permute(sparse_coo): number of dimensions "
                 "in the tensor input does not match the length of the desired ordering of dimensions "
                 "i.e. input.dim() = ", dim(), " is not equal to len(dims) = ", dims.size());
  Shape shape(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], dim());
    MT_CHECK_VALUE(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    shape[i] = shape_[d];
    strides[i] = strides_[d];
  }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  MT_CHECK_INDEX(dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  d = wrap_dim(d, dim());
  const int64_t size = shape_[d];
  MT_CHECK_INDEX(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", d,
                 " with size ", size);
  if (index < 0) index += size;
  Shape shape = shape_, strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, shape, strides, offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t stop, int64_t step) const {
  MT_CHECK_INDEX(dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  MT_CHECK_VALUE(step > 0, "slice step must be positive");
  d = wrap_dim(d, dim());
  const int64_t size = shape_[d];
  auto clamp = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  start = clamp(start);
  stop = std::max(clamp(stop), start);
  Shape shape = shape_, strides = strides_;
  // (len + step - 1) / step would overflow for a huge step; this form cannot.
  const int64_t len = stop - start;
  shape[d] = len == 0 ? 0 : (len - 1) / step + 1;
  // A single element's stride is never used (torch refuses here; NumPy allows t[::2**62]).
  if (shape[d] > 1 && !checked_mul(strides_[d], step, &strides[d]))
    MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape),
             " and strides=[", strides_[d], " * ", step, "]");
  return Tensor(storage_, shape, strides, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1);
  Shape shape = shape_, strides = strides_;
  int64_t stride = 1;
  if (d < dim() && !checked_mul(shape_[d], strides_[d], &stride)) stride = strides_[d];  // never used to step
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) return *this;
  d = wrap_dim(d, dim());
  if (shape_[d] != 1) return *this;
  Shape shape = shape_, strides = strides_;
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::squeeze() const {
  Shape shape, strides;
  for (int64_t d = 0; d < dim(); ++d) {
    if (shape_[d] == 1) continue;
    shape.push_back(shape_[d]);
    strides.push_back(strides_[d]);
  }
  return Tensor(storage_, shape, strides, offset_, dtype_);
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  Tensor out = empty(shape_, dtype_, device);
  copy_to_contiguous(*this, out);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out = empty(shape_, dtype, device());
  copy_to_contiguous(*this, out);
  return out;
}

Tensor& Tensor::fill_(double value) {
  MT_ASSERT(is_contiguous(), "fill_ needs a contiguous tensor");
  storage_->check_writable();
  if (dtype_ == DType::Int64 && !(value >= -9.2233720368547758e18 && value < 9.2233720368547758e18))
    MT_THROW(RuntimeError, "value cannot be converted to type int64_t without overflow");
  if (device().is_cuda()) {
    // Fill on the host and copy: creation is not a hot path, and it keeps one fill loop.
    Tensor host = full(shape_, value, dtype_, Device());
    copy_to_contiguous(host, *this);
    return *this;
  }
  MT_DISPATCH_ALL_TYPES(dtype_, "fill_", [&] {
    scalar_t* p = data<scalar_t>();
    const scalar_t v = static_cast<scalar_t>(value);
    std::fill(p, p + numel(), v);
  });
  return *this;
}

Tensor& Tensor::fill_int_(int64_t value) {
  if (dtype_ != DType::Int64) return fill_(static_cast<double>(value));
  MT_ASSERT(is_contiguous(), "fill_int_ needs a contiguous tensor");
  storage_->check_writable();
  if (device().is_cuda()) {
    copy_to_contiguous(full_int(shape_, value, dtype_, Device()), *this);
    return *this;
  }
  std::fill(data<int64_t>(), data<int64_t>() + numel(), value);
  return *this;
}

namespace {

std::mutex generator_mutex;
std::mt19937_64& generator() {
  static std::mt19937_64 engine(0x5eed);
  return engine;
}

template <typename Distribution>
Tensor random_tensor(const Shape& shape, DType dtype, Device device, Distribution dist) {
  MT_CHECK_TYPE(is_floating_point(dtype), "random numbers need a floating dtype, got ", dtype_name(dtype));
  Tensor host = Tensor::empty(shape, DType::Float64, Device());
  double* p = host.data<double>();
  {
    std::lock_guard<std::mutex> lock(generator_mutex);
    for (int64_t i = 0; i < host.numel(); ++i) p[i] = dist(generator());
  }
  return host.to(dtype).to(device);
}

}  // namespace

Tensor zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor out = Tensor::empty(shape, dtype, device);
  if (device.is_cuda() && value == 0.0) {
    cuda::memset_zero(out.data_ptr(), out.storage()->nbytes(), device.index);
    return out;
  }
  out.fill_(value);
  return out;
}

Tensor full_int(const Shape& shape, int64_t value, DType dtype, Device device) {
  Tensor out = Tensor::empty(shape, dtype, device);
  out.fill_int_(value);
  return out;
}

Tensor randn(const Shape& shape, DType dtype, Device device) {
  return random_tensor(shape, dtype, device, std::normal_distribution<double>(0.0, 1.0));
}

Tensor rand(const Shape& shape, DType dtype, Device device) {
  return random_tensor(shape, dtype, device, std::uniform_real_distribution<double>(0.0, 1.0));
}

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(generator_mutex);
  generator().seed(seed);
}

}  // namespace mt
