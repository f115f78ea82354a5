#include "ops/elementwise/elementwise.h"

#include <cstring>
#include <initializer_list>
#include <optional>
#include <vector>

#include "core/broadcast.h"
#include "core/copy.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/elementwise/elementwise_kernels.h"

namespace mt {

namespace {

int rank(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::Int64: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Float32: return 3;
    case DType::Float64: return 4;
  }
  return 0;
}

// torch's result_type: operands are ranked in three groups (tensors with dims, 0-d tensors, Python
// scalars), each promoted within itself; a lower group only matters when it is of a higher category
// (bool < int < float). So float16 tensor * 0-d float32 tensor -> float16, int64 tensor * 0-d float64
// tensor -> float64, int64 tensor * 2.5 -> float32 (a Python float counts as the default dtype).
struct PromotionState {
  std::optional<DType> dims, zero_dim, scalars;
};

void promote_into(std::optional<DType>& slot, DType d) { slot = slot ? promote_tensor_types(*slot, d) : d; }

void update(PromotionState& state, const Operand& o) {
  if (o.is_tensor()) {
    promote_into(o.tensor.dim() == 0 ? state.zero_dim : state.dims, o.tensor.dtype());
    return;
  }
  const DType d = o.kind == Operand::Kind::Float ? DType::Float32
                                                 : (o.kind == Operand::Kind::Int ? DType::Int64 : DType::Bool);
  promote_into(state.scalars, d);
}

// torch's combine_categories: `higher` wins unless `lower` is of a higher category.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower || is_floating_point(*higher)) return higher;
  if (*higher == DType::Bool || is_floating_point(*lower)) return promote_tensor_types(*higher, *lower);
  return higher;
}

// Kernels compute in float32, float64 or int64 only.
DType compute_type(DType d) {
  if (d == DType::Float16 || d == DType::BFloat16) return DType::Float32;
  if (d == DType::Bool) return DType::Int64;
  return d;
}

// The device of the operation: that of the tensors, which must agree.
Device common_device(std::initializer_list<const Operand*> ops) {
  const Tensor* first = nullptr;
  for (const Operand* o : ops) {
    if (!o->is_tensor()) continue;
    if (first) check_same_device(*first, o->tensor);
    else first = &o->tensor;
  }
  MT_CHECK_TYPE(first, "expected at least one tensor operand");
  return first->device();
}

Shape common_shape(std::initializer_list<const Operand*> ops) {
  Shape shape;
  for (const Operand* o : ops)
    if (o->is_tensor()) shape = broadcast_shapes(shape, o->tensor.shape());
  return shape;
}

// where() moves raw element bits, so its two value operands must already hold the result's dtype
// (mixed-dtype where is rare; binary and unary ops convert inside their loads instead).
Operand converted(const Operand& o, DType d) {
  return o.is_tensor() && o.tensor.dtype() != d ? Operand(o.tensor.to(d)) : o;
}

// Output strides as they are (copy_ writes into views), input strides broadcast to the output's
// shape, then size-1 dims dropped and dims merged where every operand allows it.
ElementwiseArgs make_args(const Tensor& out, std::initializer_list<const Operand*> inputs) {
  MT_ASSERT(inputs.size() < kMaxOperands);
  const Shape& shape = out.shape();
  std::vector<Shape> strides{out.strides()};
  ElementwiseArgs a;
  a.numel = out.numel();
  a.data[0] = out.data_ptr();
  a.dtypes[0] = out.dtype();
  int k = 1;
  for (const Operand* o : inputs) {
    if (o->is_tensor()) {
      strides.push_back(broadcast_strides(o->tensor, shape));
      a.data[k] = o->tensor.data_ptr();
      a.dtypes[k] = o->tensor.dtype();
    } else {
      strides.push_back(Shape(shape.size(), 0));
      a.fscalar[k] = o->f;
      a.iscalar[k] = o->i;
    }
    ++k;
  }
  const int nops = k;
  int n = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = n > 0;
    for (int op = 0; op < nops && merge; ++op)
      merge = a.strides[op][n - 1] == strides[op][d] * shape[d];
    if (merge) {
      a.sizes[n - 1] *= shape[d];
      for (int op = 0; op < nops; ++op) a.strides[op][n - 1] = strides[op][d];
      continue;
    }
    MT_CHECK_VALUE(n < kMaxStridedDims, "elementwise ops support at most ", kMaxStridedDims,
                   " non-mergeable dimensions");
    a.sizes[n] = shape[d];
    for (int op = 0; op < kMaxOperands; ++op) a.strides[op][n] = op < nops ? strides[op][d] : 0;
    ++n;
  }
  a.ndim = n;
  return a;
}

// Bits of a scalar stored as dtype d, for the dtype-agnostic select kernel.
int64_t scalar_bits(const Operand& s, DType d) {
  uint64_t bits = 0;
  auto put = [&bits](const auto& v) { std::memcpy(&bits, &v, sizeof(v)); };
  switch (d) {
    case DType::Float32: put(static_cast<float>(s.f)); break;
    case DType::Float64: put(s.f); break;
    case DType::Float16: put(Half(static_cast<float>(s.f))); break;
    case DType::BFloat16: put(BFloat16(static_cast<float>(s.f))); break;
    case DType::Int64: put(s.kind == Operand::Kind::Float ? static_cast<int64_t>(s.f) : s.i); break;
    case DType::Bool: put(static_cast<uint8_t>(s.f != 0)); break;
  }
  return static_cast<int64_t>(bits);
}

void run_kernel(const ElementwiseKernel& kernel, const ElementwiseArgs& args, Device device) {
  if (device.is_cuda()) {
    cuda::DeviceGuard guard(device.index);
    elementwise_kernel_cuda(kernel, args);
  } else {
    elementwise_kernel_cpu(kernel, args);
  }
}

void run_binary(BinaryCode code, DType compute, const ElementwiseArgs& args, Device device) {
  run_kernel({ElementwiseKernel::Kind::Binary, code, {}, compute}, args, device);
}

void run_select(const Tensor& out, const ElementwiseArgs& args) {
  run_kernel({ElementwiseKernel::Kind::Select, {}, {}, {}, out.itemsize()}, args, out.device());
}

}  // namespace

DType promote_tensor_types(DType a, DType b) {
  if (a == b) return a;
  if (rank(a) == 2 && rank(b) == 2) return DType::Float32;  // float16 with bfloat16, as torch
  return rank(a) > rank(b) ? a : b;
}

DType promote_types(const Operand& a, const Operand& b) {
  MT_CHECK_TYPE(a.is_tensor() || b.is_tensor(), "expected at least one tensor operand");
  PromotionState state;
  update(state, a);
  update(state, b);
  return *combine(state.dims, combine(state.zero_dim, state.scalars));
}

Tensor binary_op(BinaryCode code, const Operand& a, const Operand& b) {
  const Device device = common_device({&a, &b});
  const Shape shape = common_shape({&a, &b});
  const DType promoted = promote_types(a, b);
  const bool compare = is_comparison(code);
  DType result = compare ? DType::Bool : promoted;
  if (code == BinaryCode::Div && !is_floating_point(promoted)) result = DType::Float32;
  if (code == BinaryCode::Sub && promoted == DType::Bool) {
    if (a.is_tensor() && b.is_tensor())
      MT_THROW(RuntimeError, "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
               "or `logical_xor()` operator instead.");
    MT_THROW(RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.");
  }
  if (code == BinaryCode::Pow && !is_floating_point(result) && !b.is_tensor() && b.i < 0)
    MT_THROW(RuntimeError, "Integers to negative integer powers are not allowed.");
  const DType compute = compare ? compute_type(promoted) : compute_type(result);
  Tensor out = Tensor::empty(shape, result, device);
  run_binary(code, compute, make_args(out, {&a, &b}), device);
  return out;
}

Tensor unary_op(UnaryCode code, const Tensor& input) {
  const DType d = input.dtype();
  // torch: exp/log/sigmoid/tanh/sqrt of integers give float32; neg/abs/relu keep the dtype.
  const bool keeps_ints = code == UnaryCode::Neg || code == UnaryCode::Abs || code == UnaryCode::Relu;
  MT_CHECK_TYPE(!(d == DType::Bool && code == UnaryCode::Neg),
                "Negation, the `-` operator, on a bool tensor is not supported.");
  const DType result = is_floating_point(d) || keeps_ints ? d : DType::Float32;
  const DType compute = compute_type(result);
  const Operand x(input);
  Tensor out = Tensor::empty(input.shape(), result, input.device());
  const ElementwiseArgs args = make_args(out, {&x});
  run_kernel({ElementwiseKernel::Kind::Unary, {}, code, compute}, args, input.device());
  return out;
}

Tensor where(const Tensor& cond, const Operand& a, const Operand& b) {
  MT_CHECK_TYPE(cond.dtype() == DType::Bool, "where expected condition to be a boolean tensor, but got a tensor with dtype ",
                dtype_name(cond.dtype()));
  const Operand c(cond);
  const Device device = common_device({&c, &a, &b});
  const Shape shape = common_shape({&c, &a, &b});
  const DType result = promote_types(a, b);
  Operand x = converted(a, result), y = converted(b, result);
  if (!x.is_tensor()) x.i = scalar_bits(x, result);
  if (!y.is_tensor()) y.i = scalar_bits(y, result);
  Tensor out = Tensor::empty(shape, result, device);
  run_select(out, make_args(out, {&c, &x, &y}));
  return out;
}

const Tensor& copy_into(const Tensor& dst, const Tensor& src) {
  dst.storage()->check_writable();  // every write into existing memory passes here or index_put_
  broadcast_shapes(dst.shape(), src.shape());  // torch's words for sizes that differ
  broadcast_strides(src, dst.shape());         // throws unless src broadcasts to dst
  Tensor s = src;
  if (same_memory(s, dst)) s = s.clone();  // overlapping views: read everything first
  if (s.device() != dst.device() || s.dtype() != dst.dtype()) {
    Tensor staged = Tensor::empty(s.shape(), dst.dtype(), dst.device());
    copy_to_contiguous(s, staged);
    s = staged;
  }
  if (dst.is_contiguous() && s.shape() == dst.shape()) {
    copy_to_contiguous(s, dst);
    return dst;
  }
  const Operand always = Operand::from_bool(true), x(s), unused = Operand::from_int(0);
  run_select(dst, make_args(dst, {&always, &x, &unused}));
  return dst;
}

}  // namespace mt
