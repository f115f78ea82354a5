// Rung 8 — multiblock: one row reduced by many blocks, for a few very long rows.
// Every kernel so far gives a row to one block. With 4 rows of a million elements that is 4
// blocks on a GPU with 132 SMs: 97% of it idles. Here each row is cut into chunks, one block per
// (chunk, row), sized so that rows x chunks is a few blocks per SM. A block cannot see another
// block's partial result inside one kernel (no grid-wide barrier), so the steps are separate
// launches, each kernel boundary being the barrier:
//   1. partial_max:  block (c, r) reduces chunk c of row r           -> partial[r][c]
//   2. reduce:       one block per row reduces partial[r][:]         -> row_max[r]
//   3. partial_sum:  block (c, r) sums exp(x - row_max[r]) over its chunk -> partial[r][c]
//   4. reduce:       one block per row                               -> row_sum[r]
//   5. normalise:    block (c, r) writes its chunk of y
// Memory: x is read three times (max, sum, normalise) and y written once; a chunk's second and
// third reads hit L2 only if the whole tensor fits there, so this is the 4N-traffic, full-GPU
// parallelism end of the trade-off. (The production dispatcher does better on sm_90: a cluster
// of blocks with distributed shared memory keeps the row on chip.) Any outer works: grid.y
// loops over rows, and inner > 1 reads at stride inner like the other block kernels.
#include "core/cuda_runtime.h"
#include "ops/softmax/ladder/block_shfl.cuh"
#include "ops/softmax/ladder/ladder_common.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kMinChunk = 8 * kThreads;  // below ~8 elements per thread the extra launches dominate
constexpr int64_t kMaxGridY = 65535;         // the hardware limit of grid.y


// How a row is cut: chunk `c` covers [c * chunk, min((c + 1) * chunk, axis)).
struct Split {
  int64_t chunk;
  int64_t chunks;
};

// Steps 1 and 3: this block's partial max (row_max == nullptr) or partial sum of exp(x - max).
template <typename T>
__global__ void __launch_bounds__(kThreads) chunk_reduce_kernel(const T* __restrict__ x, const T* __restrict__ row_max,
                                                                T* __restrict__ partial, Rows rows, Split split) {
  __shared__ T warp_buf[kWarps];
  const int64_t begin = blockIdx.x * split.chunk;
  const int64_t end = min(begin + split.chunk, rows.axis);
  for (int64_t r = blockIdx.y; r < rows.count; r += gridDim.y) {
    const T* xr = x + rows.base(r);
    T v;
    if (row_max == nullptr) {
      v = neg_inf<T>();
      for (int64_t a = begin + threadIdx.x; a < end; a += kThreads) v = max_of(v, xr[a * rows.inner]);
      v = block_max<kThreads>(v, warp_buf);
    } else {
      const T m = row_max[r];
      v = 0;
      for (int64_t a = begin + threadIdx.x; a < end; a += kThreads) v += ex(xr[a * rows.inner] - m);
      v = block_sum<kThreads>(v, warp_buf);
    }
    if (threadIdx.x == 0) partial[r * split.chunks + blockIdx.x] = v;
  }
}

// Steps 2 and 4: one block per row folds the row's `chunks` partials into one value.
template <typename T>
__global__ void __launch_bounds__(kThreads) combine_kernel(const T* __restrict__ partial, T* __restrict__ out,
                                                           int64_t rows, int64_t chunks, bool is_max) {
  __shared__ T warp_buf[kWarps];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* pr = partial + r * chunks;
    T v;
    if (is_max) {
      v = neg_inf<T>();
      for (int64_t c = threadIdx.x; c < chunks; c += kThreads) v = max_of(v, pr[c]);
      v = block_max<kThreads>(v, warp_buf);
    } else {
      v = 0;
      for (int64_t c = threadIdx.x; c < chunks; c += kThreads) v += pr[c];
      v = block_sum<kThreads>(v, warp_buf);
    }
    if (threadIdx.x == 0) out[r] = v;
  }
}

// Step 5.
template <typename T>
__global__ void __launch_bounds__(kThreads) normalise_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                             const T* __restrict__ row_max, const T* __restrict__ row_sum,
                                                             Rows rows, Split split, bool log) {
  const int64_t begin = blockIdx.x * split.chunk;
  const int64_t end = min(begin + split.chunk, rows.axis);
  for (int64_t r = blockIdx.y; r < rows.count; r += gridDim.y) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);
    const Epilogue<T> out(row_max[r], row_sum[r], log);
    for (int64_t a = begin + threadIdx.x; a < end; a += kThreads) yr[a * rows.inner] = out(xr[a * rows.inner]);
  }
}

}  // namespace

void softmax_multiblock_cuda(const void* x_, void* y_, DType dtype, SoftmaxShape shape, bool log) {
  dispatch_float_double(dtype, "multiblock", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(x_);
    T* y = static_cast<T*>(y_);
    const Rows rows = rows_of(shape);

    // Enough blocks for ~4 per SM in total, but never chunks so small the launches dominate.
    const int64_t target_blocks = 4 * int64_t{cuda::current_device_info().sm_count};
    const int64_t chunks_per_row = std::max<int64_t>(1, (target_blocks + rows.count - 1) / rows.count);
    Split split;
    split.chunk = std::max(kMinChunk, (rows.axis + chunks_per_row - 1) / chunks_per_row);
    split.chunks = (rows.axis + split.chunk - 1) / split.chunk;

    // The partials, from the library's pool; freed stream-ordered (after the kernels that use
    // them) when it goes out of scope, even when a launch throws.
    cuda::ScratchBuffer scratch(sizeof(T) * static_cast<std::size_t>(rows.count * (split.chunks + 2)));
    T* partial = scratch.as<T>();
    T* row_max = partial + rows.count * split.chunks;
    T* row_sum = row_max + rows.count;

    const dim3 grid(static_cast<unsigned>(split.chunks), static_cast<unsigned>(std::min(rows.count, kMaxGridY)));
    chunk_reduce_kernel<T><<<grid, kThreads, 0, nullptr>>>(x, nullptr, partial, rows, split);
    MT_CUDA_CHECK_LAUNCH();
    combine_kernel<T><<<grid_size(rows.count), kThreads, 0, nullptr>>>(partial, row_max, rows.count, split.chunks, true);
    MT_CUDA_CHECK_LAUNCH();
    chunk_reduce_kernel<T><<<grid, kThreads, 0, nullptr>>>(x, row_max, partial, rows, split);
    MT_CUDA_CHECK_LAUNCH();
    combine_kernel<T><<<grid_size(rows.count), kThreads, 0, nullptr>>>(partial, row_sum, rows.count, split.chunks, false);
    MT_CUDA_CHECK_LAUNCH();
    normalise_kernel<T><<<grid, kThreads, 0, nullptr>>>(x, y, row_max, row_sum, rows, split, log);
    MT_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace mt::ladder
