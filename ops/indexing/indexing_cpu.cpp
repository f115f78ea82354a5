// CPU gather / scatter along one dim. Rows of `inner` elements move at a time; index_put_ runs
// each (outer, inner) column's indices in order, so the last of repeated indices wins (copy) or
// they all add up (accumulate), the same on every run.
#include <cstring>

#include "core/parallel.h"
#include "ops/elementwise/elementwise_kernels.h"  // MT_DISPATCH_COMPUTE_TYPES
#include "ops/indexing/indexing.h"

namespace mt {

void index_select_cpu(int64_t element_size, const IndexArgs& a, const void* x, void* out) {
  const auto* in = static_cast<const char*>(x);
  auto* o = static_cast<char*>(out);
  const int64_t row = a.inner * element_size;
  parallel_for(a.outer * a.count, a.inner, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t outer = t / a.count, k = t % a.count;
      std::memcpy(o + t * row, in + (outer * a.size + a.index[k]) * row, static_cast<std::size_t>(row));
    }
  });
}

namespace {

template <typename T>
void add_rows(const IndexArgs& a, T* self, const T* src) {
  parallel_for(a.outer, a.count * a.inner, [&](int64_t begin, int64_t end) {
    for (int64_t outer = begin; outer < end; ++outer)
      for (int64_t k = 0; k < a.count; ++k) {
        T* dst = self + (outer * a.size + a.index[k]) * a.inner;
        const T* from = src + (outer * a.count + k) * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) dst[i] += from[i];
      }
  });
}

}  // namespace

void index_put_cpu(int64_t element_size, DType compute, bool accumulate, const IndexArgs& a, void* self,
                   const void* src) {
  if (accumulate) {
    MT_DISPATCH_COMPUTE_TYPES(compute, "index_put_", [&] {
      add_rows(a, static_cast<scalar_t*>(self), static_cast<const scalar_t*>(src));
    });
    return;
  }
  auto* dst = static_cast<char*>(self);
  const auto* from = static_cast<const char*>(src);
  const int64_t row = a.inner * element_size;
  parallel_for(a.outer, a.count * a.inner, [&](int64_t begin, int64_t end) {
    for (int64_t outer = begin; outer < end; ++outer)
      for (int64_t k = 0; k < a.count; ++k)
        std::memcpy(dst + (outer * a.size + a.index[k]) * row, from + (outer * a.count + k) * row,
                    static_cast<std::size_t>(row));
  });
}

#ifndef MINITENSOR_WITH_CUDA
void index_select_cuda(int64_t, const IndexArgs&, const void*, void*) { MT_ASSERT(false, "no CUDA"); }
void index_put_cuda(int64_t, DType, bool, const IndexArgs&, void*, const void*) { MT_ASSERT(false, "no CUDA"); }
#endif

}  // namespace mt
