// Rung 1's frame, one thread per row: each thread finds its row's max m and sum s, then writes
// the row. It lives here, owned by the rung that introduces it, so that online.cu (rung 2, same
// frame) includes it and shows only what it changes: how m and s are found.
#pragma once

#include "ops/softmax/ladder/ladder_common.cuh"

namespace mt::ladder {

// A row's max m and s = sum(exp(x - m)). One thread adds up a whole row, so s is kept in double:
// in float the rounding error would grow with the row length (a 65K-wide row would miss float32
// accuracy).
template <typename T>
struct RowStats {
  T m;
  double s;
};

// Stats<T>::of(xr, rows) returns the RowStats of the row at xr (elements rows.inner apart).
template <template <typename> class Stats, typename T>
__global__ void softmax_thread_per_row_kernel(const T* __restrict__ x, T* __restrict__ y, Rows rows, bool log) {
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r < rows.count;
       r += int64_t{gridDim.x} * blockDim.x) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);
    const RowStats<T> st = Stats<T>::of(xr, rows);
    const Epilogue<T> out(st.m, T(st.s), log);
    for (int64_t a = 0; a < rows.axis; ++a) yr[a * stride] = out(xr[a * stride]);
  }
}

template <template <typename> class Stats>
void launch_thread_per_row(const char* impl, const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, impl, [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    constexpr int kThreads = 128;
    softmax_thread_per_row_kernel<Stats, T><<<grid_size((rows.count + kThreads - 1) / kThreads), kThreads, 0,
                                              nullptr>>>(static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
