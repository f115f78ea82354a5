// A fixed-width SIMD value ("pack") for the CPU kernels, built on the GCC/Clang vector extension:
// arithmetic, comparisons and ?: work lane-wise, so kernel code reads like scalar code. We use it
// instead of relying on auto-vectorization for reductions: under strict IEEE rules (no
// -ffast-math) the compiler may not reorder a sum or a max into vector lanes, so a reduction
// must be written with explicit lanes to vectorize at all.
//
// Packs are 64 bytes: one AVX-512 register; without AVX-512 the compiler splits each operation
// into two AVX2 (or four SSE) instructions, still correct.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "ops/common/vec_exp.h"

namespace mt {

typedef float PackF32 __attribute__((vector_size(64)));
typedef int32_t PackI32 __attribute__((vector_size(64)));
typedef double PackF64 __attribute__((vector_size(64)));
typedef int64_t PackI64 __attribute__((vector_size(64)));

template <typename A> struct PackOf;
template <> struct PackOf<float> { using type = PackF32; };
template <> struct PackOf<double> { using type = PackF64; };
template <typename A> using pack_t = typename PackOf<A>::type;
template <typename A> constexpr int kPackSize = static_cast<int>(64 / sizeof(A));

inline PackF32 vec_exp(PackF32 x) { return vec_exp_detail::exp_f32<PackF32, PackI32>(x); }
inline PackF64 vec_exp(PackF64 x) { return vec_exp_detail::exp_f64<PackF64, PackI64>(x); }

template <typename A>
inline pack_t<A> pack_broadcast(A v) {
  return pack_t<A>{} + v;
}

// Loads kPackSize<A> elements of T (any alignment) converted to the accumulation type A.
template <typename A, typename T>
inline pack_t<A> pack_load(const T* p) {
  pack_t<A> v;
  if constexpr (sizeof(T) == sizeof(A)) {
    std::memcpy(&v, p, sizeof(v));
  } else {
    for (int j = 0; j < kPackSize<A>; ++j) v[j] = static_cast<A>(p[j]);
  }
  return v;
}

template <typename T, typename A>
inline void pack_store(T* p, pack_t<A> v) {
  if constexpr (sizeof(T) == sizeof(A)) {
    std::memcpy(p, &v, sizeof(v));
  } else {
    for (int j = 0; j < kPackSize<A>; ++j) p[j] = T(v[j]);
  }
}

// Lane-wise max that propagates NaN (std::max and fmax drop it): a NaN lane stays NaN.
template <typename V>
inline V max_propagate_nan(V running, V v) {
  return (v > running) | (v != v) ? v : running;
}
template <>
inline float max_propagate_nan(float running, float v) {
  return (v > running || v != v) ? v : running;
}
template <>
inline double max_propagate_nan(double running, double v) {
  return (v > running || v != v) ? v : running;
}

// Folds the lanes of a pack into one value with a lane-wise op: halves, then quarters, ... meet
// in log2(lanes) shuffle + op steps instead of one scalar step per lane. For short rows (a few
// packs each) the horizontal end of every reduction is a large part of the work.
template <typename V, typename Op>
inline auto pack_fold(V v, Op op) {
  constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(v[0]));
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
  if constexpr (kLanes == 16) {
    v = op(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
    v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
    v = op(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
    v = op(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
    return v[0];
  } else if constexpr (kLanes == 8) {
    v = op(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
    v = op(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5));
    v = op(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6));
    return v[0];
  }
#endif
  auto r = v[0];  // compilers without __builtin_shufflevector: one lane at a time
  for (int j = 1; j < kLanes; ++j) r = op(r, v[j]);
  return r;
}

}  // namespace mt
