#include "core/shape.h"

#include <algorithm>
#include <sstream>

#include "core/checked_math.h"
#include "core/errors.h"

namespace mt {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (!checked_mul(n, s, &n)) MT_THROW(RuntimeError, "numel: integer multiplication overflow");
  return n;
}

int64_t contiguous_nbytes(const Shape& shape, int64_t itemsize) {
  int64_t n = itemsize;
  for (int64_t s : shape)
    if (!checked_mul(n, s, &n))
      MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape));
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    // The last stride is never used: only products that become a stride must fit.
    if (d > 0 && !checked_mul(stride, std::max<int64_t>(shape[d], 1), &stride))
      MT_THROW(RuntimeError, "Stride calculation overflowed");
  }
  return strides;
}

int64_t storage_extent(const Shape& shape, const Shape& strides, int64_t offset) {
  for (int64_t s : shape)
    if (s == 0) return 0;
  int64_t last = offset, step = 0;  // `last`: index of the view's last element
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!checked_mul(shape[d] - 1, strides[d], &step) || !checked_add(last, step, &last))
      MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape),
               " and strides=", shape_str(strides));
  if (!checked_add(last, 1, &last))
    MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape),
             " and strides=", shape_str(strides));
  return last;
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
      // A wrapped product could match numel by accident and accept an impossible shape.
      MT_CHECK_SHAPE(checked_mul(known, shape[i], &known), "shape '", shape_str(requested),
                     "' is invalid for input of size ", numel);
    }
  }
  if (infer_at >= 0) {
    MT_CHECK_SHAPE(known != 0 || numel != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(requested),
                   " because the unspecified dimension size -1 can be any value and is ambiguous");
    MT_CHECK_SHAPE(known != 0 && numel % known == 0, "shape '", shape_str(requested),
                   "' is invalid for input of size ", numel);
    shape[infer_at] = numel / known;
  }
  int64_t count = 1;
  for (int64_t s : shape) MT_CHECK_SHAPE(checked_mul(count, s, &count), "shape '", shape_str(requested),
                                         "' is invalid for input of size ", numel);
  MT_CHECK_SHAPE(count == numel, "shape '", shape_str(requested),
                 "' is invalid for input of size ", numel);
  return shape;
}

}  // namespace mt
