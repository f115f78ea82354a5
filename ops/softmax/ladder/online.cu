// Rung 2 — online: rung 1 (naive) with one change, two passes instead of three.
// Pass 1 keeps a running max m and a sum s that is always relative to the current m; when a
// larger value v arrives, the old sum is rescaled by exp(m - v) (Milakov & Gimelshein 2018):
//   v > m:  s = s * exp(m - v) + 1,  m = v        otherwise:  s += exp(v - m)
// Pass 2 writes exp(x - m) / s (naive.cuh's frame, as in rung 1). One read of x less than naive
// (2 reads + 1 write instead of 3 + 1) at the price of a few more exps — a good trade when memory
// is the bottleneck, which it is. The memory access pattern (and its poor coalescing for
// inner == 1) is naive's.
#include "ops/softmax/ladder/ladder_cuda.h"
#include "ops/softmax/ladder/naive.cuh"

namespace mt::ladder {

namespace {

template <typename T>
struct OnePassStats {
  __device__ static RowStats<T> of(const T* xr, Rows rows) {
    // The running pair (m, s); s in double, as in `naive`: one thread adds up a whole row.
    RowStats<T> run{neg_inf<T>(), 0.0};
    for (int64_t a = 0; a < rows.axis; ++a) {
      const T v = xr[a * rows.inner];
      if (v > run.m) {
        run.s = run.s * double(ex(run.m - v)) + 1.0;  // exp(-inf) = 0 on the first element
        run.m = v;
      } else if (v != neg_inf<T>()) {  // exp(-inf - -inf) would be NaN; the term is 0 anyway
        run.s += double(ex(v - run.m));
      }
    }
    return run;
  }
};

}  // namespace

void softmax_online_cuda(const void* x, void* y, DType dtype, SoftmaxShape shape, bool log) {
  launch_thread_per_row<OnePassStats>("online", x, y, dtype, shape, log);
}

}  // namespace mt::ladder
