#include "ops/matmul/matmul.h"

#include "core/broadcast.h"
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "ops/matmul/matmul_kernels.h"

namespace mt {

namespace {

// [..., M, K] -> [batch..., M, K] expanded (stride 0 where broadcast) and flattened to 3-D.
Tensor as_batched(const Tensor& t, const Shape& batch, int64_t rows, int64_t cols) {
  Shape full = batch;
  full.push_back(rows);
  full.push_back(cols);
  const Tensor e = expand(t, full);
  if (batch.size() == 1) return e;  // already 3-D (a stride-0 batch when broadcast)
  if (batch.empty()) return e.unsqueeze(0);
  return e.reshape({shape_numel(batch), rows, cols});  // a view unless batch dims cannot merge
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check_same_device(a_in, b_in);
  MT_CHECK_SHAPE(a_in.dim() >= 1 && b_in.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ",
                 a_in.dim(), "D and ", b_in.dim(), "D");
  MT_CHECK_TYPE(a_in.dtype() == b_in.dtype(), "expected m1 and m2 to have the same dtype, but got: ",
                dtype_name(a_in.dtype()), " != ", dtype_name(b_in.dtype()));
  MT_CHECK_TYPE(is_floating_point(a_in.dtype()), "\"matmul\" not implemented for '", dtype_name(a_in.dtype()), "'");
  const DType compute = a_in.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  // A 1-D operand is a row (left) or a column (right) whose dim disappears from the result.
  const Tensor a = a_in.dim() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.dim() == 1 ? b_in.unsqueeze(1) : b_in;
  const int64_t m = a.size(-2), k = a.size(-1), k2 = b.size(-2), n = b.size(-1);
  if (k != k2) {  // torch's words for each case
    if (a_in.dim() == 1 && b_in.dim() == 1)
      MT_THROW(ShapeError, "inconsistent tensor size, expected tensor [", k, "] and src [", k2,
               "] to have the same number of elements, but got ", k, " and ", k2, " elements respectively");
    if (a_in.dim() == 2 && b_in.dim() == 1)
      MT_THROW(ShapeError, "size mismatch, got input (", m, "), mat (", m, "x", k, "), vec (", k2, ")");
    MT_THROW(ShapeError, "mat1 and mat2 shapes cannot be multiplied (", m, "x", k, " and ", k2, "x", n, ")");
  }
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2), b_batch(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch);

  const Tensor a3 = as_batched(a.to(compute), batch, m, k), b3 = as_batched(b.to(compute), batch, k, n);
  Tensor c = Tensor::empty({a3.size(0), m, n}, compute, a.device());
  if (k == 0) {
    c.fill_(0.0);
  } else {
    const MatmulArgs args{a3.size(0), m, n, k,
                          a3.data_ptr(), a3.stride(0), a3.stride(1), a3.stride(2),
                          b3.data_ptr(), b3.stride(0), b3.stride(1), b3.stride(2),
                          c.data_ptr()};
    if (c.device().is_cuda()) {
      cuda::DeviceGuard guard(c.device().index);
      matmul_cuda(compute, args);
    } else {
      matmul_cpu(compute, args);
    }
  }
  Shape out = batch;
  if (a_in.dim() > 1) out.push_back(m);
  if (b_in.dim() > 1) out.push_back(n);
  return c.view(out).to(a_in.dtype());
}

}  // namespace mt
