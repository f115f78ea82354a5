// In-place writes (torch's `_` methods) into any strided view, on CPU and CUDA. Each one bumps the
// storage's version counter, which autograd compares against the version it saw when it saved a
// tensor for backward. Arithmetic in place (add_, mul_, clamp_, ...) is the out-of-place op
// followed by assign_result_: one home for torch's checks on what may be written into self.
#include "ops/elementwise/elementwise.h"

#include "core/errors.h"

namespace mt {

namespace {

// torch's ScalarType names, which its casting errors use ("result type Float can't be cast ...").
const char* scalar_type_name(DType d) {
  switch (d) {
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Int64: return "Long";
    case DType::Bool: return "Bool";
  }
  return "unknown";
}

int category(DType d) { return d == DType::Bool ? 0 : (d == DType::Int64 ? 1 : 2); }

// A 0-d host tensor holding a Python scalar: int64 for ints and bools (exact beyond 2^53),
// float64 for floats; copy_ then converts it to the destination's dtype.
Tensor scalar_tensor(const Operand& value) {
  const bool integral = value.kind != Operand::Kind::Float;
  Tensor t = Tensor::empty({}, integral ? DType::Int64 : DType::Float64, Device());
  if (integral) *t.data<int64_t>() = value.i;
  else *t.data<double>() = value.f;
  return t;
}

// The write shared by copy_ and fill_. Internal overlap (core/tensor.h) is checked by the callers:
// torch lets fill_ of a number (and zero_) write one value through an expand, nothing else.
const Tensor& write_(const Tensor& self, const Tensor& src) {
  copy_into(self, src);  // refuses read-only memory
  self.storage()->bump_version();
  return self;
}

}  // namespace

bool can_cast(DType from, DType to) { return category(from) <= category(to); }

const Tensor& copy_(const Tensor& self, const Tensor& src) {
  check_no_internal_overlap(self);
  return write_(self, src);
}

const Tensor& fill_(const Tensor& self, const Operand& value) {
  if (value.is_tensor()) {
    MT_CHECK_VALUE(value.tensor.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
                   value.tensor.dim(), " dimensions.");
    check_no_internal_overlap(self);  // torch refuses fill_(0-d tensor) into an expand; only a number may
    return write_(self, value.tensor);
  }
  // torch's checked conversion: NaN, inf or a float beyond int64 has no int64 value (a plain cast
  // is undefined behaviour and gave INT64_MIN).
  if (self.dtype() == DType::Int64 && value.kind == Operand::Kind::Float &&
      !(value.f >= -9.2233720368547758e18 && value.f < 9.2233720368547758e18))
    MT_THROW(RuntimeError, "value cannot be converted to type int64_t without overflow");
  return write_(self, scalar_tensor(value));
}

const Tensor& assign_result_(const Tensor& self, const Tensor& result) {
  MT_CHECK_SHAPE(result.shape() == self.shape(), "output with shape ", shape_str(self.shape()),
                 " doesn't match the broadcast shape ", shape_str(result.shape()));
  if (!can_cast(result.dtype(), self.dtype()))
    MT_THROW(RuntimeError, "result type ", scalar_type_name(result.dtype()),
                 " can't be cast to the desired output type ",
             scalar_type_name(self.dtype()));
  return copy_(self, result);
}

}  // namespace mt
