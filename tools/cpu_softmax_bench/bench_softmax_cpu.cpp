// Standalone timing of the CPU softmax kernels (Auto, Safe, Online) against a naive scalar
// reference (std::exp, three passes), median of many runs with std::chrono.
//   ./bench_softmax_cpu [--log] [--backward]      (MINITENSOR_NUM_THREADS sets the threads)
// Runs of the candidates are interleaved, so load from other processes hits all of them alike.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ops/softmax/softmax_cpu.h"

using mt::SoftmaxCpuAlgo;
using mt::SoftmaxShape;

namespace {

template <typename T>
void naive_softmax(const T* x, T* y, SoftmaxShape s, bool log) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const T* xg = x + o * s.axis * s.inner + i;
      T* yg = y + o * s.axis * s.inner + i;
      T m = -INFINITY, sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) m = std::max(m, xg[a * s.inner]);
      for (int64_t a = 0; a < s.axis; ++a) sum += std::exp(xg[a * s.inner] - m);
      for (int64_t a = 0; a < s.axis; ++a)
        yg[a * s.inner] = log ? xg[a * s.inner] - m - std::log(sum) : std::exp(xg[a * s.inner] - m) / sum;
    }
}

// Median microseconds of each function, interleaving their runs.
std::vector<double> median_us(const std::vector<std::function<void()>>& fns, int runs) {
  std::vector<std::vector<double>> t(fns.size());
  for (auto& f : fns) f();  // warm-up
  for (int r = 0; r < runs; ++r)
    for (size_t k = 0; k < fns.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      fns[k]();
      t[k].push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> med;
  for (auto& v : t) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

template <typename T>
void bench(const char* type, SoftmaxShape s, bool log, bool backward) {
  const int64_t n = s.numel();
  std::vector<T> x(n), y(n), g(n), dx(n);
  std::mt19937 rng(1);
  std::normal_distribution<T> normal(0, 3);
  for (auto& v : x) v = normal(rng);
  for (auto& v : g) v = normal(rng);
  const int runs = std::clamp<int>(static_cast<int>(2e8 / (n * 20 + 1)), 5, 500);
  char shape[64];
  std::snprintf(shape, sizeof shape, "[%lld,%lld,%lld]", (long long)s.outer, (long long)s.axis, (long long)s.inner);
  if (backward) {
    mt::softmax_forward_cpu(x.data(), y.data(), s, log);
    auto med = median_us({[&] { mt::softmax_backward_cpu(y.data(), g.data(), dx.data(), s, log); }}, runs);
    std::printf("%-20s %-7s backward %10.1f us  %6.2f ns/elem\n", shape, type, med[0], med[0] * 1e3 / n);
    return;
  }
  auto med = median_us({[&] { naive_softmax(x.data(), y.data(), s, log); },
                        [&] { mt::softmax_forward_cpu(x.data(), y.data(), s, log, SoftmaxCpuAlgo::Auto); },
                        [&] { mt::softmax_forward_cpu(x.data(), y.data(), s, log, SoftmaxCpuAlgo::Safe); },
                        [&] { mt::softmax_forward_cpu(x.data(), y.data(), s, log, SoftmaxCpuAlgo::Online); }},
                       runs);
  std::printf("%-20s %-7s naive %10.1f  auto %10.1f  safe %10.1f  online %10.1f us  (%.1fx naive, %.2f ns/elem)\n",
              shape, type, med[0], med[1], med[2], med[3], med[0] / med[1], med[1] * 1e3 / n);
}

}  // namespace

int main(int argc, char** argv) {
  bool log = false, backward = false;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--log")) log = true;
    if (!std::strcmp(argv[k], "--backward")) backward = true;
  }
  std::printf("%s%s, %d threads\n", log ? "log_softmax" : "softmax", backward ? " backward" : "", mt::num_threads());
  const SoftmaxShape shapes[] = {{1024, 1024, 1}, {4096, 1000, 1}, {64, 32, 1},   {8, 128, 3136},
                                 {1, 4096, 4096}, {1, 1024, 1024}, {1, 1 << 20, 1}, {32, 4, 4096}};
  for (const SoftmaxShape& s : shapes) {
    bench<float>("float32", s, log, backward);
    bench<double>("float64", s, log, backward);
  }
}
