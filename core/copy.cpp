#include "core/copy.h"
#include "core/convert.h"

#include <algorithm>
#include "core/cuda_runtime.h"
#include "core/errors.h"
#include "core/parallel.h"
#include "core/strided_layout.h"

namespace mt {

StridedLayout coalesce_layout(const Shape& shape, const Shape& strides) {
  StridedLayout layout;
  int64_t sizes[64], steps[64];
  int n = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (n > 0 && steps[n - 1] == strides[d] * shape[d]) {  // previous dim steps over this one whole
      sizes[n - 1] *= shape[d];
      steps[n - 1] = strides[d];
      continue;
    }
    MT_CHECK_VALUE(n < 64, "tensors of more than 64 dimensions are not supported");
    sizes[n] = shape[d];
    steps[n] = strides[d];
    ++n;
  }
  MT_CHECK_VALUE(n <= kMaxStridedDims, "cannot copy a view with more than ", kMaxStridedDims,
                 " non-mergeable dimensions; call .contiguous() on a simpler view first");
  layout.ndim = n;
  std::copy(sizes, sizes + n, layout.sizes);
  std::copy(steps, steps + n, layout.strides);
  return layout;
}

namespace {

template <typename To, typename From>
void copy_cast_cpu_typed(const Tensor& src, const Tensor& dst) {
  const From* in = static_cast<const From*>(src.data_ptr());
  To* out = dst.data<To>();
  const int64_t n = src.numel();
  if (src.is_contiguous()) {
    parallel_for(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = convert_element<To>(in[i]);
    });
    return;
  }
  const StridedLayout layout = coalesce_layout(src.shape(), src.strides());
  const int last = layout.ndim - 1;
  const int64_t row = layout.sizes[last], step = layout.strides[last];
  const int64_t rows = n / row;
  parallel_for(rows, row, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset = 0, rest = r;
      for (int d = last - 1; d >= 0; --d) {
        offset += (rest % layout.sizes[d]) * layout.strides[d];
        rest /= layout.sizes[d];
      }
      To* o = out + r * row;
      for (int64_t i = 0; i < row; ++i) o[i] = convert_element<To>(in[offset + i * step]);
    }
  });
}

}  // namespace

void copy_cast_cpu(const Tensor& src, const Tensor& dst) {
  if (src.numel() == 0) return;
  MT_DISPATCH_ALL_TYPES(dst.dtype(), "copy", [&] {
    using to_t = scalar_t;
    MT_DISPATCH_ALL_TYPES(src.dtype(), "copy", [&] { copy_cast_cpu_typed<to_t, scalar_t>(src, dst); });
  });
}

#ifndef MINITENSOR_WITH_CUDA
void copy_cast_cuda(const Tensor&, const Tensor&) { cuda::check_device(0); }  // throws: no CUDA
#endif

void copy_to_contiguous(const Tensor& src, const Tensor& dst) {
  MT_ASSERT(dst.is_contiguous() && src.shape() == dst.shape());
  if (src.numel() == 0) return;
  const Device from = src.device(), to = dst.device();
  if (from == to) {
    if (from.is_cpu()) {
      copy_cast_cpu(src, dst);
    } else {
      cuda::DeviceGuard guard(from.index);
      copy_cast_cuda(src, dst);
    }
    return;
  }
  // Across devices: make a dense buffer of dst's dtype on the source side, then one memcpy.
  Tensor staged = src.to(dst.dtype()).contiguous();
  const std::size_t nbytes = static_cast<std::size_t>(dst.numel() * dst.itemsize());
  if (from.is_cpu()) {
    cuda::copy(dst.data_ptr(), staged.data_ptr(), nbytes, cuda::CopyKind::HostToDevice, to.index);
  } else if (to.is_cpu()) {
    cuda::copy(dst.data_ptr(), staged.data_ptr(), nbytes, cuda::CopyKind::DeviceToHost, from.index);
  } else {
    // Between two GPUs, through the host: memory from a stream-ordered pool is visible to other
    // devices only after access is granted, and the GPUs may have no peer access at all.
    const Tensor host = staged.to(Device());
    cuda::copy(dst.data_ptr(), host.data_ptr(), nbytes, cuda::CopyKind::HostToDevice, to.index);
  }
}

}  // namespace mt
