// exp() as straight-line, branch-free arithmetic, so that it runs lane-wise on SIMD vectors.
// (std::exp only vectorizes through glibc's libmvec under -ffast-math, which we cannot use: it
// breaks NaN/inf handling.) The same code serves scalars (float, double) and the GCC/Clang vector
// types of ops/common/simd_pack_cpu.h: V is the value type, VI the same-width integer type.
//
// Method: x = n*ln2 + r with n = round(x / ln2), |r| <= ln2/2 (Cody-Waite: ln2 split into a high
// part with few enough bits that n*ln2_hi is exact, plus a low correction); exp(r) by a
// polynomial; then times 2^n built directly in the exponent bits. 2^n is applied as two factors
// 2^(n/2) * 2^(n - n/2) so that results in the subnormal range and at the overflow edge come out
// right. Rounding to n uses the "add 1.5*2^mantissa_bits" trick: the sum holds n in its low
// bits, which avoids a float->int conversion (undefined on NaN, slow on some targets).
//
// Special values: NaN -> NaN (it flows through the arithmetic: the clamps are selects that are
// false for NaN, not std::min/max), -inf and very negative -> +0, +inf -> +inf.
// Accuracy (checked by tools/cpu_softmax_bench/test): float <= ~1 ulp; double <= ~4e-16 relative.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mt {

namespace vec_exp_detail {

// With AVX-512, a whole 64-byte pack is scaled by 2^n in one instruction (vscalef), which gets
// the subnormal range and the overflow edge right by itself (one rounding): that replaces the
// integer exponent arithmetic and the two-factor product below, about a third of exp's work.
template <typename V>
constexpr bool kHasScalef =
#if defined(__AVX512F__)
    sizeof(V) == 64;
#else
    false;
#endif

template <typename V>
inline V scalef(V er, V nf) {
#if defined(__AVX512F__)
  if constexpr (sizeof(er[0]) == 4)
    return (V)_mm512_scalef_ps((__m512)er, (__m512)nf);
  else
    return (V)_mm512_scalef_pd((__m512d)er, (__m512d)nf);
#else
  return er;  // never instantiated: kHasScalef is false
#endif
}

// Reinterprets bits; works for scalars and vector types (memcpy compiles to nothing).
template <typename To, typename From>
inline To bit_cast(From from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// p(r) = c[0] r^(N-1) + c[1] r^(N-2) + ... + c[N-1] by Horner's scheme, unrolled at compile time
// (a fold over the coefficients, no loop), so it stays straight-line arithmetic.
template <typename V, typename S, size_t N, size_t... I>
inline V horner(V r, const S (&c)[N], std::index_sequence<I...>) {
  V p = r * c[0] + c[1];
  ((p = p * r + c[I + 2]), ...);
  return p;
}

// The constants that differ between float and double; exp_of below is the same code for both.
template <typename S> struct ExpFormat;
template <> struct ExpFormat<float> {
  static constexpr float lo = -104.0f;  // exp(-104) < half the smallest subnormal: rounds to 0
  static constexpr float hi = 89.0f;    // exp(89) > FLT_MAX: becomes inf below
  static constexpr float shift = 12582912.0f;  // 1.5 * 2^23
  static constexpr float log2e = 1.44269504088896341f;
  static constexpr float ln2_hi = 0.693359375f;     // 9 significant bits
  static constexpr float ln2_lo = -2.12194440e-4f;  // ln2 - ln2_hi
  // exp(r) = 1 + r + r^2 * P(r): the classic Cephes expf minimax polynomial for |r| <= ln2/2.
  static constexpr float poly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                                   1.6666665459e-1f, 5.0000001201e-1f};
  static constexpr int bias = 127, mantissa_bits = 23;  // n in [-151, 129] below
  using Bits = int32_t;
};
template <> struct ExpFormat<double> {
  static constexpr double lo = -746.0;  // rounds to 0
  static constexpr double hi = 710.0;   // overflows to inf
  static constexpr double shift = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double log2e = 1.4426950408889634074;
  static constexpr double ln2_hi = 6.93147180369123816490e-01;  // fdlibm's: 32 significant bits
  static constexpr double ln2_lo = 1.90821492927058770002e-10;
  // Taylor series to degree 12: on |r| <= ln2/2 the truncation error r^13/13! is < 2e-17.
  static constexpr double poly[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                                    1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,
                                    1.0 / 24.0,        1.0 / 6.0,        0.5};  // 1/12!, 1/11!, ... 1/2!
  static constexpr int bias = 1023, mantissa_bits = 52;  // n in [-1077, 1025] below
  using Bits = int64_t;
};

// V holds S (float or double) lanes; VI the same-width integers.
template <typename S, typename V, typename VI>
inline V exp_of(V x) {
  using F = ExpFormat<S>;
  V xc = x < F::lo ? F::lo : x;
  xc = xc > F::hi ? F::hi : xc;

  // n from a NaN-free copy: from NaN bits it would be garbage that the shifts below are undefined
  // for (the NaN still reaches the result through r). vscalef takes a NaN n as it comes.
  V xn = xc;
  if constexpr (!kHasScalef<V>) xn = xc == xc ? xc : S(0);
  const V t = xn * F::log2e + F::shift;
  const V nf = t - F::shift;
  V r = xc - nf * F::ln2_hi;
  r = r - nf * F::ln2_lo;

  constexpr size_t kTerms = sizeof(F::poly) / sizeof(S);
  const V p = horner(r, F::poly, std::make_index_sequence<kTerms - 2>{});
  const V er = (p * r) * r + r + S(1);
  if constexpr (kHasScalef<V>) return scalef(er, nf);

  // 2^n as two factors, each a normal power of two, built in the exponent bits.
  const VI n = bit_cast<VI>(t) - bit_cast<typename F::Bits>(F::shift);
  const VI n1 = n >> 1;
  const VI n2 = n - n1;
  const V s1 = bit_cast<V>((n1 + F::bias) << F::mantissa_bits);
  const V s2 = bit_cast<V>((n2 + F::bias) << F::mantissa_bits);
  return (er * s1) * s2;
}

template <typename V, typename VI>
inline V exp_f32(V x) { return exp_of<float, V, VI>(x); }
template <typename V, typename VI>
inline V exp_f64(V x) { return exp_of<double, V, VI>(x); }

}  // namespace vec_exp_detail

inline float vec_exp(float x) { return vec_exp_detail::exp_f32<float, int32_t>(x); }
inline double vec_exp(double x) { return vec_exp_detail::exp_f64<double, int64_t>(x); }

}  // namespace mt
