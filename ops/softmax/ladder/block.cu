// Rung 4 — block: one block of 256 threads per row, reduced with a classic shared-memory tree.
// A warp per row leaves long rows short of parallelism; a block puts 8 warps (256 loads in
// flight per step) on each row. Combining 256 partials needs shared memory: every thread stores
// its partial, then log2(256) = 8 rounds halve the live partials (thread t adds t + 128, then
// t + 64, ...), with a __syncthreads() after each round — 8 barriers and 8 shared-memory
// round trips per reduction, most threads idle in the later rounds. (block_shfl fixes exactly
// that.)
// Passes over global memory, softmax: read x (max); read x, write e = exp(x - m) into y (sum);
// read y, write y * (1/s). log_softmax cannot go through exp and back (exp underflows to 0, whose
// log is -inf), so its pass 2 only sums and pass 3 reads x again: y = x - m - log(s).
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr int kThreads = 256;  // a power of two: the tree halves it down to 1

// Tree reduction over the block through shared memory; every thread gets the result.
template <typename T, typename Op>
__device__ T block_reduce_tree(T v, T* buf, Op op) {
  const int t = threadIdx.x;
  buf[t] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (t < half) buf[t] = op(buf[t], buf[t + half]);
    __syncthreads();
  }
  const T total = buf[0];
  __syncthreads();  // everyone has read buf[0] before the next reduction overwrites it
  return total;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                                 Rows rows, bool log) {
  __shared__ T buf[kThreads];
  const int64_t stride = rows.inner;
  for (int64_t r = blockIdx.x; r < rows.count; r += gridDim.x) {  // r is uniform over the block
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);

    T m = neg_inf<T>();
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) m = max_of(m, xr[a * stride]);
    m = block_reduce_tree(m, buf, [](T p, T q) { return max_of(p, q); });

    T s = 0;
    for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) {
      const T e = ex(xr[a * stride] - m);
      if (!log) yr[a * stride] = e;
      s += e;
    }
    s = block_reduce_tree(s, buf, [](T p, T q) { return p + q; });

    if (log) {
      const Epilogue<T> out(m, s, true);
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] = out(xr[a * stride]);
    } else {
      // Each thread re-reads only the elements it wrote itself: no barrier needed.
      const T inv = T(1) / s;
      for (int64_t a = threadIdx.x; a < rows.axis; a += kThreads) yr[a * stride] *= inv;
    }
  }
}

}  // namespace

void softmax_block_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "block", [&](auto tag) {
    using T = decltype(tag);
    const Rows rows = rows_of(shape);
    softmax_block_kernel<T><<<grid_size(rows.count), kThreads, 0, nullptr>>>(static_cast<const T*>(x),
                                                                             static_cast<T*>(y), rows, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
