// Division by a number fixed at launch, without a divide on the device. An unsigned division
// there is a subroutine of ~20 instructions around a reciprocal on the special-function unit;
// at the start of the column tiers' blocks those chains waited behind other blocks' exps for
// that unit (ncu on an H200: 6-20% of a block's warp samples before its first load). Here the
// host finds a multiplier and a shift once (Granlund and Montgomery's round-up method), and the
// kernel takes the high word of one multiply, an add and a shift. tests/test_fast_divide.py checks
// it on the host against the division it replaces.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace mt {

// n / d and n % d for every n < 2^31, 1 <= d < 2^31.
struct FastDivisor {
  uint32_t divisor = 1, multiplier = 1, shift = 0;

  FastDivisor() = default;
  explicit FastDivisor(uint32_t d) : divisor(d) {
    while ((uint64_t(1) << shift) < d) ++shift;  // ceil(log2(d))
    // m = floor(2^32 (2^shift - d) / d) + 1, at most 2^32 - 2^31 + 1 for d >= 2 (1 for d = 1).
    multiplier = uint32_t((((uint64_t(1) << shift) - d) << 32) / d + 1);
  }

  // (n + high word of n * m) / 2^shift: n + that high word stays under 2^32 for n < 2^31.
  MT_HOST_DEVICE uint32_t quotient(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = uint32_t((uint64_t(n) * multiplier) >> 32);
#endif
    return (n + high) >> shift;
  }
  MT_HOST_DEVICE uint32_t remainder(uint32_t n, uint32_t quotient) const {
    return n - quotient * divisor;
  }
};

}  // namespace mt
