// What an elementwise kernel sees: one flat index space over the broadcast output shape, and for
// each operand (0 = output, then up to three inputs) its own strides, 0 along broadcast dims, and
// the dtype it is stored in: kernels compute in one type (float32, float64 or int64) and convert
// each element as they load and store it, so a float16 or mixed-dtype op is still one pass over
// memory. A Python scalar operand has no data pointer; its value travels in the args instead of a
// 1-element tensor copied to the device. Dims that all operands step over contiguously are merged, so the
// common dense case is 1-D and the index arithmetic disappears.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/convert.h"
#include "core/dtype.h"
#include "core/strided_layout.h"

#ifdef __CUDACC__
#define MT_HD __host__ __device__ __forceinline__
#define MT_UNROLL _Pragma("unroll")
#else
#define MT_HD inline
#define MT_UNROLL
#endif

namespace mt {

constexpr int kMaxOperands = 4;  // the output and up to three inputs

// int64 arithmetic wraps around modulo 2^64 as torch's does, computed in the unsigned type:
// signed overflow (INT64_MIN * -1, -INT64_MIN, a long int64 sum) is undefined behaviour in C++.
// T(wrap_t<T>(x) op wrap_t<T>(y)) is that for integers and plain arithmetic for floats.
template <typename T, bool = std::is_integral_v<T>>
struct Wrap { using type = T; };
template <typename T>
struct Wrap<T, true> { using type = std::make_unsigned_t<T>; };
template <typename T>
using wrap_t = typename Wrap<T>::type;

template <typename T>
MT_HD T wrapping_add(T a, T b) { return T(wrap_t<T>(a) + wrap_t<T>(b)); }

struct ElementwiseArgs {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxStridedDims];
  int64_t strides[kMaxOperands][kMaxStridedDims];  // in elements; unused operands are all 0
  void* data[kMaxOperands] = {nullptr, nullptr, nullptr, nullptr};  // nullptr: scalar input
  DType dtypes[kMaxOperands] = {DType::Float32, DType::Float32, DType::Float32, DType::Float32};
  double fscalar[kMaxOperands] = {0, 0, 0, 0};   // a scalar read as a floating type
  int64_t iscalar[kMaxOperands] = {0, 0, 0, 0};  // ... as an integer / bool, or raw bits (select)
};

// Element offsets of every operand for flat index i over dims [0, ndim). The outermost dim needs
// no modulo, so a merged 1-D problem costs no division at all.
MT_HD void elementwise_offsets(const ElementwiseArgs& a, int ndim, int64_t i, int64_t* off) {
MT_UNROLL
  for (int k = 0; k < kMaxOperands; ++k) off[k] = 0;
  for (int d = ndim - 1; d > 0; --d) {
    const int64_t idx = i % a.sizes[d];
    i /= a.sizes[d];
MT_UNROLL
    for (int k = 0; k < kMaxOperands; ++k) off[k] += idx * a.strides[k][d];
  }
  if (ndim > 0) {
MT_UNROLL
    for (int k = 0; k < kMaxOperands; ++k) off[k] += i * a.strides[k][0];
  }
}

// Operand k's element at `off` as T, converted from the dtype it is stored in. The switch is
// the same for every element of a launch, so it costs a predictable branch, not a pass.
template <typename T>
MT_HD T elementwise_load(const ElementwiseArgs& a, int k, int64_t off) {
  const void* p = a.data[k];
  if (p == nullptr) {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a.fscalar[k]);
    else if constexpr (std::is_same_v<T, bool>) return a.iscalar[k] != 0;
    else return static_cast<T>(a.iscalar[k]);
  }
  switch (a.dtypes[k]) {
    case DType::Float32: return convert_element<T>(static_cast<const float*>(p)[off]);
    case DType::Float64: return convert_element<T>(static_cast<const double*>(p)[off]);
    case DType::Float16: return convert_element<T>(static_cast<const Half*>(p)[off]);
    case DType::BFloat16: return convert_element<T>(static_cast<const BFloat16*>(p)[off]);
    case DType::Int64: return convert_element<T>(static_cast<const int64_t*>(p)[off]);
    case DType::Bool: return convert_element<T>(static_cast<const bool*>(p)[off]);
  }
  return T(0);
}

// v written into the output, converted to the output's dtype.
template <typename T>
MT_HD void elementwise_store(const ElementwiseArgs& a, int64_t off, T v) {
  void* p = a.data[0];
  switch (a.dtypes[0]) {
    case DType::Float32: static_cast<float*>(p)[off] = convert_element<float>(v); return;
    case DType::Float64: static_cast<double*>(p)[off] = convert_element<double>(v); return;
    case DType::Float16: static_cast<Half*>(p)[off] = convert_element<Half>(v); return;
    case DType::BFloat16: static_cast<BFloat16*>(p)[off] = convert_element<BFloat16>(v); return;
    case DType::Int64: static_cast<int64_t*>(p)[off] = convert_element<int64_t>(v); return;
    case DType::Bool: static_cast<bool*>(p)[off] = convert_element<bool>(v); return;
  }
}

// Raw element bits (U: an unsigned integer of the element's size), for kernels that move
// elements without looking at them; a scalar operand's bits travel in iscalar.
template <typename U>
MT_HD U elementwise_load_bits(const ElementwiseArgs& a, int k, int64_t off) {
  if (a.data[k] == nullptr) return static_cast<U>(a.iscalar[k]);
  return static_cast<const U*>(a.data[k])[off];
}

template <typename U>
MT_HD void elementwise_store_bits(const ElementwiseArgs& a, int64_t off, U v) {
  static_cast<U*>(a.data[0])[off] = v;
}

}  // namespace mt
