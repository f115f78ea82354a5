// Gather and scatter along one dim by an int64 index vector, on CPU and CUDA: what t[idx],
// t[mask], t[idx] = v, nn.Embedding and their gradients are built on (minitensor/_indexing.py).
//
//   index_select(x, dim, index)        out.shape = x.shape with shape[dim] = index.numel();
//                                      out[.., k, ..] = x[.., index[k], ..]
//   index_put_(self, dim, index, src)  self[.., index[k], ..] = src[.., k, ..]  (+= with accumulate;
//                                      repeated indices then add up, as index_add_ does)
//
// Indices may be negative (counted from the end, as Python's); anything outside [-size, size)
// raises IndexError before any kernel runs. index_put_ writes into any strided view and bumps the
// storage's version counter.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace mt {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
const Tensor& index_put_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate);

// The kernels see every tensor as contiguous (outer, size, inner) blocks; `index` is already
// wrapped into [0, size). Copies move raw elements of `element_size` bytes; adds run in `compute`
// (float32, float64 or int64).
struct IndexArgs {
  int64_t outer, size, inner, count;  // count = index.numel()
  const int64_t* index;
};
void index_select_cpu(int64_t element_size, const IndexArgs& a, const void* x, void* out);
void index_put_cpu(int64_t element_size, DType compute, bool accumulate, const IndexArgs& a, void* self,
                   const void* src);
void index_select_cuda(int64_t element_size, const IndexArgs& a, const void* x, void* out);
void index_put_cuda(int64_t element_size, DType compute, bool accumulate, const IndexArgs& a, void* self,
                    const void* src);

}  // namespace mt
