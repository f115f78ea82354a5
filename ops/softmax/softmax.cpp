#include "ops/softmax/softmax.h"

#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/softmax/softmax_cpu.h"

#ifdef MINITENSOR_WITH_CUDA
#include "ops/softmax/softmax_cuda.h"
#endif

namespace mt {

namespace {

const char* op_name(bool log) { return log ? "log_softmax" : "softmax"; }

// Writes the forward result of contiguous `x` into contiguous `y` (same shape, dtype, device).
void run_forward(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  const SoftmaxShape shape = softmax_shape(x.shape(), dim);
  if (x.device().is_cuda()) {
    // Outside the #ifdef: in a build without CUDA it throws CudaError saying so, rather than
    // returning an output that was never computed.
    cuda::DeviceGuard guard(x.device().index);
#ifdef MINITENSOR_WITH_CUDA
    MT_DISPATCH_FLOATING_TYPES(x.dtype(), op_name(log), [&] {
      softmax_forward_cuda(x.data_ptr(), y.data_ptr(), x.dtype(), shape, log);
    });
#endif
    return;
  }
  MT_DISPATCH_FLOATING_TYPES(x.dtype(), op_name(log), [&] {
    softmax_forward_cpu<scalar_t>(x.data<scalar_t>(), y.data<scalar_t>(), shape, log);
  });
}

void run_backward(const Tensor& y, const Tensor& dy, const Tensor& dx, int64_t dim, bool log) {
  const SoftmaxShape shape = softmax_shape(y.shape(), dim);
  if (y.device().is_cuda()) {
    // Outside the #ifdef: in a build without CUDA it throws CudaError saying so, rather than
    // returning an output that was never computed.
    cuda::DeviceGuard guard(y.device().index);
#ifdef MINITENSOR_WITH_CUDA
    MT_DISPATCH_FLOATING_TYPES(y.dtype(), op_name(log), [&] {
      softmax_backward_cuda(y.data_ptr(), dy.data_ptr(), dx.data_ptr(), y.dtype(), shape, log);
    });
#endif
    return;
  }
  MT_DISPATCH_FLOATING_TYPES(y.dtype(), op_name(log), [&] {
    softmax_backward_cpu<scalar_t>(y.data<scalar_t>(), dy.data<scalar_t>(), dx.data<scalar_t>(), shape, log);
  });
}

void check_same(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name, bool log) {
  MT_CHECK_VALUE(a.device() == b.device(), op_name(log), ": expected ", a_name, " and ", b_name,
                 " on the same device, but got ", a.device().str(), " and ", b.device().str());
  MT_CHECK_TYPE(a.dtype() == b.dtype(), op_name(log), ": expected ", a_name, " and ", b_name,
                " of the same dtype, but got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  MT_CHECK_VALUE(a.shape() == b.shape(), op_name(log), ": expected ", a_name, " and ", b_name,
                 " of the same shape, but got ", shape_str(a.shape()), " and ", shape_str(b.shape()));
}

// An output the caller supplied must be exactly where the kernel will write, and writable: the
// same checks as any other write into an existing tensor (read-only memory, an expand).
void check_output(const Tensor& input, const Tensor& output, bool log) {
  check_same(input, "input", output, "output", log);
  output.storage()->check_writable();
  check_no_internal_overlap(output);
  MT_CHECK_VALUE(output.is_contiguous(), op_name(log), ": the output tensor must be contiguous");
}

}  // namespace

SoftmaxShape softmax_shape(const Shape& shape, int64_t dim) {
  if (shape.empty()) return {1, 1, 1};
  SoftmaxShape s{1, shape[dim], 1};
  for (int64_t d = 0; d < dim; ++d) s.outer *= shape[d];
  for (std::size_t d = dim + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

Tensor softmax_forward(const Tensor& input, int64_t dim, bool log) {
  dim = wrap_dim(dim, input.dim());
  MT_CHECK_TYPE(is_floating_point(input.dtype()), "\"", op_name(log), "\" not implemented for '",
                dtype_name(input.dtype()), "'");
  Tensor x = input.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  run_forward(x, y, dim, log);
  return y;
}

Tensor softmax_backward(const Tensor& output, const Tensor& grad_output, int64_t dim, bool log) {
  dim = wrap_dim(dim, output.dim());
  check_same(output, "output", grad_output, "grad_output", log);
  MT_CHECK_TYPE(is_floating_point(output.dtype()), "\"", op_name(log), "_backward\" not implemented for '",
                dtype_name(output.dtype()), "'");
  Tensor y = output.contiguous(), dy = grad_output.contiguous();
  Tensor dx = Tensor::empty(y.shape(), y.dtype(), y.device());
  run_backward(y, dy, dx, dim, log);
  return dx;
}

template <typename T, bool kLog>
void SoftmaxOp<T, kLog>::Forward(const Tensor& input, Tensor& output, int64_t dim) {
  MT_CHECK_TYPE(input.dtype() == DTypeOf<T>::value, op_name(kLog), "<", dtype_name(DTypeOf<T>::value),
                ">: got an input of dtype ", dtype_name(input.dtype()));
  dim = wrap_dim(dim, input.dim());
  if (!output.defined()) output = Tensor::empty(input.shape(), input.dtype(), input.device());
  check_output(input, output, kLog);
  run_forward(input.contiguous(), output, dim, kLog);
}

template <typename T, bool kLog>
void SoftmaxOp<T, kLog>::Backward(const Tensor& output, const Tensor& grad_output, Tensor& grad_input,
                                  int64_t dim) {
  MT_CHECK_TYPE(output.dtype() == DTypeOf<T>::value, op_name(kLog), "<", dtype_name(DTypeOf<T>::value),
                ">: got an output of dtype ", dtype_name(output.dtype()));
  dim = wrap_dim(dim, output.dim());
  check_same(output, "output", grad_output, "grad_output", kLog);
  if (!grad_input.defined()) grad_input = Tensor::empty(output.shape(), output.dtype(), output.device());
  check_output(output, grad_input, kLog);
  run_backward(output.contiguous(), grad_output.contiguous(), grad_input, dim, kLog);
}

template struct SoftmaxOp<float, false>;
template struct SoftmaxOp<float, true>;
template struct SoftmaxOp<double, false>;
template struct SoftmaxOp<double, true>;
template struct SoftmaxOp<Half, false>;
template struct SoftmaxOp<Half, true>;
template struct SoftmaxOp<BFloat16, false>;
template struct SoftmaxOp<BFloat16, true>;

}  // namespace mt
