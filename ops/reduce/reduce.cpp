#include "ops/reduce/reduce.h"

#include <cmath>
#include <limits>

#include "core/broadcast.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/elementwise/elementwise.h"
#include "ops/reduce/reduce_kernels.h"

namespace mt {

namespace {

// The reduced dims as a mask over x's dims (all of them when `dims` is absent or empty).
std::vector<bool> reduced_mask(const Tensor& x, const DimList& dims) {
  std::vector<bool> mask(static_cast<std::size_t>(x.dim()), !dims || dims->empty());
  if (!dims) return mask;
  for (int64_t d : *dims) {
    const int64_t w = wrap_dim(d, x.dim());
    if (x.dim() == 0) continue;  // a 0-d tensor has nothing to reduce over
    MT_CHECK_VALUE(!mask[w] || dims->empty(), "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

// x seen as contiguous (outer, axis, inner) with the reduced dims in the middle. When the reduced
// dims (ignoring size-1 dims) are adjacent in a contiguous x this is free; otherwise one copy
// moves them last (inner = 1). The kernels read every floating dtype as it is (16-bit ones are
// widened in their loads); only bool is converted first, to the int64 it is counted in.
struct Plan {
  Tensor input;
  ReduceShape shape{1, 1, 1};
  Shape out_shape;
};

Plan plan(const Tensor& x, const std::vector<bool>& mask, bool keepdim) {
  Plan p;
  const Shape& s = x.shape();
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (!mask[d]) p.out_shape.push_back(s[d]);
    else if (keepdim) p.out_shape.push_back(1);
  }
  int first = -1, last = -1;
  bool adjacent = true;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    if (mask[d]) {
      if (first < 0) first = static_cast<int>(d);
      else if (last != static_cast<int>(d) - 1) {
        // only size-1 dims may sit between two reduced dims
        for (int k = last + 1; k < static_cast<int>(d); ++k) adjacent = adjacent && s[k] == 1;
      }
      last = static_cast<int>(d);
    }
  }
  Tensor in = is_floating_point(x.dtype()) ? x : x.to(DType::Int64);
  if (adjacent && in.is_contiguous()) {
    for (std::size_t d = 0; d < s.size(); ++d) {
      if (first >= 0 && static_cast<int>(d) >= first && static_cast<int>(d) <= last) p.shape.axis *= s[d];
      else if (first < 0 || static_cast<int>(d) < first) p.shape.outer *= s[d];
      else p.shape.inner *= s[d];
    }
    p.input = in;
    return p;
  }
  std::vector<int64_t> order;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (!mask[d]) { order.push_back(static_cast<int64_t>(d)); p.shape.outer *= s[d]; }
  for (std::size_t d = 0; d < s.size(); ++d)
    if (mask[d]) { order.push_back(static_cast<int64_t>(d)); p.shape.axis *= s[d]; }
  p.input = in.permute(order).contiguous();
  return p;
}

// Runs a reduction into fresh outputs of p.out_shape, values of the input's dtype; `values` and
// `indices` say which are wanted.
void run(ReduceKind kind, const Plan& p, Tensor* values, Tensor* indices, double scale) {
  const Device device = p.input.device();
  const DType dtype = p.input.dtype();
  if (values) *values = Tensor::empty(p.out_shape, dtype, device);
  if (indices) *indices = Tensor::empty(p.out_shape, DType::Int64, device);
  if (p.shape.outer * p.shape.inner == 0) return;
  void* v = values ? values->data_ptr() : nullptr;
  int64_t* i = indices ? indices->data<int64_t>() : nullptr;
  if (device.is_cuda()) {
    cuda::DeviceGuard guard(device.index);
    reduce_cuda(kind, dtype, p.input.data_ptr(), v, i, p.shape, scale);
  } else {
    reduce_cpu(kind, dtype, p.input.data_ptr(), v, i, p.shape, scale);
  }
}

void check_nonempty(const char* op, const Plan& p, const std::vector<bool>& mask, const Tensor& x) {
  if (p.shape.axis != 0) return;
  int64_t dim = 0;
  for (std::size_t d = 0; d < mask.size(); ++d)
    if (mask[d] && x.shape()[d] == 0) { dim = static_cast<int64_t>(d); break; }
  MT_THROW_INDEX(op, "(): Expected reduction dim ", dim, " to have non-zero size.");
}

Tensor max_values(const char* op, const Tensor& x, const std::vector<bool>& mask, bool keepdim,
                  Tensor* indices) {
  const Plan p = plan(x, mask, keepdim);
  check_nonempty(op, p, mask, x);
  Tensor values;
  run(ReduceKind::Max, p, &values, indices, 1.0);
  return values.to(x.dtype());  // bool was counted in int64
}

}  // namespace

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim) {
  const std::vector<bool> mask = reduced_mask(x, dims);
  const Plan p = plan(x, mask, keepdim);  // bool and int64 sum to int64, as in torch
  if (p.shape.axis == 0) return full(p.out_shape, 0.0, p.input.dtype(), x.device());
  Tensor out;
  run(ReduceKind::Sum, p, &out, nullptr, 1.0);
  return out;
}

Tensor mean(const Tensor& x, const DimList& dims, bool keepdim) {
  MT_CHECK_TYPE(is_floating_point(x.dtype()),
                "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                "complex dtype. Got: ", dtype_name(x.dtype()));
  const std::vector<bool> mask = reduced_mask(x, dims);
  const Plan p = plan(x, mask, keepdim);
  if (p.shape.axis == 0)
    return full(p.out_shape, std::numeric_limits<double>::quiet_NaN(), x.dtype(), x.device());
  Tensor out;
  run(ReduceKind::Sum, p, &out, nullptr, 1.0 / static_cast<double>(p.shape.axis));
  return out;
}

Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) {
  return max_values("amax", x, reduced_mask(x, dims), keepdim, nullptr);
}

Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) {
  if (is_floating_point(x.dtype())) return unary_op(UnaryCode::Neg, amax(unary_op(UnaryCode::Neg, x), dims, keepdim));
  const Operand minus_one = Operand::from_int(-1);
  const Tensor reversed_max = amax(binary_op(BinaryCode::Sub, minus_one, x), dims, keepdim);
  return binary_op(BinaryCode::Sub, minus_one, reversed_max).to(x.dtype());
}

std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  Tensor indices;
  Tensor values = max_values("max", x, reduced_mask(x, std::vector<int64_t>{dim}), keepdim, &indices);
  return {values, indices};
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  Tensor indices;
  if (!dim) {
    max_values("argmax", x.reshape({x.numel()}), {true}, false, &indices);
    return keepdim ? indices.reshape(Shape(x.dim(), 1)) : indices.reshape({});
  }
  max_values("argmax", x, reduced_mask(x, std::vector<int64_t>{*dim}), keepdim, &indices);
  return indices;
}

Tensor sum_to_shape(const Tensor& x, const Shape& shape) {
  MT_CHECK_SHAPE(shape.size() <= x.shape().size() && broadcast_shapes(shape, x.shape()) == x.shape(),
                 "sum_to_shape: shape ", shape_str(shape), " does not broadcast to ", shape_str(x.shape()));
  const std::size_t lead = x.shape().size() - shape.size();
  std::vector<int64_t> dims;
  for (std::size_t d = 0; d < x.shape().size(); ++d)
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return x.reshape(shape);
  return sum(x, dims, true).reshape(shape);
}

}  // namespace mt
