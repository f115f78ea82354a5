// Device-level entry points behind ops/reduce/reduce.cpp, and the reduction step both the CPU and
// the CUDA kernels use. Every reduction sees a contiguous input as (outer, axis, inner) and
// reduces the middle: inner == 1 is "rows", inner > 1 is reduced in place along strided columns
// (threads across inner, coalesced), never by transposing first.
#pragma once

#include <cstdint>
#include <limits>

#include "core/dtype.h"
#include "ops/elementwise/elementwise_args.h"  // MT_HD

namespace mt {

enum class ReduceKind : uint8_t { Sum, Max };  // mean = sum with an epilogue scale

struct ReduceShape {
  int64_t outer, axis, inner;
};

// Running state: the value so far and, for max, the index along the axis where it was seen.
template <typename A>
struct ReduceState {
  A value;
  int64_t index;
};

template <typename A>
MT_HD ReduceState<A> reduce_identity(ReduceKind kind) {
  if (kind == ReduceKind::Sum) return {A(0), 0};
  // Any real element beats the identity: it is >= lowest and has a smaller index.
  if constexpr (std::numeric_limits<A>::has_infinity)
    return {-std::numeric_limits<A>::infinity(), std::numeric_limits<int64_t>::max()};
  else
    return {std::numeric_limits<A>::lowest(), std::numeric_limits<int64_t>::max()};
}

// Max propagates NaN (the first NaN wins) and breaks ties by the smaller index, so the result
// does not depend on the order partial states are combined in.
template <typename A>
MT_HD ReduceState<A> reduce_combine(ReduceKind kind, ReduceState<A> a, ReduceState<A> b) {
  if (kind == ReduceKind::Sum) return {wrapping_add(a.value, b.value), 0};  // int64 sums wrap, as torch's
  const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
  bool take_b;
  if (a_nan) take_b = b_nan && b.index < a.index;
  else take_b = b_nan || b.value > a.value || (b.value == a.value && b.index < a.index);
  return take_b ? b : a;
}

// `in` and `values` hold `dtype` (float32, float64, int64, float16 or bfloat16): 16-bit inputs
// are widened as they are loaded and the result rounded as it is stored, one pass over memory.
// `values` and `indices` may each be null (amax needs no indices, argmax no values). `scale`
// multiplies sums (mean); 1 otherwise.
void reduce_cpu(ReduceKind kind, DType dtype, const void* in, void* values, int64_t* indices,
                ReduceShape shape, double scale);
void reduce_cuda(ReduceKind kind, DType dtype, const void* in, void* values, int64_t* indices,
                 ReduceShape shape, double scale);

#define MT_DISPATCH_REDUCE_TYPES(DTYPE, OP_NAME, ...)                        \
  MT_DISPATCH_SWITCH(DTYPE, OP_NAME, MT_DISPATCH_FLOATING_CASES(__VA_ARGS__) \
                     MT_DISPATCH_CASE(::mt::DType::Int64, int64_t, __VA_ARGS__))

}  // namespace mt
