// Same-device strided gather with dtype conversion: thread i computes where output element i
// comes from in the source view and converts it.
#include "core/copy.h"
#include "core/convert.h"
#include "core/cuda_check.h"
#include "core/strided_layout.h"

namespace mt {

namespace {

template <typename To, typename From>
__global__ void copy_cast_kernel(const From* __restrict__ in, To* __restrict__ out, int64_t n,
                                 StridedLayout layout) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t offset = 0, rest = i;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      offset += (rest % layout.sizes[d]) * layout.strides[d];
      rest /= layout.sizes[d];
    }
    out[i] = convert_element<To>(in[offset]);
  }
}

}  // namespace

void copy_cast_cuda(const Tensor& src, const Tensor& dst) {
  const int64_t n = src.numel();
  if (n == 0) return;
  const StridedLayout layout = coalesce_layout(src.shape(), src.strides());
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65536);
  MT_DISPATCH_ALL_TYPES(dst.dtype(), "copy", [&] {
    using to_t = scalar_t;
    MT_DISPATCH_ALL_TYPES(src.dtype(), "copy", [&] {
      copy_cast_kernel<to_t, scalar_t><<<static_cast<unsigned>(blocks), kThreads>>>(
          static_cast<const scalar_t*>(src.data_ptr()), dst.data<to_t>(), n, layout);
      MT_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace mt
