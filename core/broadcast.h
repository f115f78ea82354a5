// NumPy broadcasting: the result shape of two shapes, and views that repeat a tensor along
// broadcast dims with stride 0 (no copy). Elementwise ops, expand() and copy_() share these.
#pragma once

#include "core/shape.h"
#include "core/tensor.h"

namespace mt {

// Aligns trailing dims; a dim of size 1 stretches. Throws ValueError
// "shapes [2, 3] and [4] cannot be broadcast".
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Strides that read `t` as if it had `shape` (which t.shape() must broadcast to): leading new
// dims and stretched size-1 dims get stride 0. Throws ValueError when t does not broadcast.
Shape broadcast_strides(const Tensor& t, const Shape& shape);

// A stride-0 view of `t` with `shape` (torch's expand; -1 keeps t's size in that dim).
Tensor expand(const Tensor& t, const Shape& shape);

// Throws ValueError naming both devices when they differ (torch's wording).
void check_same_device(const Tensor& a, const Tensor& b);

}  // namespace mt
