// Probe: softmax over a long axis in two kernels, the second read served by L2. Kernel 1 reduces
// each (chunk of the axis x tile of inner) to a per-column (max, sum) partial and the last chunk
// of a tile to arrive folds them into the column's (max, 1/sum); kernel 2 reads x again (from L2
// while the tensor fits it) and writes the output. Timed with CUDA events (caches flushed before
// each rep) beside a plain copy of the same bytes and a read-only pass.
//
//   nvcc -std=c++17 -arch=sm_90 -O3 -I. -o /tmp/split_column_probe tools/split_column_probe.cu
//   /tmp/split_column_probe
//
// What it showed on an H200 (forty-sixth session, BENCHMARKS.md): the two kernels took 36-44 us
// on float16 [4096, 4096] over dim 0 (every chunk, tile and cache-hint setting below), where
// tier 4b's one kernel takes 28.4 by the same events, because at 32 MB the read alone takes 13.3
// us and the copy 20.1: two passes pay the ramp of a small grid twice. float32 alike (61-64
// against 45.5).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tools/tool_cuda_check.h"

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float ex2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

template <typename T>
struct Pack;
template <>
struct Pack<float> {
  static constexpr int N = 4;
  __device__ static void load(const uint4& u, float* v) {
    v[0] = __uint_as_float(u.x), v[1] = __uint_as_float(u.y);
    v[2] = __uint_as_float(u.z), v[3] = __uint_as_float(u.w);
  }
  __device__ static uint4 store(const float* v) {
    return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]),
                      __float_as_uint(v[3]));
  }
};
template <>
struct Pack<__half> {
  static constexpr int N = 8;
  __device__ static void load(const uint4& u, float* v) {
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
    for (int i = 0; i < 4; ++i) {
      __half2 h = *reinterpret_cast<const __half2*>(&w[i]);
      float2 f = __half22float2(h);
      v[2 * i] = f.x, v[2 * i + 1] = f.y;
    }
  }
  __device__ static uint4 store(const float* v) {
    unsigned w[4];
    for (int i = 0; i < 4; ++i) {
      __half2 h = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
      w[i] = *reinterpret_cast<unsigned*>(&h);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
};

// The probe's L2 policies: evict_last for kernel 1's reads (kept for kernel 2), evict_first for
// kernel 2's (read for the last time).
__device__ __forceinline__ uint64_t l2_policy(bool keep) {
  uint64_t pol;
  if (keep) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ uint4 ld_hinted(const uint4* p, uint64_t pol) {
  uint4 u;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
               : "l"(p), "l"(pol));
  return u;
}
__device__ __forceinline__ uint4 ld_plain(const uint4* p) { return __ldg(p); }
__device__ __forceinline__ void st_cs(uint4* p, uint4 u) { __stcs(p, u); }

// A batch of B steps of a thread's column, TY apart, from step a (those past a1 left unset).
template <int B>
__device__ __forceinline__ void load_batch(uint4 (&u)[B], const uint4* base, long packs, long a,
                                           int TY, long a1, bool hinted, uint64_t pol) {
#pragma unroll
  for (int b = 0; b < B; ++b) {
    const long r = a + long(b) * TY;
    if (r < a1) u[b] = hinted ? ld_hinted(base + r * packs, pol) : ld_plain(base + r * packs);
  }
}

struct Cfg {
  long outer, axis, inner;
  int chunk;   // axis steps a block reduces
  int tx, ty;  // packs along inner, steps along the axis
  int hints;   // bit 0: kernel 1 loads evict-last; bit 1: kernel 2 loads evict-first
  bool reverse;  // kernel 2 walks the chunks last first
  bool pdl;
};

// blockIdx.x: tile of inner (tx packs), blockIdx.y: chunk, blockIdx.z: outer.
template <typename T, int B>
__global__ void stats_kernel(const T* __restrict__ x, float2* __restrict__ part,
                             unsigned* __restrict__ counters, float2* __restrict__ stats,
                             long axis, long inner, int chunk, int hints) {
  constexpr int N = Pack<T>::N;
  extern __shared__ float2 red[];  // [ty][tx * N]
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  const long packs = inner / N;
  const long pc = long(blockIdx.x) * TX + tx;
  const long o = blockIdx.z;
  const long a0 = long(blockIdx.y) * chunk, a1 = min(axis, a0 + chunk);
  float m[N], s[N];
  for (int i = 0; i < N; ++i) m[i] = -INFINITY, s[i] = 0.f;
  const uint64_t pol = l2_policy(true);
  if (pc < packs) {
    const uint4* base = reinterpret_cast<const uint4*>(x + o * axis * inner) + pc;
    for (long a = a0 + ty; a < a1; a += long(B) * TY) {
      uint4 u[B];
      load_batch<B>(u, base, packs, a, TY, a1, hints & 1, pol);
      float v[B][N];
#pragma unroll
      for (int b = 0; b < B; ++b) {
        const long r = a + long(b) * TY;
        if (r < a1) Pack<T>::load(u[b], v[b]);
        else
          for (int i = 0; i < N; ++i) v[b][i] = -INFINITY;
      }
#pragma unroll
      for (int i = 0; i < N; ++i) {
        float bm = v[0][i];
#pragma unroll
        for (int b = 1; b < B; ++b) bm = fmaxf(bm, v[b][i]);
        const float nm = fmaxf(m[i], bm);
        const float ms = nm * kLog2e;
        float acc = (m[i] == -INFINITY) ? 0.f : s[i] * ex2(m[i] * kLog2e - ms);
#pragma unroll
        for (int b = 0; b < B; ++b) acc += ex2(fmaf(v[b][i], kLog2e, -ms));
        m[i] = nm, s[i] = acc;
      }
    }
  }
  const int cols = TX * N;
  for (int i = 0; i < N; ++i) red[ty * cols + tx * N + i] = make_float2(m[i], s[i]);
  __syncthreads();
  const long col0 = long(blockIdx.x) * cols;
  const long nchunks = gridDim.y;
  for (int c = ty * TX + tx; c < cols; c += TX * TY) {
    float M = -INFINITY;
    for (int j = 0; j < TY; ++j) M = fmaxf(M, red[j * cols + c].x);
    float S = 0.f;
    if (M != -INFINITY)
      for (int j = 0; j < TY; ++j) {
        const float2 p = red[j * cols + c];
        if (p.x != -INFINITY) S += p.y * ex2((p.x - M) * kLog2e);
      }
    if (col0 + c < inner) part[(o * nchunks + blockIdx.y) * inner + col0 + c] = make_float2(M, S);
  }
  // Kernel 2 may start launching (it waits for this grid to finish before reading).
  asm volatile("griddepcontrol.launch_dependents;");
  // The last chunk of this tile to finish folds the tile's partials.
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (tx == 0 && ty == 0) {
    const unsigned id = unsigned(o * gridDim.x + blockIdx.x);
    last = atomicAdd(&counters[id], 1u) == unsigned(nchunks - 1);
    if (last) counters[id] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int c = ty * TX + tx; c < cols; c += TX * TY) {
    if (col0 + c >= inner) continue;
    float M = -INFINITY;
    for (long j = 0; j < nchunks; ++j) M = fmaxf(M, __ldcg(&part[(o * nchunks + j) * inner + col0 + c].x));
    float S = 0.f;
    for (long j = 0; j < nchunks; ++j) {
      const float2 p = __ldcg(&part[(o * nchunks + j) * inner + col0 + c]);
      if (p.x != -INFINITY) S += p.y * ex2((p.x - M) * kLog2e);
    }
    stats[o * inner + col0 + c] = make_float2(M * kLog2e, 1.f / S);
  }
}

template <typename T, int B>
__global__ void apply_kernel(const T* __restrict__ x, T* __restrict__ y,
                             const float2* __restrict__ stats, long axis, long inner, int chunk,
                             int hints, int reverse, int pdl) {
  constexpr int N = Pack<T>::N;
  const int tx = threadIdx.x, ty = threadIdx.y, TX = blockDim.x, TY = blockDim.y;
  const long packs = inner / N;
  const long pc = long(blockIdx.x) * TX + tx;
  const long o = blockIdx.z;
  const long cy = reverse ? gridDim.y - 1 - blockIdx.y : blockIdx.y;
  const long a0 = cy * chunk, a1 = min(axis, a0 + chunk);
  if (pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (pc >= packs) return;
  float ms[N], inv[N];
  for (int i = 0; i < N; ++i) {
    const float2 st = stats[o * inner + pc * N + i];
    ms[i] = st.x, inv[i] = st.y;
  }
  const uint64_t pol = l2_policy(false);
  const uint4* base = reinterpret_cast<const uint4*>(x + o * axis * inner) + pc;
  uint4* out = reinterpret_cast<uint4*>(y + o * axis * inner) + pc;
  for (long a = a0 + ty; a < a1; a += long(B) * TY) {
    uint4 u[B];
    load_batch<B>(u, base, packs, a, TY, a1, hints & 2, pol);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const long r = a + long(b) * TY;
      if (r >= a1) continue;
      float v[N];
      Pack<T>::load(u[b], v);
      for (int i = 0; i < N; ++i) v[i] = ex2(fmaf(v[i], kLog2e, -ms[i])) * inv[i];
      st_cs(out + r * packs, Pack<T>::store(v));
    }
  }
}

__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, long n) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x)
    out[i] = in[i];
}
__global__ void read_kernel(const uint4* __restrict__ in, long n, unsigned* sink) {
  unsigned acc = 0;
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n; i += long(gridDim.x) * blockDim.x) {
    const uint4 u = __ldg(in + i);
    acc ^= u.x ^ u.y ^ u.z ^ u.w;
  }
  if (acc == 0x12345678u) *sink = acc;
}

static char* g_flush;
static const size_t kFlushBytes = size_t(256) << 20;
static void flush() { CHECK(cudaMemsetAsync(g_flush, 1, kFlushBytes)); }

template <typename F>
static float time_it(F&& f, int reps = 15) {
  std::vector<float> t;
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int r = 0; r < reps + 2; ++r) {
    flush();
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 2) t.push_back(ms * 1000.f);
  }
  std::sort(t.begin(), t.end());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

template <typename T>
static void run(const char* name, Cfg c) {
  constexpr int N = Pack<T>::N, B = 8;
  const size_t numel = size_t(c.outer * c.axis * c.inner), bytes = numel * sizeof(T);
  T *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  std::vector<T> hx(numel);
  unsigned seed = 12345;
  std::vector<float> fx(numel);
  for (size_t i = 0; i < numel; ++i) {
    seed = seed * 1664525u + 1013904223u;
    fx[i] = float(int(seed >> 9) % 2000) / 200.f - 5.f;
    hx[i] = T(fx[i]);
    fx[i] = float(hx[i]);
  }
  CHECK(cudaMemcpy(x, hx.data(), bytes, cudaMemcpyHostToDevice));
  const long tiles = (c.inner / N + c.tx - 1) / c.tx, chunks = (c.axis + c.chunk - 1) / c.chunk;
  float2 *part, *stats;
  unsigned* counters;
  CHECK(cudaMalloc(&part, sizeof(float2) * c.outer * chunks * c.inner));
  CHECK(cudaMalloc(&stats, sizeof(float2) * c.outer * c.inner));
  CHECK(cudaMalloc(&counters, sizeof(unsigned) * c.outer * tiles));
  CHECK(cudaMemset(counters, 0, sizeof(unsigned) * c.outer * tiles));
  const dim3 grid(unsigned(tiles), unsigned(chunks), unsigned(c.outer)), block(c.tx, c.ty);
  const size_t smem = sizeof(float2) * c.ty * c.tx * N;
  auto k1 = stats_kernel<T, B>;
  auto k2 = apply_kernel<T, B>;
  CHECK(cudaFuncSetAttribute(k1, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  auto softmax = [&] {
    k1<<<grid, block, smem>>>(x, part, counters, stats, c.axis, c.inner, c.chunk, c.hints);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid, cfg.blockDim = block, cfg.dynamicSmemBytes = 0, cfg.stream = 0;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr, cfg.numAttrs = c.pdl ? 1 : 0;
    CHECK(cudaLaunchKernelEx(&cfg, k2, (const T*)x, y, (const float2*)stats, c.axis, c.inner,
                             c.chunk, c.hints, int(c.reverse), int(c.pdl)));
  };
  // Check against a float64 reference on a few columns.
  softmax();
  CHECK(cudaDeviceSynchronize());
  std::vector<T> hy(numel);
  CHECK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (long o = 0; o < c.outer; o += std::max<long>(1, c.outer / 3))
    for (long col = 0; col < c.inner; col += 97) {
      double M = -1e30, S = 0;
      for (long a = 0; a < c.axis; ++a) M = std::max(M, double(fx[(o * c.axis + a) * c.inner + col]));
      for (long a = 0; a < c.axis; ++a) S += std::exp(double(fx[(o * c.axis + a) * c.inner + col]) - M);
      for (long a = 0; a < c.axis; a += 7) {
        const size_t i = (o * c.axis + a) * c.inner + col;
        const double ref = std::exp(double(fx[i]) - M) / S;
        worst = std::max(worst, std::abs(double(float(hy[i])) - ref));
      }
    }
  const float us = time_it(softmax);
  const float us_copy = time_it([&] { copy_kernel<<<132 * 8, 256>>>((const uint4*)x, (uint4*)y, long(bytes / 16)); });
  const float us_read = time_it([&] { read_kernel<<<132 * 8, 256>>>((const uint4*)x, long(bytes / 16), counters); });
  const double gbs = 2.0 * bytes / us / 1e3;
  std::printf("%-34s %8.2f us (%5.0f GB/s)  copy %7.2f  read-only %7.2f  grid %ldx%ldx%ld  max abs err %.1e\n",
              name, us, gbs, us_copy, us_read, tiles, chunks, c.outer, worst);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(part));
  CHECK(cudaFree(stats));
  CHECK(cudaFree(counters));
}

int main() {
  CHECK(cudaMalloc(&g_flush, kFlushBytes));
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  std::printf("L2 %d MB\n", l2 >> 20);
  struct Named {
    const char* name;
    Cfg c;
    bool half;
  };
  const Named runs[] = {
      {"f16 [4096,4096]:0 ch128 32x8", {1, 4096, 4096, 128, 32, 8, 0, false, false}, true},
      {"f16 [4096,4096]:0 ch128 32x8 pdl", {1, 4096, 4096, 128, 32, 8, 0, false, true}, true},
      {"f16 [4096,4096]:0 ch128 rev pdl", {1, 4096, 4096, 128, 32, 8, 0, true, true}, true},
      {"f16 [4096,4096]:0 ch128 hints3 pdl", {1, 4096, 4096, 128, 32, 8, 3, false, true}, true},
      {"f16 [4096,4096]:0 ch128 hints3 rev", {1, 4096, 4096, 128, 32, 8, 3, true, true}, true},
      {"f16 [4096,4096]:0 ch64 32x8 pdl", {1, 4096, 4096, 64, 32, 8, 0, false, true}, true},
      {"f16 [4096,4096]:0 ch256 32x8 pdl", {1, 4096, 4096, 256, 32, 8, 0, false, true}, true},
      {"f16 [4096,4096]:0 ch128 16x16 pdl", {1, 4096, 4096, 128, 16, 16, 0, false, true}, true},
      {"f16 [4096,4096]:0 ch256 16x16 pdl", {1, 4096, 4096, 256, 16, 16, 0, false, true}, true},
      {"f16 [3072,4096]:0 ch128 pdl", {1, 3072, 4096, 128, 32, 8, 0, false, true}, true},
      {"f16 [2048,4096]:0 ch128 pdl", {1, 2048, 4096, 128, 32, 8, 0, false, true}, true},
      {"f16 [2,4096,4096]:1 ch128 pdl", {2, 4096, 4096, 128, 32, 8, 0, false, true}, true},
      {"f16 [16,512,1024]:1 ch64 pdl", {16, 512, 1024, 64, 16, 8, 0, false, true}, true},
      {"f16 [8,150,128,128]:1 ch32 pdl", {8, 150, 16384, 32, 32, 8, 0, false, true}, true},
      {"f32 [4096,4096]:0 ch128 pdl", {1, 4096, 4096, 128, 32, 8, 0, false, true}, false},
      {"f32 [4096,4096]:0 ch128 hints3 pdl", {1, 4096, 4096, 128, 32, 8, 3, false, true}, false},
      {"f32 [2048,4096]:0 ch128 pdl", {1, 2048, 4096, 128, 32, 8, 0, false, true}, false},
      {"f32 [32,1000,196]:1 ch64 pdl", {32, 1000, 196, 64, 16, 8, 0, false, true}, false},
  };
  for (const Named& r : runs) {
    if (r.half) run<__half>(r.name, r.c);
    else run<float>(r.name, r.c);
  }
  return 0;
}
