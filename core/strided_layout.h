// A strided view reduced to its fewest dims: size-1 dims dropped, neighbours that are contiguous
// with each other merged. A transposed matrix stays 2-D; a sliced-but-dense block becomes 1-D.
#pragma once

#include <cstdint>

#include "core/shape.h"

namespace mt {

constexpr int kMaxStridedDims = 16;

struct StridedLayout {
  int ndim = 0;
  int64_t sizes[kMaxStridedDims];
  int64_t strides[kMaxStridedDims];  // in elements
};

// Throws ValueError when more than kMaxStridedDims dims remain after merging.
StridedLayout coalesce_layout(const Shape& shape, const Shape& strides);

}  // namespace mt
