// Creation and copy helpers the layer graphs need, built from the elementwise and reduction ops
// (so they run on every device without kernels of their own).
#pragma once

#include <vector>

#include "core/tensor.h"

namespace mt {

// Values start, start + step, ... < end (> end for a negative step), like torch.arange.
// Computed in double (torch does the same for float arguments).
Tensor arange(double start, double end, double step, DType dtype, Device device);
// All-integer arguments: computed in int64, exact over the whole int64 range (no trip through
// double, which loses integers above 2^53), then converted to `dtype`.
Tensor arange_int(int64_t start, int64_t end, int64_t step, DType dtype, Device device);
// [..., num_classes] int64 with a 1 at each label; num_classes < 0 means max(labels) + 1.
// Rejects labels below 0 or at/above num_classes (RuntimeError, as torch); -1 infers max + 1.
Tensor one_hot(const Tensor& labels, int64_t num_classes);
// Concatenation along `dim`; all tensors of one dtype and device, equal sizes elsewhere.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);

}  // namespace mt
