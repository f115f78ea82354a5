// Loops over a contiguous span in SIMD packs (ops/common/simd_pack_cpu.h) with a scalar tail:
// element-wise maps and reductions. Term and map functions are generic lambdas called both with
// packs and with scalars, so each kernel formula is written once.
#pragma once

#include <cstdint>
#include <limits>

#include "ops/common/simd_pack_cpu.h"

namespace mt {

// Sums of many floats are carried in double across chunks: each lane adds a few dozen terms in
// float, the running total is double, so a row of a million floats still sums to ~1e-7.
template <typename A> struct WideSumType { using type = A; };
template <> struct WideSumType<float> { using type = double; };
template <typename A> using wide_sum_t = typename WideSumType<A>::type;

template <typename A>
constexpr A kNegInf = -std::numeric_limits<A>::infinity();

template <typename V>
inline auto pack_sum(V v) {
  return pack_fold(v, [](auto a, auto b) { return a + b; });
}

// max over x[0, n) in type A; NaN if any element is NaN; -inf when n == 0.
template <typename A, typename T>
A span_max(const T* x, int64_t n) {
  constexpr int P = kPackSize<A>;
  pack_t<A> m0 = pack_broadcast(kNegInf<A>), m1 = m0;  // two chains hide the compare latency
  int64_t i = 0;
  for (; i + 2 * P <= n; i += 2 * P) {
    m0 = max_propagate_nan(m0, pack_load<A>(x + i));
    m1 = max_propagate_nan(m1, pack_load<A>(x + i + P));
  }
  A m = pack_fold(max_propagate_nan(m0, m1), [](auto a, auto b) { return max_propagate_nan(a, b); });
  for (; i < n; ++i) m = max_propagate_nan(m, static_cast<A>(x[i]));
  return m;
}

// sum over i in [0, n) of term(src[i]...), where each src is a const T* and term maps values of
// type A (or packs of them) to a term. Returned in the wide sum type.
template <typename A, typename Term, typename... Srcs>
wide_sum_t<A> span_sum_of(int64_t n, const Term& term, const Srcs*... srcs) {
  constexpr int P = kPackSize<A>;
  constexpr int64_t kChunk = 16 * P;  // each lane adds 16 terms before spilling to the wide sum
  wide_sum_t<A> total = 0;
  int64_t i = 0;
  while (i + 2 * P <= n) {
    pack_t<A> s0 = {}, s1 = {};
    const int64_t chunk_end = i + kChunk < n ? i + kChunk : n;
    for (; i + 2 * P <= chunk_end; i += 2 * P) {
      s0 += term(pack_load<A>(srcs + i)...);
      s1 += term(pack_load<A>(srcs + i + P)...);
    }
    total += pack_sum(s0 + s1);
  }
  for (; i < n; ++i) total += term(static_cast<A>(srcs[i])...);
  return total;
}

// out[i] = f(src[i]...) for i in [0, n). out may alias a source (same index only).
template <typename A, typename T, typename F, typename... Srcs>
void span_map(int64_t n, T* out, const F& f, const Srcs*... srcs) {
  constexpr int P = kPackSize<A>;
  int64_t i = 0;
  for (; i + P <= n; i += P) pack_store<T, A>(out + i, f(pack_load<A>(srcs + i)...));
  for (; i < n; ++i) out[i] = T(f(static_cast<A>(srcs[i])...));
}

// y[i] = exp(x[i] - m) and returns their sum: the fused second pass of the safe softmax.
template <typename A, typename T>
wide_sum_t<A> span_exp_store_sum(const T* x, T* y, int64_t n, A m) {
  constexpr int P = kPackSize<A>;
  constexpr int64_t kChunk = 16 * P;
  wide_sum_t<A> total = 0;
  int64_t i = 0;
  while (i + P <= n) {
    pack_t<A> s = {};
    const int64_t chunk_end = i + kChunk < n ? i + kChunk : n;
    for (; i + P <= chunk_end; i += P) {
      const pack_t<A> e = vec_exp(pack_load<A>(x + i) - m);
      pack_store<T, A>(y + i, e);
      s += e;
    }
    total += pack_sum(s);
  }
  for (; i < n; ++i) {
    const A e = vec_exp(static_cast<A>(x[i]) - m);
    y[i] = T(e);
    total += e;
  }
  return total;
}

}  // namespace mt
