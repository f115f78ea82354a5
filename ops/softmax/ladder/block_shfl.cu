// Rung 5 — block_shfl: rung 4 (block) with one change, the block reduction.
// Each warp first reduces its 32 partials in registers with __shfl_down_sync (5 steps, no shared
// memory, no barrier); only the 8 warp results go through shared memory, and each warp reduces
// those 8 with shuffles again. Per reduction: 2 barriers instead of block's 10, 8 shared-memory
// stores instead of 256 + 255 tree steps (2 loads and a store each), and no rounds where half
// the block idles. The memory traffic is
// block's (three passes over global memory), so this step only pays where the reductions'
// latency shows: short rows, where a row is a few loads per thread and the reduction dominates.
// The reduction is in block_shfl.cuh (the later rungs use it too); the kernel is block.cuh's.
#include "ops/softmax/ladder/block.cuh"
#include "ops/softmax/ladder/block_shfl.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

// block_shfl.cuh's reduction in the shape block.cuh's kernel takes.
template <int Threads, typename T>
struct ShflReduce {
  static constexpr int kSlots = Threads / 32;  // one partial per warp
  __device__ static T max(T v, T* warp_buf) { return block_max<Threads>(v, warp_buf); }
  __device__ static T sum(T v, T* warp_buf) { return block_sum<Threads>(v, warp_buf); }
};

}  // namespace

void softmax_block_shfl_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  launch_softmax_block<ShflReduce>("block_shfl", x, y, dtype, shape, log);
}

}  // namespace mt::ladder
