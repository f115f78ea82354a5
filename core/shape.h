// Shape arithmetic shared by Tensor and the ops: numel, contiguous strides, dim wrapping with
// PyTorch's messages, reshape inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mt {

using Shape = std::vector<int64_t>;

// Element count; a RuntimeError (torch's "Storage size calculation overflowed") when it does not
// fit int64_t, before anything is allocated.
int64_t shape_numel(const Shape& shape);
// a * b for sizes and byte counts of `shape`, with the same overflow error.
int64_t checked_size_mul(int64_t a, int64_t b, const Shape& shape);
Shape contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Maps a possibly negative dim into [0, ndim). A 0-d tensor accepts -1 and 0, like torch.
// Throws IndexError: "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
int64_t wrap_dim(int64_t dim, int64_t ndim);

// Resolves one -1 entry and checks the element count: reshape([6], [-1, 2]) -> [3, 2].
Shape infer_reshape(const Shape& requested, int64_t numel);

}  // namespace mt
