// Rung 2 — online: one thread per row, two passes instead of three.
// Pass 1 keeps a running max m and a sum s that is always relative to the current m; when a
// larger value v arrives, the old sum is rescaled by exp(m - v) (Milakov & Gimelshein 2018):
//   v > m:  s = s * exp(m - v) + 1,  m = v        otherwise:  s += exp(v - m)
// Pass 2 writes exp(x - m) / s. One read of x less than naive (2 reads + 1 write instead of
// 3 + 1) at the price of a few more exps — a good trade when memory is the bottleneck, which it
// is. The memory access pattern (and its poor coalescing for inner == 1) is naive's.
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

template <typename T>
__global__ void softmax_online_kernel(const T* __restrict__ x, T* __restrict__ y, Rows rows, bool log) {
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; r < rows.count;
       r += int64_t{gridDim.x} * blockDim.x) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    // The running sum is kept in double, as in `naive`: one thread adds up a whole row.
    T m = neg_inf<T>();
    double s = 0;
    for (int64_t a = 0; a < rows.axis; ++a) {
      const T v = xr[a * stride];
      if (v > m) {
        s = s * double(ex(m - v)) + 1.0;  // exp(-inf) = 0 on the first element
        m = v;
      } else if (v != neg_inf<T>()) {  // exp(-inf - -inf) would be NaN; the term is 0 anyway
        s += double(ex(v - m));
      }
    }

    const Epilogue<T> out(m, T(s), log);
    for (int64_t a = 0; a < rows.axis; ++a) yr[a * stride] = out(xr[a * stride]);
  }
}

}  // namespace

void softmax_online_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "online", [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    constexpr int kThreads = 128;
    softmax_online_kernel<T><<<grid_size((rows.count + kThreads - 1) / kThreads), kThreads, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
