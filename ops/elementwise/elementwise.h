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

// The dtype torch gives `a op b` before op-specific rules (div of ints -> float32).
DType promote_types(const Operand& a, const Operand& b);

Tensor binary_op(BinaryCode code, const Operand& a, const Operand& b);
Tensor unary_op(UnaryCode code, const Tensor& x);
Tensor where(const Tensor& cond, const Operand& a, const Operand& b);

// Writes src (broadcast to dst's shape, converted to dst's dtype and device) into dst, which may
// be any strided view, in place. Returns dst.
const Tensor& copy_into(const Tensor& dst, const Tensor& src);

inline Tensor add(const Operand& a, const Operand& b) { return binary_op(BinaryCode::Add, a, b); }
inline Tensor sub(const Operand& a, const Operand& b) { return binary_op(BinaryCode::Sub, a, b); }
inline Tensor mul(const Operand& a, const Operand& b) { return binary_op(BinaryCode::Mul, a, b); }
inline Tensor div(const Operand& a, const Operand& b) { return binary_op(BinaryCode::Div, a, b); }

}  // namespace mt
