// Cache-blocked CPU matmul. For a block of B (kKc rows x kNc columns, kept in L2) every group of
// 4 rows of C (kept in L1) accumulates a0*B[k,:] + ... with the j loop innermost and contiguous,
// which the compiler vectorizes; 4 rows share each load of B. Threads split the rows of C.
#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "core/parallel.h"
#include "ops/matmul/matmul_kernels.h"

namespace mt {

namespace {

constexpr int64_t kKc = 256, kNc = 512, kRows = 4;

// Rows [r0, r0 + rows) of C, columns [j0, j1), for k in [k0, k1). B rows are contiguous (ldb).
template <typename T>
void block_update(const MatmulArgs& p, const T* a, const T* b, int64_t ldb, T* c, int64_t r0, int64_t rows,
                  int64_t j0, int64_t j1, int64_t k0, int64_t k1) {
  T* __restrict__ c_row[kRows];
  const T* a_row[kRows];
  for (int64_t r = 0; r < kRows; ++r) {
    const int64_t rr = r0 + std::min(r, rows - 1);  // a short group repeats its last row harmlessly...
    c_row[r] = c + rr * p.n;
    a_row[r] = a + rr * p.a_rs;
  }
  if (rows == kRows) {
    T* __restrict__ c0 = c_row[0]; T* __restrict__ c1 = c_row[1];
    T* __restrict__ c2 = c_row[2]; T* __restrict__ c3 = c_row[3];
    for (int64_t kk = k0; kk < k1; ++kk) {
      const T x0 = a_row[0][kk * p.a_cs], x1 = a_row[1][kk * p.a_cs];
      const T x2 = a_row[2][kk * p.a_cs], x3 = a_row[3][kk * p.a_cs];
      const T* __restrict__ br = b + kk * ldb;
      for (int64_t j = j0; j < j1; ++j) {
        const T bv = br[j];
        c0[j] += x0 * bv; c1[j] += x1 * bv; c2[j] += x2 * bv; c3[j] += x3 * bv;
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {  // ... but is computed row by row so nothing is added twice
    T* __restrict__ cr = c_row[r];
    for (int64_t kk = k0; kk < k1; ++kk) {
      const T x = a_row[r][kk * p.a_cs];
      const T* __restrict__ br = b + kk * ldb;
      for (int64_t j = j0; j < j1; ++j) cr[j] += x * br[j];
    }
  }
}

template <typename T>
void matmul_cpu_typed(const MatmulArgs& p) {
  T* c = static_cast<T*>(p.c);
  std::fill(c, c + p.batch * p.m * p.n, T(0));
  const int64_t groups = (p.m + kRows - 1) / kRows;  // row groups per batch
  parallel_for(p.batch * groups, kRows * p.n * p.k, [&](int64_t begin, int64_t end) {
    std::vector<T> packed;  // B of one batch with contiguous rows, when it is not already
    int64_t packed_batch = -1;
    for (int64_t g0 = begin; g0 < end;) {
      const int64_t batch = g0 / groups, g1 = std::min(end, (batch + 1) * groups);
      const T* a = static_cast<const T*>(p.a) + batch * p.a_bs;
      const T* b = static_cast<const T*>(p.b) + batch * p.b_bs;
      int64_t ldb = p.b_rs;
      if (p.b_cs != 1 && p.n > 1) {
        if (packed_batch != batch) {
          packed.resize(static_cast<std::size_t>(p.k * p.n));
          for (int64_t kk = 0; kk < p.k; ++kk)
            for (int64_t j = 0; j < p.n; ++j) packed[kk * p.n + j] = b[kk * p.b_rs + j * p.b_cs];
          packed_batch = batch;
        }
        b = packed.data();
        ldb = p.n;
      }
      T* cb = c + batch * p.m * p.n;
      for (int64_t j0 = 0; j0 < p.n; j0 += kNc)
        for (int64_t k0 = 0; k0 < p.k; k0 += kKc)
          for (int64_t g = g0; g < g1; ++g) {
            const int64_t r0 = (g % groups) * kRows;
            block_update<T>(p, a, b, ldb, cb, r0, std::min(kRows, p.m - r0), j0, std::min(p.n, j0 + kNc), k0,
                            std::min(p.k, k0 + kKc));
          }
      g0 = g1;
    }
  });
}

}  // namespace

void matmul_cpu(DType dtype, const MatmulArgs& args) {
  if (dtype == DType::Float32) return matmul_cpu_typed<float>(args);
  MT_ASSERT(dtype == DType::Float64);
  matmul_cpu_typed<double>(args);
}

#ifndef MINITENSOR_WITH_CUDA
void matmul_cuda(DType, const MatmulArgs&) { MT_ASSERT(false, "no CUDA"); }
#endif

}  // namespace mt
