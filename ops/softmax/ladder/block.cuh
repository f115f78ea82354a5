// Rung 4's kernel, one block per row in three passes, written once over its block reduction. It
// lives here, owned by the rung that introduces it, so that block_shfl.cu (rung 5, whose one
// change is the reduction) plugs in its own and shows only that.
#pragma once

#include "ops/softmax/ladder/ladder_common.cuh"

namespace mt::ladder {

// Reduce<Threads, T> provides kSlots (how many T of shared memory it needs) and
// max(v, buf) / sum(v, buf), which return the block's total to every thread.
// Passes over global memory, softmax: read x (max); read x, write e = exp(x - m) into y (sum);
// read y, write y * (1/s). log_softmax cannot go through exp and back (exp underflows to 0, whose
// log is -inf), so its pass 2 only sums and pass 3 reads x again: y = x - m - log(s).
template <template <int, typename> class Reduce, int Threads, typename T>
__global__ void __launch_bounds__(Threads) softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                Rows rows, bool log) {
  using R = Reduce<Threads, T>;
  __shared__ T buf[R::kSlots];
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x; r < rows.count; r += gridDim.x) {  // r is uniform over the block
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = threadIdx.x; a < rows.axis; a += Threads) m = max_of(m, xr[a * stride]);
    m = R::max(m, buf);

    T s = 0;
    for (int64_t a = threadIdx.x; a < rows.axis; a += Threads) {
      const T e = ex(xr[a * stride] - m);
      if (!log) yr[a * stride] = e;
      s += e;
    }
    s = R::sum(s, buf);

    if (log) {
      const Epilogue<T> out(m, s, true);
      for (int64_t a = threadIdx.x; a < rows.axis; a += Threads) yr[a * stride] = out(xr[a * stride]);
    } else {
      // Each thread re-reads only the elements it wrote itself: no barrier needed.
      const T inv = T(1) / s;
      for (int64_t a = threadIdx.x; a < rows.axis; a += Threads) yr[a * stride] *= inv;
    }
  }
}

// One block of 256 threads per row; `impl` names the rung in errors.
template <template <int, typename> class Reduce>
void launch_softmax_block(const char* impl, const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, impl, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kThreads = 256;
    const Rows rows = rows_of(shape);
    softmax_block_kernel<Reduce, kThreads, T><<<grid_size(rows.count), kThreads, 0, nullptr>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
