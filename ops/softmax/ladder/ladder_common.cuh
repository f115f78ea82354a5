// What every ladder kernel shares and none of them teaches: where a reduction group lives, the
// exp/log overloads, the softmax/log_softmax epilogue and the float/double dispatch. The
// reductions themselves are written out in each variant's file, because they ARE the lesson.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "ops/softmax/softmax_shape.h"

namespace mt::ladder {

// The (outer, axis, inner) buffer seen as `count` independent groups ("rows"). Group r is the
// pair (o, i) = (r / inner, r % inner); its elements sit at base(r) + a * inner for a < axis.
// With inner == 1 a group is a contiguous row; with inner > 1 consecutive groups are adjacent in
// memory, so threads that own consecutive groups read coalesced.
struct Rows {
  int64_t count;
  int64_t axis;
  int64_t inner;
  __host__ __device__ int64_t base(int64_t r) const { return (r / inner) * axis * inner + r % inner; }
};

inline Rows rows_of(SoftmaxShape s) { return {s.outer * s.inner, s.axis, s.inner}; }

// Grids loop over rows (grid-stride), so a grid never needs more blocks than this; it keeps
// grid.x legal and the launch cheap for any outer.
constexpr int64_t kMaxBlocks = int64_t{1} << 20;
inline unsigned grid_size(int64_t blocks) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

// Accurate exp/log for both types (the float versions are single precision, not promoted).
__device__ __forceinline__ float ex(float v) { return expf(v); }
__device__ __forceinline__ double ex(double v) { return exp(v); }
__device__ __forceinline__ float ln(float v) { return logf(v); }
__device__ __forceinline__ double ln(double v) { return log(v); }
template <typename T>
__device__ __forceinline__ T max_of(T a, T b) { return a > b ? a : b; }
template <typename T>
__device__ __forceinline__ T neg_inf() { return -static_cast<T>(INFINITY); }

// The output from the group's max m and sum s = sum(exp(x - m)):
//   softmax      y = exp(x - m) / s      (multiply by 1/s: one division per group, not per element)
//   log_softmax  y = x - m - log(s)
// `log` is a runtime flag (uniform across the grid, so the branch costs nothing measurable): one
// instantiation per dtype instead of two keeps the build fast.
template <typename T>
struct Epilogue {
  T m, coef;
  bool log;
  __device__ Epilogue(T max, T sum, bool log_) : m(max), coef(log_ ? ln(sum) : T(1) / sum), log(log_) {}
  __device__ T operator()(T v) const { return log ? v - m - coef : ex(v - m) * coef; }
};

// Runs f(T{}) with T = float or double; other dtypes raise TypeError naming the variant.
template <typename F>
void dispatch_float_double(DType dtype, const char* impl, F&& f) {
  switch (dtype) {
    case DType::Float32: f(float{}); return;
    case DType::Float64: f(double{}); return;
    default:
      MT_THROW_TYPE("softmax impl '", impl, "' supports float32 and float64 only, but got ",
                    dtype_name(dtype), " (impl='auto' handles every floating dtype)");
  }
}

}  // namespace mt::ladder
