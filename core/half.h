// 16-bit floating types stored as raw bits. Arithmetic always happens in float: the types only
// convert. On the GPU the conversions use the hardware instructions; on the CPU, bit arithmetic
// with round-to-nearest-even (what numpy and torch do).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/host_device.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace mt {

namespace detail {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): scale into the integer range and let the FPU round to even.
    const float scaled = bits_float(abs) * 16777216.0f;  // 2^24: one unit = smallest subnormal
    const uint32_t mant = static_cast<uint32_t>(__builtin_nearbyintf(scaled));
    return static_cast<uint16_t>(sign | mant);
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even, rebias the exponent (127 -> 15).
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

}  // namespace detail

// The two formats differ only in their conversions, chosen by tag: on the GPU the hardware
// instructions, on the CPU the bit arithmetic above.
struct HalfFormat {};
struct BFloat16Format {};
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint16_t to_bits(float f, HalfFormat) { return __half_as_ushort(__float2half_rn(f)); }
__device__ __forceinline__ float from_bits(uint16_t b, HalfFormat) { return __half2float(__ushort_as_half(b)); }
__device__ __forceinline__ uint16_t to_bits(float f, BFloat16Format) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
__device__ __forceinline__ float from_bits(uint16_t b, BFloat16Format) { return __bfloat162float(__ushort_as_bfloat16(b)); }
#else
inline uint16_t to_bits(float f, HalfFormat) { return detail::float_to_half_bits(f); }
inline float from_bits(uint16_t b, HalfFormat) { return detail::half_bits_to_float(b); }
inline uint16_t to_bits(float f, BFloat16Format) { return detail::float_to_bfloat16_bits(f); }
inline float from_bits(uint16_t b, BFloat16Format) { return detail::bfloat16_bits_to_float(b); }
#endif

// A 16-bit float: raw bits that convert to and from float, nothing else.
template <typename Format>
struct alignas(2) Float16Bits {
  uint16_t bits;
  Float16Bits() = default;
  MT_HOST_DEVICE explicit Float16Bits(float f) : bits(to_bits(f, Format{})) {}
  MT_HOST_DEVICE operator float() const { return from_bits(bits, Format{}); }
};
using Half = Float16Bits<HalfFormat>;
using BFloat16 = Float16Bits<BFloat16Format>;

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit types must be 2 bytes");

}  // namespace mt
