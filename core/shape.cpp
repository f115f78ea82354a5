#include "core/shape.h"

#include <sstream>

#include "core/errors.h"

namespace mt {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  const int64_t extent = ndim > 0 ? ndim : 1;
  const int64_t low = -extent, high = extent - 1;
  MT_CHECK_INDEX(dim >= low && dim <= high, "Dimension out of range (expected to be in range of [",
                 low, ", ", high, "], but got ", dim, ")");
  return dim < 0 ? dim + extent : dim;
}

Shape infer_reshape(const Shape& requested, int64_t numel) {
  Shape shape = requested;
  int64_t known = 1, infer_at = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      MT_CHECK_SHAPE(infer_at < 0, "only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      MT_CHECK_SHAPE(shape[i] >= 0, "invalid shape dimension ", shape[i], " at index ", i, " of shape ",
                     shape_str(requested));
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    MT_CHECK_SHAPE(known != 0 || numel != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(requested),
                   " because the unspecified dimension size -1 can be any value and is ambiguous");
    MT_CHECK_SHAPE(known != 0 && numel % known == 0, "shape '", shape_str(requested),
                   "' is invalid for input of size ", numel);
    shape[infer_at] = numel / known;
  }
  MT_CHECK_SHAPE(shape_numel(shape) == numel, "shape '", shape_str(requested),
                 "' is invalid for input of size ", numel);
  return shape;
}

}  // namespace mt
