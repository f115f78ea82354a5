// Rung 1 — naive: one thread per row, three passes over the row.
//   pass 1: m = max(x)   pass 2: s = sum(exp(x - m))   pass 3: y = exp(x - m) / s
// Subtracting the max first is what makes it "safe": exp never overflows, whatever x holds.
// Passes 1 and 2 are below; the frame (a thread per row, pass 3) is in naive.cuh, which rung 2
// reuses.
//
// Why it is slow for the usual last-dim case (inner == 1): the 32 threads of a warp work on 32
// different rows, so at each step their loads are `axis` elements apart — 32 separate memory
// transactions per warp load instead of one. And a row's whole reduction is serial in one thread:
// with 1024 rows only 1024 threads run on a GPU built for ~100K.
// For inner > 1 the same code is fast-ish: neighbouring threads own neighbouring (o, i) groups,
// which ARE adjacent in memory, so the loads coalesce.
#include "ops/softmax/ladder/ladder_cuda.h"
#include "ops/softmax/ladder/naive.cuh"

namespace mt::ladder {

namespace {

template <typename T>
struct TwoPassStats {
  __device__ static RowStats<T> of(const T* xr, Rows rows) {
    T m = neg_inf<T>();
    for (int64_t a = 0; a < rows.axis; ++a) m = max_of(m, xr[a * rows.inner]);
    double s = 0;
    for (int64_t a = 0; a < rows.axis; ++a) s += double(ex(xr[a * rows.inner] - m));
    return {m, s};
  }
};

}  // namespace

void softmax_naive_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  launch_thread_per_row<TwoPassStats>("naive", x, y, dtype, shape, log);
}

}  // namespace mt::ladder
