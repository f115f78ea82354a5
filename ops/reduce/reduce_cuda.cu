// CUDA reductions, two kernels per dtype with the kind (sum / max) chosen at run time:
// * rows (inner == 1): a warp per row when rows are short, a block per row otherwise, with the
//   warp-then-block reductions of ops/common/reduce.cuh that softmax uses. A few very long rows
//   are split into chunks whose partial states a second launch of the same kernel combines, so
//   one row of millions of elements still fills the GPU.
// * columns (inner > 1): a 32 x 8 block; x runs along inner (coalesced loads), y splits the
//   axis, and softmax's column_allreduce combines the 8 partials: no transpose copy.
// 16-bit elements are widened to float as they are loaded and the result rounded as it is stored;
// the partial states of a split row stay in float between the two launches.
#include "core/convert.h"
#include "core/cuda_check.h"
#include "core/cuda_runtime.h"
#include "ops/common/launch.cuh"
#include "ops/common/reduce.cuh"
#include "ops/reduce/reduce_kernels.h"

namespace mt {

// Found by the shared reductions through argument-dependent lookup, so it lives in mt itself.
template <typename T>
__device__ __forceinline__ ReduceState<T> shfl_xor(ReduceState<T> s, int mask) {
  return {shfl_xor(s.value, mask), shfl_xor(s.index, mask)};
}

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 16;  // grid-stride cap: a few waves of 256-thread blocks

// The reduction step as an operator for the shared warp / block / column reductions of
// ops/common/reduce.cuh (the ones softmax uses); the kind is uniform across the grid.
struct ReduceCombineOp {
  ReduceKind kind;
  template <typename T>
  __device__ __forceinline__ ReduceState<T> operator()(ReduceState<T> a, ReduceState<T> b) const {
    return reduce_combine(kind, a, b);
  }
};

template <typename Out, typename A>
__device__ __forceinline__ void write_result(Out* values, int64_t* indices, int64_t at, ReduceState<A> s,
                                             double scale) {
  if (values) values[at] = scale == 1.0 ? convert_element<Out>(s.value) : convert_element<Out>(s.value * scale);
  if (indices) indices[at] = s.index;
}

// Task t reduces elements [split * chunk, (split + 1) * chunk) of row t / splits into slot t.
// `in_index` (second pass of a split max) gives each element's original index. In and Out
// differ only around a split: a 16-bit row's partial states are kept in float.
template <typename In, typename Out, typename A = acc_t<In>>
__global__ void reduce_rows_kernel(ReduceKind kind, const In* __restrict__ in, const int64_t* __restrict__ in_index,
                                   Out* values, int64_t* indices, int64_t tasks, int64_t splits, int64_t axis,
                                   int64_t chunk, double scale, bool warp_per_task) {
  __shared__ ReduceState<A> scratch[33];
  const ReduceCombineOp op{kind};
  const int lanes = warp_per_task ? 32 : blockDim.x;
  const int lane = warp_per_task ? threadIdx.x & 31 : threadIdx.x;
  const int groups = warp_per_task ? blockDim.x / 32 : 1;
  const int group = warp_per_task ? threadIdx.x / 32 : 0;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * groups + group; t < tasks;
       t += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t row = t / splits, begin = (t % splits) * chunk, end = min(axis, begin + chunk);
    const In* p = in + row * axis;
    ReduceState<A> s = reduce_identity<A>(kind);
    for (int64_t r = begin + lane; r < end; r += lanes)
      s = op(s, {static_cast<A>(p[r]), in_index ? in_index[row * axis + r] : r});
    // A warp per task: the warp's lanes end uniform. A block per task: every thread shares t, so
    // the barriers inside block_allreduce are reached by all.
    s = warp_per_task ? warp_allreduce(s, op) : block_allreduce(s, op, reduce_identity<A>(kind), scratch);
    if (lane == 0) write_result(values, indices, t, s, scale);
  }
}

// A block is kColsY rows of kColsX threads: x runs along inner (coalesced loads), y splits the
// axis, and column_allreduce combines the kColsY partials of each column.
constexpr int kColsXLog2 = 5, kColsX = 1 << kColsXLog2, kColsY = kThreads / kColsX;

template <typename T, typename A = acc_t<T>>
__global__ void reduce_cols_kernel(ReduceKind kind, const T* __restrict__ in, T* values, int64_t* indices,
                                   int64_t outer, int64_t axis, int64_t inner, double scale) {
  __shared__ __align__(16) ReduceState<A> scratch[kColsY * kColsX];  // column_allreduce reads 16 B
  const ReduceCombineOp op{kind};
  const int x = threadIdx.x % kColsX, y = threadIdx.x / kColsX;
  const int64_t tiles = (inner + kColsX - 1) / kColsX;
  for (int64_t t = blockIdx.x; t < outer * tiles; t += gridDim.x) {  // uniform over the block
    const int64_t o = t / tiles, i = (t % tiles) * kColsX + x;
    ReduceState<A> s[1] = {reduce_identity<A>(kind)};
    if (i < inner) {
      const T* p = in + o * axis * inner + i;
      for (int64_t r = y; r < axis; r += kColsY) s[0] = op(s[0], {static_cast<A>(p[r * inner]), r});
    }
    column_allreduce<1>(s, op, scratch, kColsXLog2);
    if (y == 0 && i < inner) write_result(values, indices, o * inner + i, s[0], scale);
  }
}

// Blocks for `tasks` block-sized pieces of work (a row, a split of a row, a tile of columns).
unsigned blocks_for(int64_t tasks) { return grid_stride_blocks(tasks, 1, kBlocksPerSm); }

// One launch: a warp per row when rows are short, a block per row otherwise.
template <typename In, typename Out>
void launch_rows_once(ReduceKind kind, const In* in, const int64_t* in_index, Out* values, int64_t* indices,
                      int64_t rows, int64_t axis, double scale) {
  const bool warp_per_task = axis <= 1024;
  const int64_t per_block = warp_per_task ? kThreads / 32 : 1;
  reduce_rows_kernel<In, Out><<<blocks_for(ceil_div(rows, per_block)), kThreads>>>(
      kind, in, in_index, values, indices, rows, 1, axis, axis, scale, warp_per_task);
  MT_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_rows(ReduceKind kind, const T* in, T* values, int64_t* indices, int64_t rows, int64_t axis,
                 double scale) {
  using A = acc_t<T>;
  // Fewer rows than two per SM, and long: split each row so that the first pass has about four
  // blocks per SM; a second launch combines the partial states.
  const int64_t sms = device_info().sm_count;
  int64_t splits = 1;
  if (rows < 2 * sms && axis >= 32768) splits = std::min<int64_t>(ceil_div(4 * sms, rows), axis / 4096);
  if (splits <= 1) return launch_rows_once<T, T>(kind, in, nullptr, values, indices, rows, axis, scale);
  const int64_t chunk = ceil_div(axis, splits);
  splits = ceil_div(axis, chunk);
  const bool want_index = kind == ReduceKind::Max;
  // Freed stream-ordered when these go out of scope, after the second kernel has read them.
  cuda::ScratchBuffer partial(sizeof(A) * rows * splits);
  cuda::ScratchBuffer partial_index(want_index ? sizeof(int64_t) * rows * splits : 0);
  int64_t* pidx = want_index ? partial_index.as<int64_t>() : nullptr;
  reduce_rows_kernel<T, A><<<blocks_for(rows * splits), kThreads>>>(
      kind, in, nullptr, partial.as<A>(), pidx, rows * splits, splits, axis, chunk, 1.0, false);
  MT_CUDA_CHECK_LAUNCH();
  launch_rows_once<A, T>(kind, partial.as<A>(), pidx, values, indices, rows, splits, scale);
}

}  // namespace

void reduce_cuda(ReduceKind kind, DType dtype, const void* in, void* values, int64_t* indices,
                 ReduceShape shape, double scale) {
  MT_DISPATCH_REDUCE_TYPES(dtype, kind == ReduceKind::Sum ? "sum" : "max", [&] {
    const scalar_t* x = static_cast<const scalar_t*>(in);
    scalar_t* v = static_cast<scalar_t*>(values);
    if (shape.inner == 1) {
      launch_rows<scalar_t>(kind, x, v, indices, shape.outer, shape.axis, scale);
    } else {
      const int64_t tiles = shape.outer * ceil_div(shape.inner, kColsX);
      reduce_cols_kernel<scalar_t><<<blocks_for(tiles), kThreads>>>(kind, x, v, indices, shape.outer,
                                                                     shape.axis, shape.inner, scale);
      MT_CUDA_CHECK_LAUNCH();
    }
  });
}

}  // namespace mt
