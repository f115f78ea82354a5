// Rung 7 — vec4: block_shfl with 16-byte vector loads and stores (float4 / double2).
// A scalar load moves 4 (or 8) bytes per instruction; a 16-byte load moves 4 floats (2 doubles)
// at once. Same bytes, but 4x fewer load/store instructions and address computations, and more
// bytes in flight per thread — which is what hides DRAM latency in a memory-bound kernel.
// Vector accesses must be 16-byte aligned, so the vector path needs every row start aligned:
// x and y aligned and the row length a multiple of the pack (or a single row, whose scalar tail
// is then handled separately). Anything else — e.g. a view starting one element into its buffer
// — runs the same kernel with a pack count of 0: the scalar loop does the whole row.
// Rows must be contiguous (inner == 1): the pack is 4 neighbours along the reduced axis.
#include <cstdint>

#include "ops/softmax/ladder/block_shfl.cuh"
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// The 16-byte vector type of T, and how to read its lanes.
template <typename T> struct Pack;
template <> struct Pack<float> {
  using type = float4;
  static constexpr int size = 4;
  __device__ static float get(const float4& p, int k) { return k == 0 ? p.x : k == 1 ? p.y : k == 2 ? p.z : p.w; }
  __device__ static float4 make(const float* v) { return {v[0], v[1], v[2], v[3]}; }
};
template <> struct Pack<double> {
  using type = double2;
  static constexpr int size = 2;
  __device__ static double get(const double2& p, int k) { return k == 0 ? p.x : p.y; }
  __device__ static double2 make(const double* v) { return {v[0], v[1]}; }
};


template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_vec4_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                int64_t rows, int64_t n, bool vec, bool log) {
  using P = Pack<T>;
  using V = typename P::type;
  constexpr int kPack = P::size;
  __shared__ T warp_buf[kWarps];
  const int64_t packs = vec ? n / kPack : 0;  // elements [0, packs * kPack) go as vectors
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const V* xv = reinterpret_cast<const V*>(xr);
    V* yv = reinterpret_cast<V*>(yr);

    T m = neg_inf<T>();
    for (int64_t p = threadIdx.x; p < packs; p += kThreads) {
      const V v = xv[p];  // one 16-byte load
#pragma unroll
      for (int k = 0; k < kPack; ++k) m = max_of(m, P::get(v, k));
    }
    for (int64_t a = packs * kPack + threadIdx.x; a < n; a += kThreads) m = max_of(m, xr[a]);
    m = block_max<kThreads>(m, warp_buf);

    T s = 0;
    for (int64_t p = threadIdx.x; p < packs; p += kThreads) {
      const V v = xv[p];
      T e[kPack];
#pragma unroll
      for (int k = 0; k < kPack; ++k) {
        e[k] = ex(P::get(v, k) - m);
        s += e[k];
      }
      if (!log) yv[p] = P::make(e);  // one 16-byte store
    }
    for (int64_t a = packs * kPack + threadIdx.x; a < n; a += kThreads) {
      const T e = ex(xr[a] - m);
      if (!log) yr[a] = e;
      s += e;
    }
    s = block_sum<kThreads>(s, warp_buf);

    // softmax rescales the exps it wrote (y); log_softmax recomputes from x.
    const Epilogue<T> out(m, s, log);
    const T inv = out.coef;  // 1 / s for softmax
    const V* src = log ? xv : reinterpret_cast<const V*>(yr);
    for (int64_t p = threadIdx.x; p < packs; p += kThreads) {
      const V v = src[p];
      T o[kPack];
#pragma unroll
      for (int k = 0; k < kPack; ++k) o[k] = log ? out(P::get(v, k)) : P::get(v, k) * inv;
      yv[p] = P::make(o);
    }
    for (int64_t a = packs * kPack + threadIdx.x; a < n; a += kThreads) yr[a] = log ? out(xr[a]) : yr[a] * inv;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

void softmax_vec4_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "vec4", [&](auto tag) {
    using T = decltype(tag);
    MT_CHECK_VALUE(shape.inner == 1, "impl 'vec4' supports only softmax over the last dim (inner == 1), but got inner = ",
                   shape.inner, "; use impl 'block_shfl' or 'auto'");
    constexpr int kPack = Pack<T>::size;
    const bool vec = aligned16(x) && aligned16(y) && (shape.axis % kPack == 0 || shape.outer == 1);
    softmax_vec4_kernel<T><<<grid_size(shape.outer), kThreads, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), shape.outer, shape.axis, vec, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
