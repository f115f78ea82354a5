// CPU reductions. float32 and the 16-bit floats accumulate in double (a long float sum otherwise
// loses digits; 16-bit elements are widened as they are read); rows
// (inner == 1) run one per task, or split into chunks when a few long rows would leave threads
// idle; columns (inner > 1) run a tile of 256 lanes at a time so the inner loop is contiguous.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ops/reduce/reduce_kernels.h"

namespace mt {

namespace {

template <typename T>
using cpu_acc_t = std::conditional_t<std::is_same_v<acc_t<T>, float>, double, T>;

// The result rounded to the element type; 16-bit types through float, as a float32 result
// converted afterwards would be (so the answer does not depend on where the conversion happens).
template <typename T, typename A>
T round_to(A v) {
  if constexpr (std::is_same_v<acc_t<T>, float>) return static_cast<T>(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename T, typename A = cpu_acc_t<T>>
ReduceState<A> reduce_span(ReduceKind kind, const T* row, int64_t begin, int64_t end) {
  if (kind == ReduceKind::Sum) {
    A s = 0;
    for (int64_t r = begin; r < end; ++r) s = wrapping_add(s, static_cast<A>(row[r]));  // int64 wraps, as torch's
    return {s, 0};
  }
  ReduceState<A> st = reduce_identity<A>(kind);
  for (int64_t r = begin; r < end; ++r) st = reduce_combine<A>(kind, st, {static_cast<A>(row[r]), r});
  return st;
}

template <typename T>
void reduce_cpu_typed(ReduceKind kind, const T* in, T* values, int64_t* indices, ReduceShape s,
                      double scale) {
  using A = cpu_acc_t<T>;
  auto finish = [&](int64_t o, ReduceState<A> st) {
    if (values) values[o] = scale == 1.0 ? round_to<T>(st.value) : round_to<T>(st.value * scale);
    if (indices) indices[o] = st.index;
  };
  const int64_t threads = num_threads();
  if (s.inner == 1 && (s.outer >= threads || s.axis < 65536)) {
    parallel_for(s.outer, s.axis, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) finish(o, reduce_span(kind, in + o * s.axis, 0, s.axis));
    });
    return;
  }
  if (s.inner == 1) {  // few long rows: chunks in parallel, then combine in order
    const int64_t chunks = threads * 4, len = (s.axis + chunks - 1) / chunks;
    std::vector<ReduceState<A>> partial(static_cast<std::size_t>(s.outer * chunks));
    parallel_for(s.outer * chunks, len, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / chunks, c = t % chunks;
        partial[t] = reduce_span(kind, in + o * s.axis, std::min(s.axis, c * len), std::min(s.axis, (c + 1) * len));
      }
    });
    for (int64_t o = 0; o < s.outer; ++o) {
      ReduceState<A> st = reduce_identity<A>(kind);
      for (int64_t c = 0; c < chunks; ++c) st = reduce_combine<A>(kind, st, partial[o * chunks + c]);
      finish(o, st);
    }
    return;
  }
  constexpr int64_t kTile = 256;
  const int64_t tiles = (s.inner + kTile - 1) / kTile;
  parallel_for(s.outer * tiles, s.axis * kTile, [&](int64_t begin, int64_t end) {
    ReduceState<A> st[kTile];
    A acc[kTile];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / tiles, i0 = (t % tiles) * kTile, w = std::min(kTile, s.inner - i0);
      const T* base = in + o * s.axis * s.inner + i0;
      if (kind == ReduceKind::Sum) {
        std::fill(acc, acc + w, A(0));
        for (int64_t r = 0; r < s.axis; ++r) {
          const T* row = base + r * s.inner;
          for (int64_t j = 0; j < w; ++j) acc[j] = wrapping_add(acc[j], static_cast<A>(row[j]));
        }
        for (int64_t j = 0; j < w; ++j) finish(o * s.inner + i0 + j, {acc[j], 0});
        continue;
      }
      std::fill(st, st + w, reduce_identity<A>(kind));
      for (int64_t r = 0; r < s.axis; ++r) {
        const T* row = base + r * s.inner;
        for (int64_t j = 0; j < w; ++j) st[j] = reduce_combine<A>(kind, st[j], {static_cast<A>(row[j]), r});
      }
      for (int64_t j = 0; j < w; ++j) finish(o * s.inner + i0 + j, st[j]);
    }
  });
}

}  // namespace

void reduce_cpu(ReduceKind kind, DType dtype, const void* in, void* values, int64_t* indices,
                ReduceShape shape, double scale) {
  MT_DISPATCH_REDUCE_TYPES(dtype, kind == ReduceKind::Sum ? "sum" : "max", [&] {
    reduce_cpu_typed<scalar_t>(kind, static_cast<const scalar_t*>(in), static_cast<scalar_t*>(values),
                               indices, shape, scale);
  });
}

#ifndef MINITENSOR_WITH_CUDA
void reduce_cuda(ReduceKind, DType, const void*, void*, int64_t*, ReduceShape, double) {
  MT_ASSERT(false, "no CUDA");
}
#endif

}  // namespace mt
