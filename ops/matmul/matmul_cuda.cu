// Tiled shared-memory matmul. A block computes a BM x BN tile of C; per step of BK it stages the
// A and B tiles in shared memory (k-major, so the inner product loop reads rows of both), and each
// thread accumulates a TM x TN micro-tile in registers. A thread's micro-tile is strided (rows
// ty + i * BM/TM, columns tx + j * BN/TN), so neighbouring threads read neighbouring shared-memory
// words (no bank conflicts) and write neighbouring columns of C (coalesced). Strided A/B reads
// (transposed views, broadcast batches) are handled by picking which index runs fastest across
// threads at load time.
#include <algorithm>

#include "core/cuda_check.h"
#include "ops/matmul/matmul_kernels.h"

namespace mt {

namespace {

template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    matmul_tiled_kernel(MatmulArgs p) {
  constexpr int kThreads = (BM / TM) * (BN / TN);
  constexpr int kCols = BN / TN, kRowsT = BM / TM;
  static_assert(BM * BK % kThreads == 0 && BN * BK % kThreads == 0, "tile loads must divide evenly");
  __shared__ T As[BK][BM];
  __shared__ T Bs[BK][BN];
  const int tx = threadIdx.x % kCols, ty = threadIdx.x / kCols;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM, n0 = static_cast<int64_t>(blockIdx.x) * BN;
  const bool a_k_fast = p.a_cs == 1, b_n_fast = p.b_cs == 1 || p.b_rs != 1;
  for (int64_t batch = blockIdx.z; batch < p.batch; batch += gridDim.z) {
    const T* A = static_cast<const T*>(p.a) + batch * p.a_bs;
    const T* B = static_cast<const T*>(p.b) + batch * p.b_bs;
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] = T(0);
    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
      for (int e0 = 0; e0 < BM * BK; e0 += kThreads) {
        const int e = e0 + threadIdx.x;
        const int mm = a_k_fast ? e / BK : e % BM, kk = a_k_fast ? e % BK : e / BM;
        const int64_t gm = m0 + mm, gk = k0 + kk;
        As[kk][mm] = gm < p.m && gk < p.k ? A[gm * p.a_rs + gk * p.a_cs] : T(0);
      }
#pragma unroll
      for (int e0 = 0; e0 < BN * BK; e0 += kThreads) {
        const int e = e0 + threadIdx.x;
        const int nn = b_n_fast ? e % BN : e / BK, kk = b_n_fast ? e / BN : e % BK;
        const int64_t gn = n0 + nn, gk = k0 + kk;
        Bs[kk][nn] = gn < p.n && gk < p.k ? B[gk * p.b_rs + gn * p.b_cs] : T(0);
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        T a_frag[TM], b_frag[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) a_frag[i] = As[kk][ty + i * kRowsT];
#pragma unroll
        for (int j = 0; j < TN; ++j) b_frag[j] = Bs[kk][tx + j * kCols];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
      }
      __syncthreads();
    }
    T* C = static_cast<T*>(p.c) + batch * p.m * p.n;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t gm = m0 + ty + i * kRowsT;
      if (gm >= p.m) continue;
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int64_t gn = n0 + tx + j * kCols;
        if (gn < p.n) C[gm * p.n + gn] = acc[i][j];
      }
    }
  }
}

template <typename T, int BM, int BN, int BK, int TM, int TN>
void launch(const MatmulArgs& p) {
  const dim3 grid(static_cast<unsigned>((p.n + BN - 1) / BN), static_cast<unsigned>((p.m + BM - 1) / BM),
                  static_cast<unsigned>(std::min<int64_t>(p.batch, 65535)));
  MT_CHECK_VALUE(grid.y <= 65535, "matmul: too many rows (", p.m, ") for one CUDA grid");
  matmul_tiled_kernel<T, BM, BN, BK, TM, TN><<<grid, (BM / TM) * (BN / TN), 0, nullptr>>>(p);
  MT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void matmul_cuda(DType dtype, const MatmulArgs& args) {
  if (args.batch * args.m * args.n == 0) return;
  if (dtype == DType::Float32) return launch<float, 128, 128, 8, 8, 8>(args);
  MT_ASSERT(dtype == DType::Float64);
  launch<double, 64, 64, 8, 4, 4>(args);
}

}  // namespace mt
