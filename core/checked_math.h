// Overflow-checked int64 arithmetic: the one home for every size, stride, byte-count and offset
// product in the library. A wrapped product turns a huge request into a tiny allocation that later
// reads or writes out of bounds; checking here makes it a clear error before anything is
// allocated. The compiler builtins compile to a multiply and a flag test (host and nvcc alike).
#pragma once

#include <cstdint>

namespace mt {

// Each returns false (and leaves *out unspecified) when the exact result does not fit in int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool checked_sub(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }

}  // namespace mt
