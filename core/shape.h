// Shape arithmetic shared by Tensor and the ops: numel, contiguous strides, dim wrapping with
// PyTorch's messages, reshape inference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mt {

using Shape = std::vector<int64_t>;

// Element count. A product that overflows int64 throws RuntimeError with torch's wording
// ("numel: integer multiplication overflow"), so no caller ever sees a wrapped count.
int64_t shape_numel(const Shape& shape);
// Bytes of a contiguous allocation of `shape`; overflow throws torch's "Storage size calculation
// overflowed with sizes=[...]".
int64_t contiguous_nbytes(const Shape& shape, int64_t itemsize);
// Row-major strides; overflow throws torch's "Stride calculation overflowed".
Shape contiguous_strides(const Shape& shape);
// Elements a strided view needs its storage to hold: offset + 1 + sum((size - 1) * stride), or 0
// for an empty view. Strides must be >= 0. Overflow throws "Storage size calculation overflowed
// with sizes=[...] and strides=[...]".
int64_t storage_extent(const Shape& shape, const Shape& strides, int64_t offset);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Maps a possibly negative dim into [0, ndim). A 0-d tensor accepts -1 and 0, like torch.
// Throws IndexError: "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
int64_t wrap_dim(int64_t dim, int64_t ndim);

// Resolves one -1 entry and checks the element count: reshape([6], [-1, 2]) -> [3, 2].
Shape infer_reshape(const Shape& requested, int64_t numel);

}  // namespace mt
