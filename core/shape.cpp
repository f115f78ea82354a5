#include "core/shape.h"

#include <sstream>

#include "core/errors.h"

namespace mt {

// The product of the sizes but the one at `skip` in `out`; false when it does not fit int64_t
// (unless a size is 0: [2**62, 4, 0] has no elements, whatever the order of the products).
static bool size_product(const Shape& shape, std::size_t skip, int64_t* out) {
  int64_t n = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i == skip) continue;
    if (shape[i] == 0) {
      *out = 0;
      return true;
    }
    overflow = overflow || __builtin_mul_overflow(n, shape[i], &n);
  }
  *out = n;
  return !overflow;
}

int64_t checked_size_mul(int64_t a, int64_t b, const Shape& shape) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape));
  return product;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 0;
  if (!size_product(shape, shape.size(), &n))
    MT_THROW(RuntimeError, "Storage size calculation overflowed with sizes=", shape_str(shape));
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
  int64_t infer_at = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      MT_CHECK_SHAPE(infer_at < 0, "only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      MT_CHECK_SHAPE(shape[i] >= 0, "invalid shape dimension ", shape[i], " at index ", i, " of shape ",
                     shape_str(requested));
    }
  }
  // A product past int64_t is past any numel: the shape is invalid, not wrapped around to fit.
  int64_t known = 0;
  MT_CHECK_SHAPE(size_product(shape, infer_at >= 0 ? std::size_t(infer_at) : shape.size(), &known),
                 "shape '", shape_str(requested), "' is invalid for input of size ", numel);
  if (infer_at >= 0) {
    MT_CHECK_SHAPE(known != 0 || numel != 0, "cannot reshape tensor of 0 elements into shape ", shape_str(requested),
                   " because the unspecified dimension size -1 can be any value and is ambiguous");
    MT_CHECK_SHAPE(known != 0 && numel % known == 0, "shape '", shape_str(requested),
                   "' is invalid for input of size ", numel);
    shape[infer_at] = numel / known;
  }
  int64_t total = 0;
  MT_CHECK_SHAPE(size_product(shape, shape.size(), &total) && total == numel, "shape '",
                 shape_str(requested), "' is invalid for input of size ", numel);
  return shape;
}

}  // namespace mt
