// Reductions over one or several dims, on CPU and CUDA: sum, mean, max (values + indices), amax,
// argmax, and sum_to_shape (the gradient of a broadcast). `dims` empty or absent means all dims;
// negative dims count from the end; bad dims raise IndexError with PyTorch's message.
// sum of bool/int64 gives int64; mean needs a floating input; float16/bfloat16 reduce in float32.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace mt {

using DimList = std::optional<std::vector<int64_t>>;

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim);
Tensor mean(const Tensor& x, const DimList& dims, bool keepdim);
Tensor amax(const Tensor& x, const DimList& dims, bool keepdim);
// amax of an order-reversing map, mapped back: -x for floats, -1 - x (= ~x) for int64 and bool,
// where -x would wrap at INT64_MIN (-INT64_MIN is INT64_MIN) and lose the minimum.
Tensor amin(const Tensor& x, const DimList& dims, bool keepdim);
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim);  // (values, int64 indices)
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim);   // None: over the flattened x

// Sums `x` down to `shape`, which must broadcast to x.shape(): leading dims and dims where shape
// has 1 are summed away. Returns x itself when nothing needs summing.
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace mt
