// Every softmax, whatever the rank and dim, is a loop over (outer, axis, inner) of a contiguous
// buffer: element (o, a, i) lives at (o * axis + a) * inner + i, and the reduction runs over a.
#pragma once

#include <cstdint>

namespace mt {

struct SoftmaxShape {
  int64_t outer;  // prod(shape[:dim])
  int64_t axis;   // shape[dim]
  int64_t inner;  // prod(shape[dim+1:]); 1 means the reduced dim is the last one
  int64_t numel() const { return outer * axis * inner; }
};

}  // namespace mt
