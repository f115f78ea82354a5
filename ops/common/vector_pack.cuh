// 16-byte packs: the widest load/store a thread can issue in one instruction. Kernels work on
// packs of N = 16 / sizeof(T) consecutive elements; a pack that is misaligned (a view with an
// offset, a row length that is not a multiple of N) or that crosses the end of the data falls
// back to element-wise access, so one kernel serves every pointer.
#pragma once

#include <cstdint>

namespace mt {

template <typename T>
constexpr int pack_size() {
  return 16 / static_cast<int>(sizeof(T));
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

inline bool is_aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Loads elements [col, col + N) of `row` into `out` (as the accumulation type A); elements at or
// past `end` read as `fill`. `vec` promises that row + col is 16-byte aligned whenever col is a
// multiple of N.
template <int N, typename T, typename A, typename I>
__device__ __forceinline__ void load_pack(const T* row, I col, I end, bool vec, A (&out)[N], A fill) {
  if (vec && col + N <= end) {
    const Pack<T, N> p = *reinterpret_cast<const Pack<T, N>*>(row + col);
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = static_cast<A>(p.v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      out[j] = col + j < end ? static_cast<A>(row[col + j]) : fill;
  }
}

template <int N, typename T, typename A, typename I>
__device__ __forceinline__ void store_pack(T* row, I col, I end, bool vec, const A (&in)[N]) {
  if (vec && col + N <= end) {
    Pack<T, N> p;
#pragma unroll
    for (int j = 0; j < N; ++j) p.v[j] = T(in[j]);
    *reinterpret_cast<Pack<T, N>*>(row + col) = p;
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (col + j < end) row[col + j] = T(in[j]);
  }
}

// Raw (unconverted) pack copies, for caching rows in shared memory in their storage type.
template <int N, typename T, typename I>
__device__ __forceinline__ Pack<T, N> load_raw(const T* row, I col, I end, bool vec) {
  Pack<T, N> p;
  if (vec && col + N <= end) {
    p = *reinterpret_cast<const Pack<T, N>*>(row + col);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) p.v[j] = col + j < end ? row[col + j] : T(0.0f);
  }
  return p;
}

}  // namespace mt
