// CUDA reductions, two kernels per dtype with the kind (sum / max) chosen at run time:
// * rows (inner == 1): a warp per row when rows are short, a block per row otherwise, with the
//   warp-then-block reductions of ops/common/reduce.cuh that softmax uses. A few very long rows
//   are split into chunks whose partial states a second launch of the same kernel combines, so
//   one row of millions of elements still fills the GPU.
// * columns (inner > 1): a 32 x 8 block; x runs along inner (coalesced loads), y splits the
//   axis, and softmax's column_allreduce combines the 8 partials: no transpose copy.
#include <algorithm>

#include "core/cuda_check.h"
#include "core/tensor.h"
#include "ops/common/launch.cuh"  // device_info
#include "ops/common/reduce.cuh"
#include "ops/elementwise/elementwise_kernels.h"  // MT_DISPATCH_COMPUTE_TYPES
#include "ops/reduce/reduce_kernels.h"

namespace mt {

// Found by the shared reductions through argument-dependent lookup, so it lives in mt itself.
template <typename T>
__device__ __forceinline__ ReduceState<T> shfl_xor(ReduceState<T> s, int mask) {
  return {shfl_xor(s.value, mask), shfl_xor(s.index, mask)};
}

namespace {

constexpr int kThreads = 256;
// At most 16 blocks an SM: the grid-stride loops do the rest.
int max_blocks() { return 16 * device_info().sm_count; }

// The reduction step as an operator for the shared warp / block / column reductions of
// ops/common/reduce.cuh (the ones softmax uses); the kind is uniform across the grid.
struct ReduceCombineOp {
  ReduceKind kind;
  template <typename T>
  __device__ __forceinline__ ReduceState<T> operator()(ReduceState<T> a, ReduceState<T> b) const {
    return reduce_combine(kind, a, b);
  }
};

template <typename T>
__device__ __forceinline__ void write_result(T* values, int64_t* indices, int64_t at, ReduceState<T> s,
                                             double scale) {
  if (values) values[at] = scale == 1.0 ? s.value : static_cast<T>(s.value * scale);
  if (indices) indices[at] = s.index;
}

// Task t reduces elements [split * chunk, (split + 1) * chunk) of row t / splits into slot t.
// `in_index` (second pass of a split max) gives each element's original index.
template <typename T>
__global__ void reduce_rows_kernel(ReduceKind kind, const T* __restrict__ in, const int64_t* __restrict__ in_index,
                                   T* values, int64_t* indices, int64_t tasks, int64_t splits, int64_t axis,
                                   int64_t chunk, double scale, bool warp_per_task) {
  __shared__ ReduceState<T> scratch[33];
  const ReduceCombineOp op{kind};
  const int lanes = warp_per_task ? 32 : blockDim.x;
  const int lane = warp_per_task ? threadIdx.x & 31 : threadIdx.x;
  const int groups = warp_per_task ? blockDim.x / 32 : 1;
  const int group = warp_per_task ? threadIdx.x / 32 : 0;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * groups + group; t < tasks;
       t += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t row = t / splits, begin = (t % splits) * chunk, end = min(axis, begin + chunk);
    const T* p = in + row * axis;
    ReduceState<T> s = reduce_identity<T>(kind);
    for (int64_t r = begin + lane; r < end; r += lanes)
      s = op(s, {p[r], in_index ? in_index[row * axis + r] : r});
    // A warp per task: the warp's lanes end uniform. A block per task: every thread shares t, so
    // the barriers inside block_allreduce are reached by all.
    s = warp_per_task ? warp_allreduce(s, op) : block_allreduce(s, op, reduce_identity<T>(kind), scratch);
    if (lane == 0) write_result(values, indices, t, s, scale);
  }
}

// A block is kColsY rows of kColsX threads: x runs along inner (coalesced loads), y splits the
// axis, and column_allreduce combines the kColsY partials of each column.
constexpr int kColsXLog2 = 5, kColsX = 1 << kColsXLog2, kColsY = kThreads / kColsX;

template <typename T>
__global__ void reduce_cols_kernel(ReduceKind kind, const T* __restrict__ in, T* values, int64_t* indices,
                                   int64_t outer, int64_t axis, int64_t inner, double scale) {
  __shared__ __align__(16) ReduceState<T> scratch[kColsY * kColsX];  // column_allreduce reads 16 B
  const ReduceCombineOp op{kind};
  const int x = threadIdx.x % kColsX, y = threadIdx.x / kColsX;
  const int64_t tiles = (inner + kColsX - 1) / kColsX;
  for (int64_t t = blockIdx.x; t < outer * tiles; t += gridDim.x) {  // uniform over the block
    const int64_t o = t / tiles, i = (t % tiles) * kColsX + x;
    ReduceState<T> s[1] = {reduce_identity<T>(kind)};
    if (i < inner) {
      const T* p = in + o * axis * inner + i;
      for (int64_t r = y; r < axis; r += kColsY) s[0] = op(s[0], {p[r * inner], r});
    }
    column_allreduce<1>(s, op, scratch, kColsXLog2);
    if (y == 0 && i < inner) write_result(values, indices, o * inner + i, s[0], scale);
  }
}

int blocks_for(int64_t tasks_per_block_units) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tasks_per_block_units, max_blocks())));
}

template <typename T>
void launch_rows(ReduceKind kind, const T* in, const int64_t* in_index, T* values, int64_t* indices,
                 int64_t rows, int64_t axis, double scale, Device device) {
  // Few long rows: split so that the first pass has a few blocks per SM.
  const int64_t sms = device_info().sm_count;
  int64_t splits = 1;
  if (rows < 2 * sms && axis >= 32768) splits = std::min<int64_t>((4 * sms + rows - 1) / rows, axis / 4096);
  if (splits > 1) {
    const int64_t chunk = (axis + splits - 1) / splits;
    splits = (axis + chunk - 1) / chunk;
    Tensor partial = Tensor::empty({rows * splits}, DTypeOf<T>::value, device);
    Tensor partial_index = Tensor::empty({kind == ReduceKind::Max ? rows * splits : 0}, DType::Int64, device);
    int64_t* pidx = kind == ReduceKind::Max ? partial_index.data<int64_t>() : nullptr;
    reduce_rows_kernel<T><<<blocks_for(rows * splits), kThreads, 0, nullptr>>>(
        kind, in, in_index, partial.data<T>(), pidx, rows * splits, splits, axis, chunk, 1.0, false);
    MT_CUDA_CHECK_LAUNCH();
    launch_rows<T>(kind, partial.data<T>(), pidx, values, indices, rows, splits, scale, device);
    return;  // `partial` is freed stream-ordered, after the second kernel has read it
  }
  const bool warp_per_task = axis <= 1024;
  const int64_t per_block = warp_per_task ? kThreads / 32 : 1;
  reduce_rows_kernel<T><<<blocks_for((rows + per_block - 1) / per_block), kThreads, 0, nullptr>>>(
      kind, in, in_index, values, indices, rows, 1, axis, axis, scale, warp_per_task);
  MT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void reduce_cuda(ReduceKind kind, DType compute, const void* in, void* values, int64_t* indices,
                 ReduceShape shape, double scale) {
  int device = 0;
  MT_CUDA_CHECK(cudaGetDevice(&device));  // the caller's DeviceGuard made it current
  MT_DISPATCH_COMPUTE_TYPES(compute, kind == ReduceKind::Sum ? "sum" : "max", [&] {
    const scalar_t* x = static_cast<const scalar_t*>(in);
    scalar_t* v = static_cast<scalar_t*>(values);
    if (shape.inner == 1) {
      launch_rows<scalar_t>(kind, x, nullptr, v, indices, shape.outer, shape.axis, scale,
                            Device(DeviceType::CUDA, device));
    } else {
      const int64_t tiles = shape.outer * ((shape.inner + kColsX - 1) / kColsX);
      reduce_cols_kernel<scalar_t><<<blocks_for(tiles), kThreads, 0, nullptr>>>(
          kind, x, v, indices, shape.outer, shape.axis, shape.inner, scale);
      MT_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace mt
