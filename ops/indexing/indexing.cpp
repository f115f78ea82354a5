#include "ops/indexing/indexing.h"

#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "core/broadcast.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace mt {

namespace {

// index as a contiguous int64 vector with negative entries wrapped; IndexError when out of range.
Tensor checked_index(const char* op, const Tensor& index, int64_t size, Device device) {
  MT_CHECK_INDEX(index.dtype() == DType::Int64, op, "(): Expected dtype int64 for index, but got ",
                 dtype_name(index.dtype()));
  MT_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  MT_CHECK_VALUE(index.device() == device, "Expected all tensors to be on the same device, but found at least "
                 "two devices, ", device.str(), " and ", index.device().str(), "!");
  Tensor flat = index.reshape({index.numel()});
  if (flat.numel() == 0) return flat.contiguous();
  // One look on the host, as torch's CPU kernels do: the kernels then never read out of bounds.
  const int64_t high = amax(flat, std::nullopt, false).to(Device()).data<int64_t>()[0];
  const int64_t low = amin(flat, std::nullopt, false).to(Device()).data<int64_t>()[0];
  const int64_t bad = high >= size ? high : low;
  MT_CHECK_INDEX(high < size && low >= -size, "index ", bad, " is out of bounds for dimension with size ", size);
  if (low < 0) flat = where(binary_op(BinaryCode::Lt, flat, Operand::from_int(0)),
                            binary_op(BinaryCode::Add, flat, Operand::from_int(size)), flat);
  return flat.contiguous();
}

IndexArgs make_args(const Shape& shape, int64_t dim, const Tensor& index) {
  IndexArgs a{1, shape.empty() ? 1 : shape[dim], 1, index.numel(), index.data<int64_t>()};
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim) a.outer *= shape[d];
    if (d > dim) a.inner *= shape[d];
  }
  return a;
}

DType accumulate_type(DType d) {
  if (d == DType::Float64 || d == DType::Int64) return d;
  MT_CHECK_TYPE(d != DType::Bool, "index_put_ with accumulate=True is not supported for bool tensors");
  return DType::Float32;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const Tensor input = x.dim() == 0 ? x.reshape({1}) : x;
  dim = wrap_dim(dim, input.dim());
  const Tensor idx = checked_index("index_select", index, input.shape()[dim], x.device());
  Shape shape = input.shape();
  shape[dim] = idx.numel();
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const Tensor src = input.contiguous();
  const IndexArgs args = make_args(src.shape(), dim, idx);
  if (x.device().is_cuda()) {
    cuda::DeviceGuard guard(x.device().index);
    index_select_cuda(x.itemsize(), args, src.data_ptr(), out.data_ptr());
  } else {
    index_select_cpu(x.itemsize(), args, src.data_ptr(), out.data_ptr());
  }
  return out;
}

const Tensor& index_put_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate) {
  self.storage()->check_writable();
  // torch only warns here ("Use of index_put_ on expanded tensors is deprecated") and scatters into
  // the shared locations; its answer then depends on which write lands last, so this raises instead.
  check_no_internal_overlap(self);
  const Tensor target = self.dim() == 0 ? self.reshape({1}) : self;
  dim = wrap_dim(dim, target.dim());
  const Tensor idx = checked_index("index_put_", index, target.shape()[dim], self.device());
  Shape shape = target.shape();
  shape[dim] = idx.numel();
  check_same_device(self, src);
  const DType compute = accumulate ? accumulate_type(self.dtype()) : self.dtype();
  // src broadcast to the selected block's shape, in the dtype the kernel reads.
  Tensor values = Tensor::empty(shape, compute, self.device());
  copy_into(values, src);
  if (values.numel() > 0) {
    Tensor buffer = target.dtype() == compute && target.is_contiguous() ? target : target.to(compute).contiguous();
    const IndexArgs args = make_args(buffer.shape(), dim, idx);
    if (self.device().is_cuda()) {
      cuda::DeviceGuard guard(self.device().index);
      index_put_cuda(buffer.itemsize(), compute, accumulate, args, buffer.data_ptr(), values.data_ptr());
    } else {
      index_put_cpu(buffer.itemsize(), compute, accumulate, args, buffer.data_ptr(), values.data_ptr());
    }
    if (!same_memory(buffer, target)) copy_into(target, buffer);
  }
  self.storage()->bump_version();
  return self;
}

}  // namespace mt
