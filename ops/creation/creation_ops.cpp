#include "ops/creation/creation_ops.h"

#include <cmath>
#include <cstdint>

#include "core/broadcast.h"
#include "core/checked_math.h"
#include "core/errors.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce.h"

namespace mt {

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  MT_CHECK_VALUE(step != 0, "step must be nonzero");
  MT_CHECK_VALUE(std::isfinite(start) && std::isfinite(end), "unsupported range: ", start, " -> ", end);
  MT_CHECK_VALUE((step > 0 && end >= start) || (step < 0 && end <= start),
                 "upper bound and larger bound inconsistent with step sign");
  const double count = std::ceil((end - start) / step);
  // Casting a double beyond int64 is undefined behaviour; torch's words for a count that big.
  if (!(count < 9.2233720368547758e18)) MT_THROW(RuntimeError, "invalid size, possible overflow?");
  const int64_t n = static_cast<int64_t>(count);
  // Built on the host (one small copy to the device): arange is a setup-time op.
  Tensor host = Tensor::empty({n}, DType::Float64, Device());
  double* p = host.data<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<double>(i) * step;
  return host.to(dtype).to(device);
}

Tensor arange_int(int64_t start, int64_t end, int64_t step, DType dtype, Device device) {
  MT_CHECK_VALUE(step != 0, "step must be nonzero");
  MT_CHECK_VALUE((step > 0 && end >= start) || (step < 0 && end <= start),
                 "upper bound and larger bound inconsistent with step sign");
  // end - start may not fit in int64 (arange(-2**62, 2**62)); 128 bits hold it, and a count
  // above int64 is torch's overflow error rather than a wrapped length.
  const __int128 span = static_cast<__int128>(end) - start;
  const __int128 count = (span + step + (step > 0 ? -1 : 1)) / step;  // ceil(span / step)
  if (count > INT64_MAX) MT_THROW(RuntimeError, "invalid size, possible overflow?");
  const int64_t n = static_cast<int64_t>(count);
  Tensor host = Tensor::empty({n}, DType::Int64, Device());
  int64_t* p = host.data<int64_t>();
  // start + i * step stays between start and end, so it never overflows.
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(start + static_cast<__int128>(i) * step);
  return host.to(dtype).to(device);
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
  MT_CHECK_TYPE(labels.dtype() == DType::Int64, "one_hot is only applicable to index tensor of type int64, got ",
                dtype_name(labels.dtype()));
  if (num_classes < 0) {
    MT_CHECK_VALUE(labels.numel() > 0, "Can not infer total number of classes from empty tensor.");
  }
  if (labels.numel() > 0) {  // one look at the values on the host, as torch's CPU path does
    const int64_t low = amin(labels, std::nullopt, false).to(Device()).data<int64_t>()[0];
    const int64_t high = amax(labels, std::nullopt, false).to(Device()).data<int64_t>()[0];
    if (low < 0) MT_THROW(RuntimeError, "Class values must be non-negative.");
    if (num_classes < 0) num_classes = high + 1;
    if (high >= num_classes) MT_THROW(RuntimeError, "Class values must be smaller than num_classes.");
  }
  const Tensor classes = arange_int(0, num_classes, 1, DType::Int64, labels.device());
  return binary_op(BinaryCode::Eq, labels.unsqueeze(-1), classes).to(DType::Int64);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  MT_CHECK_VALUE(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const Tensor& first = tensors[0];
  MT_CHECK_SHAPE(first.dim() > 0, "zero-dimensional tensor (at position 0) cannot be concatenated");
  dim = wrap_dim(dim, first.dim());
  Shape shape = first.shape();
  shape[dim] = 0;
  DType dtype = first.dtype();  // torch promotes the inputs' dtypes (int64 with float32 -> float32)
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_same_device(first, t);
    MT_CHECK_SHAPE(t.dim() == first.dim(), "Tensors must have same number of dimensions: got ", first.dim(),
                   " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      MT_CHECK_SHAPE(d == dim || t.shape()[d] == first.shape()[d], "Sizes of tensors must match except in dimension ",
                     dim, ". Expected size ", first.shape()[d], " but got size ", t.shape()[d], " for tensor number ",
                     i, " in the list.");
    if (!checked_add(shape[dim], t.shape()[dim], &shape[dim]))  // several huge expanded inputs
      MT_THROW(RuntimeError, "torch.cat(): the concatenated size along dim ", dim, " overflows int64");
    dtype = promote_tensor_types(dtype, t.dtype());
  }
  Tensor out = Tensor::empty(shape, dtype, first.device());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    const int64_t len = t.shape()[dim];
    if (len > 0) copy_into(out.slice(dim, at, at + len, 1), t);
    at += len;
  }
  return out;
}

}  // namespace mt
