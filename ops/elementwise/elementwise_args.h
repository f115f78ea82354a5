// What an elementwise kernel sees: one flat index space over the broadcast output shape, and for
// each operand (0 = output, then up to three inputs) its own strides, 0 along broadcast dims. A
// Python scalar operand has no data pointer; its value travels in the args instead of a 1-element
// tensor copied to the device. Dims that all operands step over contiguously are merged, so the
// common dense case is 1-D and the index arithmetic disappears.
#pragma once

#include <cstdint>
#include <type_traits>

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

struct ElementwiseArgs {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxStridedDims];
  int64_t strides[kMaxOperands][kMaxStridedDims];  // in elements; unused operands are all 0
  void* data[kMaxOperands] = {nullptr, nullptr, nullptr, nullptr};  // nullptr: scalar input
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

template <typename T>
MT_HD T elementwise_load(const ElementwiseArgs& a, int k, int64_t off) {
  if (a.data[k] == nullptr) {
    if constexpr (std::is_floating_point_v<T>) return static_cast<T>(a.fscalar[k]);
    else if constexpr (std::is_same_v<T, bool>) return a.iscalar[k] != 0;
    else return static_cast<T>(a.iscalar[k]);
  }
  return static_cast<const T*>(a.data[k])[off];
}

template <typename T>
MT_HD void elementwise_store(const ElementwiseArgs& a, int64_t off, T v) {
  static_cast<T*>(a.data[0])[off] = v;
}

}  // namespace mt
