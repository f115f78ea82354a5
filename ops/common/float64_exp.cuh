// exp(d) in float64 for softmax's shifted values (d = x - max <= 0), in about half the
// instructions of the CUDA math library's exp(). The float64 softmax kernels are issue-bound
// (ncu on an H200, [4096, 32000]: issue slots 79% busy, the FP64 pipe 37%), and in them exp()
// cost ~40 instructions an element: its 13 polynomial and reduction constants are 64-bit
// immediates that the register-starved kernels rebuild with two moves each for every element,
// and a branch (BSSY / BSYNC) guards its overflow and underflow ranges. Here the constants sit in
// constant memory, loaded once into uniform registers that every DFMA reads, and the range is
// clamped by selects: 24 instructions an element (with the subtract of the max), no branch.
//
// d = n ln2 + r with n = round(d / ln2), |r| <= ln2 / 2; exp(r) by a polynomial of degree 11,
// minimax in relative error on that interval (3.1e-18; tools/float64_exp_minimax.py derives it),
// times 2^n. Taylor's series needs degree 13 for the same accuracy (to r^12 it was up to 2.3 ulp
// off; a minimax of degree 10 is 2.9): two fmas an exp fewer. Within 0.88 ulp of exp(d) for -707
// <= d <= 0 (42,000 arguments against a 200-bit exp, the fmas emulated exactly; the degree-13
// Taylor series 0.80); below -707 (and -inf) it gives 0 where exp() gives values under 1e-307;
// NaN stays NaN. Arguments past 700 are out of its range: a log_softmax backward's y, which may be
// anything, takes exp().
//
// The minimax polynomial (two DFMA an element fewer) against the Taylor series, H200 kernel times,
// two rounds: [8192, 50304] 1,919 -> 1,858 us, [2048, 151936] 1,838 -> 1,797, [4096, 32000] 545.6 ->
// 538.8, [2048, 32768] 277.1 -> 274.5; the float64 forward's other tiers within 1%.
//
// The tiers that measured faster with it ask for it (elem_exp's Fast for float64); the rest keep
// exp(). H200 kernel times, two rounds, a build with every tier on it against exp(): tier 3a's
// clusters of rows [2048, 32768] 326 -> 305 us, [4096, 32000] 637 -> 594, [8192, 50304] 2,433 ->
// 2,054; tier 3c's split row [2048, 151936] 2,178 -> 2,052; tier 4a [8, 150, 128, 128] 86.4 ->
// 82.8, [64, 128, 56, 56] 109.1 -> 102.5. It lost in tier 2's block a row ([1024, 4096] 20.6 ->
// 23.6, with fewer instructions and fewer registers, 42 -> 34: why is not known), tier 1's lanes
// ([524288, 128] 257 -> 263) and tier 4b ([32, 1000, 14, 14] 36.3 -> 38.0; [4096, 4096] over dim 0
// tied). Not measured: tiers 2b, 3b, 4c and 4. Tier 3d's grid takes it in pass 1 only (softmax [1,
// 16777216] 117.2 -> 114.0 us, [64, 152064] 69.3 -> 67.5, log_softmax 115.4 -> 106.0 and 67.3 ->
// 61.7); softmax's output pass on it as well lost (117.2 -> 119.9).
// The row tiers' (max, sum) folds and rescale (tiers 1-3a) take it in every float64 forward: three
// exps a thread a row, each exp()'s ~45 instructions and a branch (H200, two rounds: [2048, 32768]
// 289.2 -> 285.9 us, [4096, 32000] 561.8 -> 554.6, [8192, 50304] 1,944 -> 1,922, [32, 64, 512,
// 512] 2,060 -> 2,035; the rest within noise). These kernels are bound by the instructions they
// issue, not by the polynomial's chain of dependent fmas: an Estrin tail (depth 13 -> 8, three
// more multiplies, as accurate) made them 4-12% slower.
#pragma once

namespace mt {
namespace float64_exp_detail {

// log2(e); 1.5 * 2^52, whose addition rounds to an integer held in the low word; ln2 in two
// parts, the first of 42 bits (n times it is exact for |n| < 2^11); then the polynomial's
// coefficients of r^11 down to r^0 (Horner's order; near 1/k!).
static __constant__ double kConstants[16] = {
    0x1.71547652b82fep+0,  0x1.8p+52,            0x1.62e42fefa3800p-1, 0x1.ef35793c76730p-45,
    0x1.ad661c903688bp-26, 0x1.28b311c7eb84fp-22, 0x1.71df4520aaeebp-19, 0x1.a01992d0fe736p-16,
    0x1.a01a0110572b2p-13, 0x1.6c16c1878111cp-10, 0x1.1111111130dd6p-7,  0x1.555555554f370p-5,
    0x1.55555555554a2p-3,  0x1.0000000000010p-1, 0x1.0p+0,              0x1.0p+0,
};

}  // namespace float64_exp_detail

__device__ __forceinline__ double exp_nonpositive(double d) {
  const double* c = float64_exp_detail::kConstants;
  const bool under = d < -707.0;  // also -inf; NaN is not
  const double dc = under ? -707.0 : d;
  const double t = fma(dc, c[0], c[1]);
  const int n = __double2loint(t);
  const double nd = t - c[1];
  double r = fma(nd, -c[2], dc);
  r = fma(nd, -c[3], r);
  double p = c[4];
#pragma unroll
  for (int k = 5; k < 16; ++k) p = fma(p, r, c[k]);
  // 2^n as a double of its own (n + 1023 is a normal exponent for -1022 <= n <= 1023): a product,
  // not an add to p's exponent bits, so that a NaN p stays NaN. Below the range the factor is 0
  // (p is finite there): one select of its high word, not two of the result's.
  return p * __hiloint2double(under ? 0 : (n + 1023) << 20, 0);
}

}  // namespace mt
