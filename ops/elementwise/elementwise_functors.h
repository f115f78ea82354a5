// The per-element math, written once for the CPU and CUDA kernels (MT_HD). Each functor picks its
// operation from a runtime code: the code is the same for every element, so the switch costs a
// predictable branch instead of one kernel instantiation per op (CI compiles CUDA on 2 cores).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/elementwise/elementwise_args.h"

namespace mt {

enum class BinaryCode : uint8_t {
  Add, Sub, Mul, Div, Maximum, Pow,             // arithmetic: result of the compute type
  ReluBackward, SigmoidBackward, TanhBackward,  // (grad, x or y): fused autograd helpers
  Eq, Ne, Gt, Ge, Lt, Le,                       // comparisons: bool result
};
enum class UnaryCode : uint8_t { Neg, Exp, Log, Relu, Sigmoid, Tanh, Sqrt, Abs };

inline bool is_comparison(BinaryCode c) { return c >= BinaryCode::Eq; }

// Overloads rather than std:: calls: they resolve to the CUDA intrinsics in device code.
MT_HD float ew_exp(float x) { return expf(x); }
MT_HD double ew_exp(double x) { return exp(x); }
MT_HD float ew_log(float x) { return logf(x); }
MT_HD double ew_log(double x) { return log(x); }
MT_HD float ew_tanh(float x) { return tanhf(x); }
MT_HD double ew_tanh(double x) { return tanh(x); }
MT_HD float ew_sqrt(float x) { return sqrtf(x); }
MT_HD double ew_sqrt(double x) { return sqrt(x); }
MT_HD float ew_pow(float x, float y) { return powf(x, y); }
MT_HD double ew_pow(double x, double y) { return pow(x, y); }
MT_HD int64_t ew_pow(int64_t x, int64_t y) {  // torch rejects negative integer powers; 0 here
  if (y < 0) return x == 1 ? 1 : (x == -1 ? (y % 2 ? -1 : 1) : 0);
  uint64_t r = 1, b = static_cast<uint64_t>(x);  // wraps as torch's does (see wrap_t)
  for (; y > 0; y >>= 1, b *= b)
    if (y & 1) r *= b;
  return static_cast<int64_t>(r);
}


// NaN-propagating, like torch.maximum.
template <typename T>
MT_HD T ew_max(T x, T y) {
  if (x != x) return x;
  if (y != y) return y;
  return x > y ? x : y;
}

template <typename T>
struct BinaryFn {
  BinaryCode code;

  MT_HD T arith(T x, T y) const {
    switch (code) {
      case BinaryCode::Add: return wrapping_add(x, y);
      case BinaryCode::Sub: return T(wrap_t<T>(x) - wrap_t<T>(y));
      case BinaryCode::Mul: return T(wrap_t<T>(x) * wrap_t<T>(y));
      case BinaryCode::Div:
        if constexpr (std::is_integral_v<T>) return y == 0 ? T(0) : x / y;  // never reached: ints divide as float
        else return x / y;
      case BinaryCode::Maximum: return ew_max(x, y);
      case BinaryCode::Pow: return ew_pow(x, y);
      case BinaryCode::ReluBackward: return y > T(0) ? x : T(0);
      case BinaryCode::SigmoidBackward: return x * y * (T(1) - y);
      case BinaryCode::TanhBackward: return x * (T(1) - y * y);
      default: return T(0);
    }
  }
  MT_HD bool compare(T x, T y) const {
    switch (code) {
      case BinaryCode::Eq: return x == y;
      case BinaryCode::Ne: return x != y;
      case BinaryCode::Gt: return x > y;
      case BinaryCode::Ge: return x >= y;
      case BinaryCode::Lt: return x < y;
      default: return x <= y;
    }
  }
  MT_HD void operator()(const ElementwiseArgs& a, const int64_t* off) const {
    const T x = elementwise_load<T>(a, 1, off[1]), y = elementwise_load<T>(a, 2, off[2]);
    if (code >= BinaryCode::Eq) elementwise_store<bool>(a, off[0], compare(x, y));
    else elementwise_store<T>(a, off[0], arith(x, y));
  }
};

template <typename T>
struct UnaryFn {
  UnaryCode code;

  MT_HD T apply(T x) const {
    switch (code) {
      case UnaryCode::Neg: return T(-wrap_t<T>(x));
      case UnaryCode::Relu: return x > T(0) ? x : T(0);  // relu(NaN) = NaN in torch: x > 0 is false ...
      case UnaryCode::Abs: return x < T(0) ? T(-wrap_t<T>(x)) : x;
      default: break;
    }
    if constexpr (std::is_floating_point_v<T>) {  // ints are promoted to float32 before these
      switch (code) {
        case UnaryCode::Exp: return ew_exp(x);
        case UnaryCode::Log: return ew_log(x);
        case UnaryCode::Sigmoid: return T(1) / (T(1) + ew_exp(-x));
        case UnaryCode::Tanh: return ew_tanh(x);
        case UnaryCode::Sqrt: return ew_sqrt(x);
        default: break;
      }
    }
    return x;
  }
  MT_HD void operator()(const ElementwiseArgs& a, const int64_t* off) const {
    T x = elementwise_load<T>(a, 1, off[1]);
    if (code == UnaryCode::Relu && x != x) {  // ... so keep NaN explicitly
      elementwise_store<T>(a, off[0], x);
      return;
    }
    elementwise_store<T>(a, off[0], apply(x));
  }
};

// out = cond ? a : b on raw element bits (U = unsigned integer of the element's size), so one
// instantiation per element size serves every dtype; copy_ is select with cond = true.
template <typename U>
struct SelectFn {
  MT_HD void operator()(const ElementwiseArgs& a, const int64_t* off) const {
    const bool c = elementwise_load<bool>(a, 1, off[1]);
    elementwise_store_bits<U>(a, off[0], c ? elementwise_load_bits<U>(a, 2, off[2]) : elementwise_load_bits<U>(a, 3, off[3]));
  }
};

}  // namespace mt
