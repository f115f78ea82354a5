// extern "C" entry points so compare.py can load the kernels with ctypes (no pybind11 needed).
// algo: 0 Auto, 1 Safe, 2 Online.
#include <cstdint>

#include "ops/softmax/softmax_cpu.h"

namespace {
mt::SoftmaxCpuAlgo to_algo(int algo) {
  return algo == 1 ? mt::SoftmaxCpuAlgo::Safe
                   : algo == 2 ? mt::SoftmaxCpuAlgo::Online : mt::SoftmaxCpuAlgo::Auto;
}
}  // namespace

extern "C" {
void mt_softmax_f32(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner, int log, int algo) {
  mt::softmax_forward_cpu(x, y, mt::SoftmaxShape{outer, axis, inner}, log != 0, to_algo(algo));
}
void mt_softmax_f64(const double* x, double* y, int64_t outer, int64_t axis, int64_t inner, int log, int algo) {
  mt::softmax_forward_cpu(x, y, mt::SoftmaxShape{outer, axis, inner}, log != 0, to_algo(algo));
}
void mt_softmax_backward_f32(const float* y, const float* dy, float* dx, int64_t outer, int64_t axis,
                             int64_t inner, int log) {
  mt::softmax_backward_cpu(y, dy, dx, mt::SoftmaxShape{outer, axis, inner}, log != 0);
}
void mt_softmax_backward_f64(const double* y, const double* dy, double* dx, int64_t outer, int64_t axis,
                             int64_t inner, int log) {
  mt::softmax_backward_cpu(y, dy, dx, mt::SoftmaxShape{outer, axis, inner}, log != 0);
}
}
