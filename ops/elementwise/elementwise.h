// Elementwise ops with NumPy broadcasting and torch's type promotion, on CPU and CUDA.
//
//   Tensor z = mt::binary_op(BinaryCode::Add, x, Operand(2.0));   // x + 2.0
//
// Inputs may be any strided views; results are new contiguous tensors. Computation happens in
// float32, float64 or int64: bool operands compute as int64, float16/bfloat16 as float32, and the
// result is converted back to the promoted dtype.
#pragma once

#include <cstdint>

#include "core/tensor.h"
#include "ops/elementwise/elementwise_functors.h"

namespace mt {

// A tensor, or a Python scalar (bool, int or float) that takes part in type promotion the way
// torch's "wrapped numbers" do: it never widens a tensor of the same category.
struct Operand {
  enum class Kind : uint8_t { Tensor, Bool, Int, Float };
  Kind kind = Kind::Tensor;
  Tensor tensor;
  double f = 0;
  int64_t i = 0;

  Operand(Tensor t) : kind(Kind::Tensor), tensor(std::move(t)) {}  // NOLINT: implicit on purpose
  static Operand from_bool(bool v) { Operand o; o.kind = Kind::Bool; o.f = v; o.i = v; return o; }
  static Operand from_int(int64_t v) { Operand o; o.kind = Kind::Int; o.f = double(v); o.i = v; return o; }
  static Operand from_float(double v) { Operand o; o.kind = Kind::Float; o.f = v; o.i = int64_t(v); return o; }
  bool is_tensor() const { return kind == Kind::Tensor; }

 private:
  Operand() = default;
};

// torch.promote_types: the join of two dtypes as tensors of equal standing (cat, stack use it).
DType promote_tensor_types(DType a, DType b);

// The dtype torch gives `a op b` before op-specific rules (div of ints -> float32).
DType promote_types(const Operand& a, const Operand& b);

Tensor binary_op(BinaryCode code, const Operand& a, const Operand& b);
Tensor unary_op(UnaryCode code, const Tensor& x);
Tensor where(const Tensor& cond, const Operand& a, const Operand& b);

// Writes src (broadcast to dst's shape, converted to dst's dtype and device) into dst, which may
// be any strided view, in place. Returns dst.
const Tensor& copy_into(const Tensor& dst, const Tensor& src);

// In-place writes into any strided view; each bumps self's storage version (see inplace.cpp).
const Tensor& copy_(const Tensor& self, const Tensor& src);       // src broadcast + converted
const Tensor& fill_(const Tensor& self, const Operand& value);    // a scalar or a 0-d tensor
// Writes `result` (= some op of self) into self, as torch's `add_` etc. do: result must have
// self's shape, and a dtype that casts to self's (no float into int64, no int64 into bool).
const Tensor& assign_result_(const Tensor& self, const Tensor& result);
bool can_cast(DType from, DType to);  // torch.can_cast: never down a category (float > int > bool)

}  // namespace mt
