// Rung 4 — block: one block of 256 threads per row, reduced with a classic shared-memory tree.
// A warp per row leaves long rows short of parallelism; a block puts 8 warps (256 loads in
// flight per step) on each row. Combining 256 partials needs shared memory: every thread stores
// its partial, then log2(256) = 8 rounds halve the live partials (thread t adds t + 128, then
// t + 64, ...), with a __syncthreads() after each round — 8 barriers and 8 shared-memory
// round trips per reduction, most threads idle in the later rounds. (block_shfl fixes exactly
// that.)
// The kernel (three passes over the row) is in block.cuh, which rung 5 reuses with another
// reduction; this file holds only the tree.
#include "ops/softmax/ladder/block.cuh"
#include "ops/softmax/ladder/ladder_cuda.h"

namespace mt::ladder {

namespace {

// Tree reduction over the block through shared memory; every thread gets the result.
template <int Threads, typename T>
struct TreeReduce {
  static_assert((Threads & (Threads - 1)) == 0, "a power of two: the tree halves it down to 1");
  static constexpr int kSlots = Threads;  // one partial per thread

  template <typename Op>
  __device__ static T reduce(T v, T* buf, Op op) {
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int half = Threads / 2; half > 0; half /= 2) {
      if (t < half) buf[t] = op(buf[t], buf[t + half]);
      __syncthreads();
    }
    const T total = buf[0];
    __syncthreads();  // everyone has read buf[0] before the next reduction overwrites it
    return total;
  }
  __device__ static T max(T v, T* buf) { return reduce(v, buf, [](T p, T q) { return max_of(p, q); }); }
  __device__ static T sum(T v, T* buf) { return reduce(v, buf, [](T p, T q) { return p + q; }); }
};

}  // namespace

void softmax_block_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  launch_softmax_block<TreeReduce>("block", x, y, dtype, shape, log);
}

}  // namespace mt::ladder
