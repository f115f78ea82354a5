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

template <typename V, typename VI>
inline V exp_f32(V x) {
  V xc = x < -104.0f ? -104.0f : x;  // exp(-104) < half the smallest subnormal: rounds to 0
  xc = xc > 89.0f ? 89.0f : xc;      // exp(89) > FLT_MAX: becomes inf below

  const float shift = 12582912.0f;  // 1.5 * 2^23
  // n from a NaN-free copy: from NaN bits it would be garbage that the shifts below are undefined
  // for (the NaN still reaches the result through r). vscalef takes a NaN n as it comes.
  V xn = xc;
  if constexpr (!kHasScalef<V>) xn = xc == xc ? xc : 0.0f;
  const V t = xn * 1.44269504088896341f + shift;
  const V nf = t - shift;
  V r = xc - nf * 0.693359375f;        // ln2_hi: 9 significant bits
  r = r - nf * -2.12194440e-4f;        // ln2_lo = ln2 - ln2_hi

  // exp(r) = 1 + r + r^2 * P(r): the classic Cephes expf minimax polynomial for |r| <= ln2/2.
  V p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const V er = (p * r) * r + r + 1.0f;
  if constexpr (kHasScalef<V>) return scalef(er, nf);

  const VI n = bit_cast<VI>(t) - bit_cast<int32_t>(shift);
  const VI n1 = n >> 1;  // n in [-151, 129]: each half is a normal power of two
  const VI n2 = n - n1;
  const V s1 = bit_cast<V>((n1 + 127) << 23);
  const V s2 = bit_cast<V>((n2 + 127) << 23);
  return (er * s1) * s2;
}

template <typename V, typename VI>
inline V exp_f64(V x) {
  V xc = x < -746.0 ? -746.0 : x;  // rounds to 0
  xc = xc > 710.0 ? 710.0 : xc;    // overflows to inf

  const double shift = 6755399441055744.0;  // 1.5 * 2^52
  V xn = xc;  // see exp_f32
  if constexpr (!kHasScalef<V>) xn = xc == xc ? xc : 0.0;
  const V t = xn * 1.4426950408889634074 + shift;
  const V nf = t - shift;
  V r = xc - nf * 6.93147180369123816490e-01;  // fdlibm's ln2_hi: 32 significant bits
  r = r - nf * 1.90821492927058770002e-10;     // ln2_lo

  // Taylor series to degree 12: on |r| <= ln2/2 the truncation error r^13/13! is < 2e-17.
  V p = r * (1.0 / 479001600.0) + (1.0 / 39916800.0);  // 1/12!, 1/11!
  p = p * r + (1.0 / 3628800.0);
  p = p * r + (1.0 / 362880.0);
  p = p * r + (1.0 / 40320.0);
  p = p * r + (1.0 / 5040.0);
  p = p * r + (1.0 / 720.0);
  p = p * r + (1.0 / 120.0);
  p = p * r + (1.0 / 24.0);
  p = p * r + (1.0 / 6.0);
  p = p * r + 0.5;
  const V er = (p * r) * r + r + 1.0;
  if constexpr (kHasScalef<V>) return scalef(er, nf);

  const VI n = bit_cast<VI>(t) - bit_cast<int64_t>(shift);
  const VI n1 = n >> 1;  // n in [-1077, 1025]: each half is a normal power of two
  const VI n2 = n - n1;
  const V s1 = bit_cast<V>((n1 + 1023) << 52);
  const V s2 = bit_cast<V>((n2 + 1023) << 52);
  return (er * s1) * s2;
}

}  // namespace vec_exp_detail

inline float vec_exp(float x) { return vec_exp_detail::exp_f32<float, int32_t>(x); }
inline double vec_exp(double x) { return vec_exp_detail::exp_f64<double, int64_t>(x); }

}  // namespace mt
