#include "core/broadcast.h"

#include <algorithm>

#include "core/errors.h"

namespace mt {

namespace {

// torch's words: dims are counted in the broadcast result, from the left.
[[noreturn]] void throw_size_mismatch(int64_t size_a, int64_t size_b, std::size_t dim) {
  MT_THROW(ShapeError, "The size of tensor a (", size_a, ") must match the size of tensor b (", size_b,
           ") at non-singleton dimension ", dim);
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {  // i counts from the last dim
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1) throw_size_mismatch(sa, sb, n - 1 - i);
    out[n - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  const Shape& from = t.shape();
  MT_CHECK_SHAPE(from.size() <= shape.size(), "the number of sizes provided (", shape.size(),
                 ") must be greater or equal to the number of dimensions in the tensor (", from.size(), ")");
  const std::size_t lead = shape.size() - from.size();
  Shape strides(shape.size(), 0);
  for (std::size_t d = 0; d < from.size(); ++d) {
    const int64_t want = shape[lead + d];
    if (from[d] == want) {
      strides[lead + d] = want == 1 ? 0 : t.strides()[d];
    } else if (from[d] != 1) {
      MT_THROW(ShapeError, "The expanded size of the tensor (", want, ") must match the existing size (", from[d],
               ") at non-singleton dimension ", lead + d, ".  Target sizes: ", shape_str(shape),
               ".  Tensor sizes: ", shape_str(from));
    }
  }
  return strides;
}

Tensor expand(const Tensor& t, const Shape& requested) {
  MT_CHECK_SHAPE(requested.size() >= t.shape().size(), "expand(minitensor.", dtype_name(t.dtype()), "{",
                 shape_str(t.shape()), "}, size=", shape_str(requested), "): the number of sizes provided (",
                 requested.size(), ") must be greater or equal to the number of dimensions in the tensor (",
                 t.dim(), ")");
  Shape shape = requested;
  const std::size_t lead = shape.size() - t.shape().size();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != -1) continue;
    MT_CHECK_SHAPE(d >= lead, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                   "dimension ", d);
    shape[d] = t.shape()[d - lead];
  }
  for (int64_t s : shape) MT_CHECK_SHAPE(s >= 0, "expand: invalid size ", s, " in ", shape_str(requested));
  return Tensor(t.storage(), shape, broadcast_strides(t, shape), t.offset(), t.dtype());
}

void check_same_device(const Tensor& a, const Tensor& b) {
  MT_CHECK_VALUE(a.device() == b.device(),
                 "Expected all tensors to be on the same device, but found at least two devices, ",
                 a.device().str(), " and ", b.device().str(), "!");
}

}  // namespace mt
