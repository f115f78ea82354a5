// Device-level entry points behind ops/matmul/matmul.cpp: C[b] = A[b] @ B[b] for b < batch, with
// A and B read through arbitrary (batch, row, col) strides (batch stride 0 = broadcast, a
// transposed matrix needs no copy) and C a fresh contiguous [batch, m, n].
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace mt {

struct MatmulArgs {
  int64_t batch, m, n, k;
  const void* a;
  int64_t a_bs, a_rs, a_cs;
  const void* b;
  int64_t b_bs, b_rs, b_cs;
  void* c;
};

// dtype: Float32 or Float64.
void matmul_cpu(DType dtype, const MatmulArgs& args);
void matmul_cuda(DType dtype, const MatmulArgs& args);

}  // namespace mt
