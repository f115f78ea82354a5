// Rung 1 — naive: one thread per row, three passes over the row.
//   pass 1: m = max(x)   pass 2: s = sum(exp(x - m))   pass 3: y = exp(x - m) / s
// Subtracting the max first is what makes it "safe": exp never overflows, whatever x holds.
//
// Why it is slow for the usual last-dim case (inner == 1): the 32 threads of a warp work on 32
// different rows, so at each step their loads are `axis` elements apart — 32 separate memory
// transactions per warp load instead of one. And a row's whole reduction is serial in one thread:
// with 1024 rows only 1024 threads run on a GPU built for ~100K.
// For inner > 1 the same code is fast-ish: neighbouring threads own neighbouring (o, i) groups,
// which ARE adjacent in memory, so the loads coalesce.
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

template <typename T>
__global__ void softmax_naive_kernel(const T* __restrict__ x, T* __restrict__ y, Rows rows, bool log) {
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r < rows.count;
       r += int64_t{gridDim.x} * blockDim.x) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = 0; a < rows.axis; ++a) m = max_of(m, xr[a * stride]);

    // One thread adds up a whole row: the sum is kept in double, or float's rounding error would
    // grow with the row length (a 65K-wide row would miss float32 accuracy).
    double s = 0;
    for (int64_t a = 0; a < rows.axis; ++a) s += double(ex(xr[a * stride] - m));

    const Epilogue<T> out(m, T(s), log);
    for (int64_t a = 0; a < rows.axis; ++a) yr[a * stride] = out(xr[a * stride]);
  }
}

}  // namespace

void softmax_naive_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "naive", [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    constexpr int kThreads = 128;
    softmax_naive_kernel<T><<<grid_size((rows.count + kThreads - 1) / kThreads), kThreads, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
