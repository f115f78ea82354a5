#include "core/tensor.h"

#include <algorithm>
#include <mutex>
#include <random>

#include "core/copy.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"

namespace mt {

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset), dtype_(dtype) {
  MT_ASSERT(storage_ && shape_.size() == strides_.size());
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  for (int64_t s : shape)
    MT_CHECK_VALUE(s >= 0, "negative dimension ", s, " in shape ", shape_str(shape));
  const int64_t n = shape_numel(shape);
  const int64_t nbytes = checked_size_mul(n, mt::itemsize(dtype), shape);
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
  shape[d] = (stop - start + step - 1) / step;
  strides[d] = strides_[d] * step;
  return Tensor(storage_, shape, strides, offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1);
  Shape shape = shape_, strides = strides_;
  const int64_t stride = d < dim() ? shape_[d] * strides_[d] : 1;
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
    cuda::memset_zero(out.data_ptr(), out.numel() * out.itemsize(), device.index);
    return out;
  }
  out.fill_(value);
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
