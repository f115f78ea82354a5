// Element types a Tensor can hold, and the one switch that turns a runtime DType into a C++ type.
#pragma once

#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/half.h"

namespace mt {

enum class DType : uint8_t { Float32, Float64, Float16, BFloat16, Int64, Bool };

inline int64_t itemsize(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Float16: return 2;
    case DType::BFloat16: return 2;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

// Python-facing names, as torch spells them ("float32", not "Float").
inline const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "unknown";
}

inline bool is_floating_point(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 ||
         dtype == DType::BFloat16;
}

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };

// Accumulation type: 16-bit floats are summed in float, everything else in itself.
template <typename T> struct AccType { using type = T; };
template <> struct AccType<Half> { using type = float; };
template <> struct AccType<BFloat16> { using type = float; };
template <typename T> using acc_t = typename AccType<T>::type;

}  // namespace mt

// MT_DISPATCH_FLOATING_TYPES(dtype, "softmax", [&] { use scalar_t; })
// Runs the lambda with `scalar_t` bound to the C++ type of a floating dtype; any other dtype
// raises TypeError naming the op, like torch's "not implemented for 'Long'".
#define MT_DISPATCH_CASE(enum_value, type, ...) \
  case enum_value: {                            \
    using scalar_t = type;                      \
    return __VA_ARGS__();                       \
  }

// The switch every dispatcher is made of: CASES is a list of MT_DISPATCH_CASE, and a dtype that
// none of them names raises TypeError naming the op.
#define MT_DISPATCH_SWITCH(DTYPE, OP_NAME, CASES)                                              \
  [&] {                                                                                        \
    switch (DTYPE) {                                                                           \
      CASES                                                                                    \
      default:                                                                                 \
        MT_THROW_TYPE("\"", OP_NAME, "\" not implemented for '", ::mt::dtype_name(DTYPE), "'"); \
    }                                                                                          \
  }()

// The four floating dtypes' cases, shared by the dispatchers that take more.
#define MT_DISPATCH_FLOATING_CASES(...)                                \
  MT_DISPATCH_CASE(::mt::DType::Float32, float, __VA_ARGS__)           \
  MT_DISPATCH_CASE(::mt::DType::Float64, double, __VA_ARGS__)          \
  MT_DISPATCH_CASE(::mt::DType::Float16, ::mt::Half, __VA_ARGS__)      \
  MT_DISPATCH_CASE(::mt::DType::BFloat16, ::mt::BFloat16, __VA_ARGS__)

#define MT_DISPATCH_FLOATING_TYPES(DTYPE, OP_NAME, ...) \
  MT_DISPATCH_SWITCH(DTYPE, OP_NAME, MT_DISPATCH_FLOATING_CASES(__VA_ARGS__))

// Every dtype; the default only catches a corrupt enum value.
#define MT_DISPATCH_ALL_TYPES(DTYPE, OP_NAME, ...)                           \
  MT_DISPATCH_SWITCH(DTYPE, OP_NAME, MT_DISPATCH_FLOATING_CASES(__VA_ARGS__) \
                     MT_DISPATCH_CASE(::mt::DType::Int64, int64_t, __VA_ARGS__) \
                     MT_DISPATCH_CASE(::mt::DType::Bool, bool, __VA_ARGS__))
