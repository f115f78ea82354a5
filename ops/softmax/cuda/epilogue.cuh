// The arithmetic every tier shares. A tier only decides where a row lives and how it is reduced;
// what is reduced and what is written come from here, so softmax and log_softmax (forward and
// backward) differ by one template bool in every tier.
//   forward:   softmax y = exp(x - m) / s          log_softmax y = x - m - log(s)
//   backward:  softmax dx = y * (dy - sum(y * dy)) log_softmax dx = dy - exp(y) * sum(dy)
#pragma once

#include "ops/common/reduce.cuh"

namespace mt {

// From the row's max m and sum s of exp(x - m): the constant the forward epilogue needs. A row
// of only -inf is NaN (torch: exp(-inf - -inf)). Fast (16-bit outputs, and float32 lanes):
// softmax's 1 / s from the hardware reciprocal (rcp_approx: 1 ulp of float, ~1.2e-7 relative,
// against 16-bit outputs' rounding of 2^-11 or coarser and float32's budget of 1e-6; s >= 1
// here, the max's own exp, so never a denormal).
template <bool Log, bool Fast = false, typename A>
__device__ __forceinline__ A fwd_coef(A s, A m) {
  if (m == A(-INFINITY)) return A(NAN);
  if constexpr (Fast && !Log && sizeof(A) == 4)
    return rcp_approx(s);
  else
    return Log ? acc_log(s) : A(1) / s;
}

// Fast: the output is 16-bit (see elem_exp).
template <bool Log, bool Fast = false, typename A>
__device__ __forceinline__ A fwd_out(A x, A m, A coef) {
  return Log ? x - m - coef : elem_exp<Fast>(x - m) * coef;
}

// The forward's output for the many x of one shift m and constant c (fwd_out's m and coef). For
// 16-bit outputs (Fast) softmax takes the exp and the product in one hardware ex2 of (x - m)
// log2(e) + log2(c): a subtract, an fma and the ex2 an element, not a subtract, two multiplies and
// the ex2 (kernels that take exp again in their output pass are issue-bound: ncu on an H200,
// [8192, 50304] float16, issue slots 83% busy, QuACK's kernel 47%). The fma rounds once, so an
// output of 2^-126 or more is off by at most 2^-18 (ln 2 x half an ulp of |t| < 128); smaller
// ones flush to 0, as ex2.approx.ftz's own results do. c = 0 gives 0 (log2 0 = -inf), c = NaN NaN,
// as the product does.
// Kernels that hold many shifts at once (the column tiers: one a column) keep (m, c) themselves:
// constant() is c from the sum s and the max m (the fused c is -log2(s) from the hardware lg2,
// absolute error under 2^-22: no division and no accurate log2 for each of a thread's columns),
// apply() the output of x.
template <bool Log, bool Fast, typename A>
struct FwdOut {
  static constexpr bool kFused = Fast && !Log && sizeof(A) == 4;
  A m, c;
  __device__ __forceinline__ FwdOut(A shift, A coef) : m(shift), c(kFused ? log2f(coef) : coef) {}
  __device__ __forceinline__ A operator()(A x) const { return apply(x, m, c); }
  static __device__ __forceinline__ A constant(A s, A m) {
    if constexpr (kFused)
      return m == A(-INFINITY) ? A(NAN) : -lg2_approx(s);
    else
      return fwd_coef<Log>(s, m);
  }
  static __device__ __forceinline__ A apply(A x, A m, A c) {
    if constexpr (kFused)
      return ex2_approx(fmaf(x - m, kLog2e, c));
    else
      return fwd_out<Log, Fast>(x, m, c);
  }
};

// fn(out) with out(x) = FwdOut(shift, coef)(x); for 16-bit softmax outputs (kFused) while
// |shift| <= 64, the shift folded into the fma's constant: ex2(fma(x, log2(e), c - shift
// log2(e))), a subtract an element fewer. The rounding of that constant and of log2(e) moves the
// argument by at most (|x| log2(e) + |c - shift log2(e)|) 2^-24. An output a 16-bit type holds
// has an argument over -25, and since x <= shift (the shift is the max of x's shift group) and
// c <= 0 (coef <= 1), c is over -25 too and |x| under 100: ~2e-5 relative at most, against the
// output's rounding of 2^-11 or coarser; smaller outputs are 0 either way. The test is per call,
// not per element: fn is compiled for both.
template <bool Log, bool Fast, typename A, typename Fn>
__device__ __forceinline__ void with_fwd_out(A shift, A coef, Fn&& fn) {
  using Out = FwdOut<Log, Fast, A>;
  if constexpr (Out::kFused) {
    if (fabsf(shift) <= kFusedShiftMax) {
      struct Folded {
        float c;
        __device__ __forceinline__ float operator()(float x) const {
          return ex2_approx(fmaf(x, kLog2e, c));
        }
      };
      fn(Folded{Out(shift, coef).c - shift * kLog2e});
      return;
    }
  }
  fn(Out(shift, coef));
}

// Summand of the backward reduction.
template <bool Log, typename A>
__device__ __forceinline__ A bwd_term(A y, A dy) {
  return Log ? dy : y * dy;
}

template <bool Log, bool Fast = false, typename A>
__device__ __forceinline__ A bwd_out(A y, A dy, A sum) {
  // log_softmax's y is <= 0 when it came from the forward, but whatever y the backward is given
  // must come out right: float64's Fast exp (exp_nonpositive) is not for it.
  static_assert(!(Fast && sizeof(A) == 8), "a backward's float64 exp must be exp()");
  return Log ? dy - elem_exp<Fast>(y) * sum : y * (dy - sum);
}

}  // namespace mt
