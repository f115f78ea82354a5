// The arithmetic every tier shares. A tier only decides where a row lives and how it is reduced;
// what is reduced and what is written come from here, so softmax and log_softmax (forward and
// backward) differ by one template bool in every tier.
//   forward:   softmax y = exp(x - m) / s          log_softmax y = x - m - log(s)
//   backward:  softmax dx = y * (dy - sum(y * dy)) log_softmax dx = dy - exp(y) * sum(dy)
#pragma once

#include "ops/common/reduce.cuh"

namespace mt {

// From the row's max m and sum s of exp(x - m): the constant the forward epilogue needs. A row
// of only -inf is NaN (torch: exp(-inf - -inf)).
template <bool Log, typename A>
__device__ __forceinline__ A fwd_coef(A s, A m) {
  if (m == A(-INFINITY)) return A(NAN);
  return Log ? acc_log(s) : A(1) / s;
}

// Fast: the output is 16-bit (see elem_exp).
template <bool Log, bool Fast = false, typename A>
__device__ __forceinline__ A fwd_out(A x, A m, A coef) {
  return Log ? x - m - coef : elem_exp<Fast>(x - m) * coef;
}

// Summand of the backward reduction.
template <bool Log, typename A>
__device__ __forceinline__ A bwd_term(A y, A dy) {
  return Log ? dy : y * dy;
}

template <bool Log, bool Fast = false, typename A>
__device__ __forceinline__ A bwd_out(A y, A dy, A sum) {
  return Log ? dy - elem_exp<Fast>(y) * sum : y * (dy - sum);
}

}  // namespace mt
