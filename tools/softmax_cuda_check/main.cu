// Standalone check and benchmark of the CUDA softmax kernels (no Python package needed).
//   softmax_cuda_check test   every tier x dtype x {softmax, log_softmax} x {fwd, bwd} against a
//                             float64 CPU reference; poisoned outputs, guard cells, misaligned
//                             pointers, NaN / inf rows
//   softmax_cuda_check bench  the shapes of shared/bench/softmax_shapes.json: GB/s and % of the
//                             measured device-to-device copy bandwidth
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cuda_check.h"
#include "ops/softmax/softmax_cuda.h"

namespace mt {
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  MT_THROW(CudaError, "CUDA error ", cudaGetErrorString(err), " in ", expr, " at ", file, ":", line);
}
}  // namespace mt

using mt::DType;
using mt::SoftmaxShape;

#define CK(x) MT_CUDA_CHECK(x)

static std::mt19937_64 rng(1234);

struct Tol { double atol, rtol; };
template <typename T> Tol tol_for();
template <> Tol tol_for<float>() { return {1e-6, 1e-5}; }
template <> Tol tol_for<double>() { return {1e-12, 1e-10}; }
template <> Tol tol_for<mt::Half>() { return {1e-3, 4e-3}; }
template <> Tol tol_for<mt::BFloat16>() { return {8e-3, 1.6e-2}; }

template <typename T> double to_d(T v) { return double(float(v)); }
template <> double to_d<double>(double v) { return v; }
template <typename T> T from_d(double v) { return T(float(v)); }
template <> double from_d<double>(double v) { return v; }

// torch semantics: NaN-propagating max, exp(x - max) (inf - inf = NaN), then normalize.
static void ref_forward(const std::vector<double>& x, std::vector<double>& y, SoftmaxShape s, bool log) {
  y.resize(x.size());
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      double m = -INFINITY;
      for (int64_t a = 0; a < s.axis; ++a) {
        const double v = x[at(a)];
        if (v > m || std::isnan(v)) m = std::isnan(m) ? m : v;
      }
      double sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) sum += std::exp(x[at(a)] - m);
      for (int64_t a = 0; a < s.axis; ++a)
        y[at(a)] = log ? x[at(a)] - m - std::log(sum) : std::exp(x[at(a)] - m) / sum;
    }
}

static void ref_backward(const std::vector<double>& y, const std::vector<double>& dy,
                         std::vector<double>& dx, SoftmaxShape s, bool log) {
  dx.resize(y.size());
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      double sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) sum += log ? dy[at(a)] : y[at(a)] * dy[at(a)];
      for (int64_t a = 0; a < s.axis; ++a)
        dx[at(a)] = log ? dy[at(a)] - std::exp(y[at(a)]) * sum : y[at(a)] * (dy[at(a)] - sum);
    }
}

static int g_failures = 0, g_checks = 0;
constexpr int64_t kGuard = 64;  // poisoned cells after each output, which must stay untouched

// Device buffer of n elements starting `off` elements past a 256-byte boundary, guards after.
template <typename T>
struct DevBuf {
  char* base = nullptr;
  T* ptr = nullptr;
  int64_t n = 0;
  DevBuf(int64_t n_, int off) : n(n_) {
    const size_t bytes = size_t(n + off + kGuard) * sizeof(T);
    CK(cudaMalloc(&base, bytes));
    CK(cudaMemset(base, 0xff, bytes));  // NaN in every float format
    ptr = reinterpret_cast<T*>(base) + off;
  }
  ~DevBuf() { cudaFree(base); }
  void upload(const std::vector<T>& h) { CK(cudaMemcpy(ptr, h.data(), n * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download_with_guard() {
    std::vector<T> h(n + kGuard);
    CK(cudaMemcpy(h.data(), ptr, (n + kGuard) * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

template <typename T>
static void check_case(SoftmaxShape s, bool log, bool bwd, int off, bool specials) {
  const int64_t n = s.numel();
  std::uniform_real_distribution<double> ux(-10, 10), ud(-1, 1);
  std::vector<T> ha(n), hb(bwd ? n : 0);
  std::vector<double> da(n), db(bwd ? n : 0), ref;
  for (int64_t k = 0; k < n; ++k) { ha[k] = from_d<T>(ux(rng)); da[k] = to_d(ha[k]); }
  if (specials) {  // group 0: a NaN; 1: all -inf; 2: a +inf; 3: first half -inf
    const int64_t groups = s.outer * s.inner;
    auto at = [&](int64_t g, int64_t a) { return ((g / s.inner) * s.axis + a) * s.inner + g % s.inner; };
    if (groups > 0) da[at(0, s.axis / 2)] = NAN;
    if (groups > 1) for (int64_t a = 0; a < s.axis; ++a) da[at(1, a)] = -INFINITY;
    if (groups > 2) da[at(2, 0)] = INFINITY;
    if (groups > 3) for (int64_t a = 0; a < s.axis / 2; ++a) da[at(3, a)] = -INFINITY;  // masked
    for (int64_t k = 0; k < n; ++k) ha[k] = from_d<T>(da[k]);
  }
  if (bwd) {  // y = softmax(x) rounded to T, random dy
    std::vector<double> y;
    ref_forward(da, y, s, log);
    for (int64_t k = 0; k < n; ++k) { ha[k] = from_d<T>(y[k]); da[k] = to_d(ha[k]); }
    for (int64_t k = 0; k < n; ++k) { hb[k] = from_d<T>(ud(rng)); db[k] = to_d(hb[k]); }
    ref_backward(da, db, ref, s, log);
  } else {
    ref_forward(da, ref, s, log);
  }
  DevBuf<T> a(n, off), b(bwd ? n : 1, off), out(n, off);
  a.upload(ha);
  if (bwd) b.upload(hb);
  const DType dt = mt::DTypeOf<T>::value;
  if (bwd)
    mt::softmax_backward_cuda(a.ptr, b.ptr, out.ptr, dt, s, log);
  else
    mt::softmax_forward_cuda(a.ptr, out.ptr, dt, s, log);
  CK(cudaDeviceSynchronize());
  std::vector<T> got = out.download_with_guard();
  const Tol tol = tol_for<T>();
  int64_t bad = 0, first = -1;
  for (int64_t k = 0; k < n; ++k) {
    const double g = to_d(got[k]), r = ref[k];
    const bool ok = std::isnan(r) ? std::isnan(g)
                    : std::isinf(r) ? g == r
                                    : std::fabs(g - r) <= tol.atol + tol.rtol * std::fabs(r);
    if (!ok && bad++ == 0) first = k;
  }
  for (int64_t k = n; k < n + kGuard; ++k) {
    uint8_t bytes[sizeof(T)];
    std::memcpy(bytes, &got[k], sizeof(T));
    for (uint8_t v : bytes)
      if (v != 0xff && bad++ == 0) first = k;
  }
  ++g_checks;
  if (bad) {
    ++g_failures;
    std::printf("FAIL %-8s [%lld,%lld,%lld] %s%s off=%d%s: %lld bad, first at %lld got %.9g want %.9g\n",
                mt::dtype_name(dt), (long long)s.outer, (long long)s.axis, (long long)s.inner,
                log ? "log_softmax" : "softmax", bwd ? " bwd" : "", off, specials ? " specials" : "",
                (long long)bad, (long long)first, first < n ? to_d(got[first]) : 0.0,
                first < n ? ref[first] : 0.0);
  }
}

template <typename T>
static void check_shape(SoftmaxShape s) {
  for (int v = 0; v < 4; ++v) check_case<T>(s, v & 1, v & 2, 0, false);
  check_case<T>(s, false, false, 1, true);  // misaligned by one element, NaN/inf groups
  check_case<T>(s, true, false, 3, true);
  check_case<T>(s, false, true, 1, false);
  check_case<T>(s, true, true, 1, false);
}

static void run_tests(bool big) {
  std::vector<SoftmaxShape> shapes;
  // inner == 1 across the warp / block / cluster / split-row boundaries.
  const int64_t cols[] = {1, 2, 3, 7, 16, 31, 32, 33, 64, 100, 127, 128, 129, 255, 256, 257, 511, 512,
                          513, 1000, 1023, 1024, 1025, 2047, 2048, 2049, 3001, 4096, 8192, 10240, 16385,
                          32768, 65537, 131072, 262147};
  for (int64_t c : cols) shapes.push_back({std::max<int64_t>(1, std::min<int64_t>(37 + c % 5, (1 << 21) / c)), c, 1});
  shapes.push_back({200003, 32, 1});   // warp tier, several rows per thread, grid-stride
  shapes.push_back({3001, 4096, 1});   // block tier, grid-stride
  shapes.push_back({300, 32768, 1});   // cluster tier, several rows per cluster
  shapes.push_back({1, 1048576, 1});
  shapes.push_back({3, 1048579, 1});
  if (big) shapes.push_back({1, 16777216, 1});
  // inner > 1
  const SoftmaxShape inner_shapes[] = {{1, 1, 1},     {7, 1, 1},       {1, 1, 9},       {2, 3, 5},
                                       {3, 7, 4},     {4, 128, 3136},  {2, 1000, 196},  {1, 2048, 1024},
                                       {1, 4097, 257}, {5, 1, 7},      {2, 2, 100000},  {3, 33, 17},
                                       {1, 3, 2},     {2, 300, 4096},  {64, 5, 8}};
  for (const auto& s : inner_shapes) shapes.push_back(s);
  for (const auto& s : shapes) {
    if (s.numel() > (int64_t(1) << 22) && !big) continue;
    check_shape<float>(s);
    check_shape<double>(s);
    check_shape<mt::Half>(s);
    check_shape<mt::BFloat16>(s);
  }
  // Empty tensors launch nothing; non-float dtypes raise TypeError.
  mt::softmax_forward_cuda(nullptr, nullptr, DType::Float32, {0, 5, 1}, false);
  mt::softmax_backward_cuda(nullptr, nullptr, nullptr, DType::Float16, {3, 0, 2}, true);
  try {
    mt::softmax_forward_cuda(nullptr, nullptr, DType::Int64, {1, 5, 1}, false);
    std::printf("FAIL int64 did not throw\n");
    ++g_failures;
  } catch (const mt::TypeError& e) {
    if (!std::strstr(e.what(), "int64")) { std::printf("FAIL message: %s\n", e.what()); ++g_failures; }
  }
  CK(cudaDeviceSynchronize());
  std::printf("tests: %d checks, %d failures\n", g_checks, g_failures);
}

// ---------------------------------------------------------------------------------------------
__global__ void fill_random(uint16_t* p, int64_t n16, uint16_t lo_mask, uint16_t hi_bits) {
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n16; k += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(k) * 2654435761u;
    h ^= h >> 15;
    p[k] = uint16_t((h & lo_mask) | hi_bits);
  }
}

struct BenchCase { std::vector<int64_t> shape; int dim; };

static SoftmaxShape to_softmax_shape(const BenchCase& c) {
  const int nd = int(c.shape.size());
  const int d = c.dim < 0 ? c.dim + nd : c.dim;
  SoftmaxShape s{1, c.shape[d], 1};
  for (int k = 0; k < d; ++k) s.outer *= c.shape[k];
  for (int k = d + 1; k < nd; ++k) s.inner *= c.shape[k];
  return s;
}

static double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void run_bench() {
  const std::vector<BenchCase> cases = {
      {{1024, 512}, -1}, {{1024, 1024}, -1}, {{1024, 2048}, -1}, {{1024, 4096}, -1},
      {{1024, 8192}, -1}, {{1024, 10240}, -1}, {{32, 64, 16, 16}, -1}, {{32, 64, 32, 32}, -1},
      {{32, 64, 64, 64}, -1}, {{32, 64, 128, 128}, -1}, {{32, 64, 512, 512}, -1},
      {{2097152, 32}, -1}, {{524288, 128}, -1}, {{67108, 1000}, -1}, {{16384, 4096}, -1},
      {{2048, 32768}, -1}, {{1, 1048576}, -1}, {{1, 16777216}, -1}, {{8, 131072}, -1},
      {{16, 262144}, -1}, {{64, 152064}, -1}, {{64, 128, 56, 56}, 1}, {{32, 1000, 14, 14}, 1},
      {{8, 4096, 4096}, 1}, {{4096, 4096}, 0}};
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t flush_bytes = std::max<size_t>(size_t(prop.l2CacheSize) * 4, 256 << 20);
  size_t max_bytes = 0;
  for (const auto& c : cases) max_bytes = std::max<size_t>(max_bytes, to_softmax_shape(c).numel() * 8);
  char *x, *dy, *y, *flush;
  CK(cudaMalloc(&x, max_bytes));
  CK(cudaMalloc(&dy, max_bytes));
  CK(cudaMalloc(&y, max_bytes));
  CK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time_it = [&](auto&& fn, int reps) {
    std::vector<float> ts;
    for (int r = 0; r < reps + 3; ++r) {
      CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes));
      CK(cudaEventRecord(e0));
      fn();
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (r >= 3) ts.push_back(ms);
    }
    return median(ts) * 1e-3;
  };
  // Copy bandwidth: 1 GiB device-to-device, read + write bytes.
  const size_t cbytes = size_t(1) << 30;
  const double tcopy = time_it([&] { CK(cudaMemcpyAsync(y, x, cbytes, cudaMemcpyDeviceToDevice)); }, 10);
  const double copy_bw = 2.0 * cbytes / tcopy / 1e9;
  std::printf("device %s, %d SMs, L2 %d MB; copy bandwidth %.0f GB/s (read+write)\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, copy_bw);
  // Inputs: 16-bit patterns that are finite, moderate numbers in every dtype (sign + small exponent).
  fill_random<<<1024, 256>>>(reinterpret_cast<uint16_t*>(x), max_bytes / 2, 0x83ff, 0x3800);
  fill_random<<<1024, 256>>>(reinterpret_cast<uint16_t*>(dy), max_bytes / 2, 0x83ff, 0x3000);
  CK(cudaDeviceSynchronize());
  const DType dts[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  std::printf("\nforward softmax GB/s = 2*numel*itemsize/t (%% of copy); backward = 3*numel*itemsize/t\n");
  std::printf("%-22s %4s | %14s %14s %14s %14s | %7s %7s %7s %7s\n", "shape", "dim", "fp32", "fp64",
              "fp16", "bf16", "bwd32", "bwd64", "bwd16", "bwdbf");
  for (const auto& c : cases) {
    const SoftmaxShape s = to_softmax_shape(c);
    std::string name = "[";
    for (size_t k = 0; k < c.shape.size(); ++k) name += (k ? "," : "") + std::to_string(c.shape[k]);
    name += "]";
    char fwd_cols[4][32], bwd_cols[4][16];
    for (int d = 0; d < 4; ++d) {
      const double bytes = double(s.numel()) * mt::itemsize(dts[d]);
      const int reps = bytes > 1e8 ? 15 : 30;
      const double tf = time_it([&] { mt::softmax_forward_cuda(x, y, dts[d], s, false); }, reps);
      const double tb = time_it([&] { mt::softmax_backward_cuda(x, dy, y, dts[d], s, false); }, reps);
      const double gf = 2 * bytes / tf / 1e9, gb = 3 * bytes / tb / 1e9;
      std::snprintf(fwd_cols[d], 32, "%6.0f (%3.0f%%)", gf, 100 * gf / copy_bw);
      std::snprintf(bwd_cols[d], 16, "%7.0f", gb);
    }
    std::printf("%-22s %4d | %14s %14s %14s %14s | %7s %7s %7s %7s\n", name.c_str(), c.dim, fwd_cols[0],
                fwd_cols[1], fwd_cols[2], fwd_cols[3], bwd_cols[0], bwd_cols[1], bwd_cols[2], bwd_cols[3]);
  }
  CK(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "test";
  try {
    if (mode == "test") run_tests(false);
    else if (mode == "test-big") run_tests(true);
    else if (mode == "bench") run_bench();
  } catch (const std::exception& e) {
    std::printf("ERROR: %s\n", e.what());
    return 2;
  }
  return g_failures ? 1 : 0;
}
