// Correctness test for the CPU softmax kernels: every dtype x algorithm x direction against a
// float64 reference with torch's NaN/inf semantics, fresh random inputs, poisoned outputs,
// awkward shapes (primes, size-1 and empty dims, inner > 1, tiles with remainders, long rows),
// in-place aliasing and NaN/inf groups. Exits non-zero on the first class of failure.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "ops/common/simd_pack_cpu.h"
#include "ops/softmax/softmax_cpu.h"

using mt::SoftmaxCpuAlgo;
using mt::SoftmaxShape;

namespace {

int failures = 0;
std::mt19937_64 rng(12345);

template <typename T> const char* type_name();
template <> const char* type_name<float>() { return "float32"; }
template <> const char* type_name<double>() { return "float64"; }
template <> const char* type_name<mt::Half>() { return "float16"; }
template <> const char* type_name<mt::BFloat16>() { return "bfloat16"; }

template <typename T> double rtol();
template <> double rtol<float>() { return 2e-6; }
template <> double rtol<double>() { return 1e-12; }
template <> double rtol<mt::Half>() { return 2e-3; }
template <> double rtol<mt::BFloat16>() { return 1.6e-2; }

// Float64 reference with torch semantics: a NaN or +inf anywhere, or all -inf -> NaN group.
// `scale` is the size an error may have in units of the dtype's epsilon: x - max is rounded in
// the input precision, so softmax carries |x - max| relative error and log_softmax that much
// absolute error (inherent to softmax in that precision; torch has the same).
void reference_forward(const std::vector<double>& x, std::vector<double>& y, std::vector<double>& scale,
                       SoftmaxShape s, bool log) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      double m = -INFINITY;
      bool nan = false;
      for (int64_t a = 0; a < s.axis; ++a) {
        if (std::isnan(x[at(a)])) nan = true;
        m = std::max(m, x[at(a)]);
      }
      if (nan || std::isinf(m)) {
        for (int64_t a = 0; a < s.axis; ++a) y[at(a)] = NAN;
        continue;
      }
      double sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) sum += std::exp(x[at(a)] - m);
      for (int64_t a = 0; a < s.axis; ++a) {
        const double d = x[at(a)] - m;
        y[at(a)] = log ? d - std::log(sum) : std::exp(d) / sum;
        scale[at(a)] = log ? 1 + std::fabs(d) + std::log(sum)
                       : y[at(a)] == 0 ? 0.0 : std::fabs(y[at(a)]) * (1 + std::fabs(d));
      }
    }
}

// dx and a per-element error scale (the size of the terms, since the formulas cancel).
void reference_backward(const std::vector<double>& y, const std::vector<double>& g, std::vector<double>& dx,
                        std::vector<double>& scale, SoftmaxShape s, bool log) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t a) { return (o * s.axis + a) * s.inner + i; };
      double sum = 0, abs_sum = 0;
      for (int64_t a = 0; a < s.axis; ++a) {
        const double term = log ? g[at(a)] : y[at(a)] * g[at(a)];
        sum += term;
        abs_sum += std::fabs(term);
      }
      for (int64_t a = 0; a < s.axis; ++a) {
        const double yv = y[at(a)], gv = g[at(a)];
        dx[at(a)] = log ? gv - std::exp(yv) * sum : yv * (gv - sum);
        scale[at(a)] = log ? std::fabs(gv) + std::exp(yv) * abs_sum : std::fabs(yv) * (std::fabs(gv) + abs_sum);
      }
    }
}

// Absolute slack for results in the dtype's subnormal range, where precision runs out.
template <typename T> double atol();
template <> double atol<float>() { return 1e-44; }
template <> double atol<double>() { return 1e-320; }
template <> double atol<mt::Half>() { return 1.2e-7; }
template <> double atol<mt::BFloat16>() { return 1e-39; }

template <typename T>
bool close(double got, double want, double scale, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * scale + atol<T>();
}

enum class Fill { Normal, Wide, WithNan, AllNegInf, WithPosInf, SomeNegInf };

template <typename T>
std::vector<T> random_input(int64_t n, Fill fill, SoftmaxShape s) {
  std::normal_distribution<double> normal(0.0, fill == Fill::Wide ? 30.0 : 3.0);
  std::vector<T> v(n);
  for (auto& e : v) e = T(static_cast<float>(normal(rng)));
  if constexpr (std::is_same_v<T, double>)
    for (auto& e : v) e = normal(rng);
  if (n == 0) return v;
  // Poison group (o=0, i=0) or every other element; the other groups must stay correct.
  auto group0 = [&](int64_t a) { return a * s.inner; };
  switch (fill) {
    case Fill::WithNan: v[group0(s.axis / 2)] = T(NAN); break;
    case Fill::WithPosInf: v[group0(s.axis - 1)] = T(INFINITY); break;
    case Fill::AllNegInf: for (int64_t a = 0; a < s.axis; ++a) v[group0(a)] = T(-INFINITY); break;
    case Fill::SomeNegInf: for (int64_t k = 0; k < n; k += 2) v[k] = T(-INFINITY); break;
    default: break;
  }
  return v;
}

template <typename T>
std::vector<double> to_double(const std::vector<T>& v) {
  std::vector<double> d(v.size());
  for (size_t k = 0; k < v.size(); ++k) d[k] = static_cast<double>(static_cast<mt::acc_t<T>>(v[k]));
  return d;
}

template <typename T>
void check(const char* what, SoftmaxShape s, const std::vector<T>& got, const std::vector<double>& want,
           const std::vector<double>& scale, double tol) {
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    const double g = static_cast<double>(static_cast<mt::acc_t<T>>(got[k]));
    if (!close<T>(g, want[k], scale[k], tol)) {
      if (first < 0) first = static_cast<int64_t>(k);
      ++bad;
    }
    if (std::isfinite(want[k]) && scale[k] > 0) worst = std::max(worst, std::fabs(g - want[k]) / scale[k]);
  }
  if (bad) {
    ++failures;
    const double g = static_cast<double>(static_cast<mt::acc_t<T>>(got[first]));
    std::printf("FAIL %s %s [%lld,%lld,%lld]: %lld bad, first at %lld: got %.9g want %.9g\n", what,
                type_name<T>(), (long long)s.outer, (long long)s.axis, (long long)s.inner, (long long)bad,
                (long long)first, g, want[first]);
  }
  (void)worst;
}

template <typename T>
void test_shape(SoftmaxShape s, Fill fill) {
  const int64_t n = s.numel();
  const std::vector<T> x = random_input<T>(n, fill, s);
  const std::vector<double> xd = to_double(x);
  for (bool log : {false, true}) {
    std::vector<double> ref(n), scale(n);
    reference_forward(xd, ref, scale, s, log);
    std::vector<T> first;
    for (SoftmaxCpuAlgo algo : {SoftmaxCpuAlgo::Auto, SoftmaxCpuAlgo::Safe, SoftmaxCpuAlgo::Online}) {
      std::vector<T> y(n, T(777.0f));  // poison: any element not written fails
      mt::softmax_forward_cpu(x.data(), y.data(), s, log, algo);
      check<T>(log ? "log_softmax fwd" : "softmax fwd", s, y, ref, scale, rtol<T>());
      // In place must give the same bits as out of place.
      std::vector<T> inplace = x;
      mt::softmax_forward_cpu(inplace.data(), inplace.data(), s, log, algo);
      if (n && std::memcmp(inplace.data(), y.data(), n * sizeof(T)) != 0) {
        ++failures;
        std::printf("FAIL in-place differs %s [%lld,%lld,%lld] log=%d\n", type_name<T>(), (long long)s.outer,
                    (long long)s.axis, (long long)s.inner, log);
      }
      if (algo == SoftmaxCpuAlgo::Auto) first = y;
    }
    if (fill != Fill::Normal && fill != Fill::Wide) continue;
    // Backward from the rounded reference output, against the analytic float64 gradient.
    std::vector<T> yt(n), g = random_input<T>(n, Fill::Normal, s);
    for (int64_t k = 0; k < n; ++k) yt[k] = T(static_cast<mt::acc_t<T>>(ref[k]));
    const std::vector<double> yd = to_double(yt), gd = to_double(g);
    std::vector<double> dref(n), dscale(n);
    reference_backward(yd, gd, dref, dscale, s, log);
    std::vector<T> dx(n, T(777.0f));
    mt::softmax_backward_cpu(yt.data(), g.data(), dx.data(), s, log);
    check<T>(log ? "log_softmax bwd" : "softmax bwd", s, dx, dref, dscale, rtol<T>() * 4);
    std::vector<T> dx_alias = g;  // dx aliasing dy
    mt::softmax_backward_cpu(yt.data(), dx_alias.data(), dx_alias.data(), s, log);
    if (n && std::memcmp(dx_alias.data(), dx.data(), n * sizeof(T)) != 0) {
      ++failures;
      std::printf("FAIL backward in-place differs %s\n", type_name<T>());
    }
  }
}

template <typename T>
void test_all_shapes() {
  const SoftmaxShape shapes[] = {
      {0, 5, 1}, {3, 0, 1}, {2, 3, 0}, {0, 0, 0}, {1, 1, 1}, {7, 1, 1}, {1, 1, 9},
      {1, 2, 1}, {5, 3, 1}, {3, 17, 1}, {13, 31, 1}, {4, 33, 1}, {2, 64, 1}, {3, 97, 1},
      {64, 32, 1}, {5, 1000, 1}, {2, 1023, 1}, {3, 2049, 1}, {2, 5000, 1}, {1, 300007, 1},
      {3, 7, 2}, {2, 5, 3}, {4, 16, 17}, {2, 17, 16}, {3, 33, 31}, {1, 100, 129}, {2, 3, 515},
      {1, 19, 1031}, {2, 128, 49}, {1, 1, 4099}, {1, 257, 600}, {2, 7000, 3},
  };
  for (const SoftmaxShape& s : shapes)
    for (Fill fill : {Fill::Normal, Fill::Wide, Fill::WithNan, Fill::AllNegInf, Fill::WithPosInf, Fill::SomeNegInf})
      if (s.numel() > 0 || fill == Fill::Normal) test_shape<T>(s, fill);
  std::printf("%-8s done\n", type_name<T>());
}

// vec_exp against std::exp: float over a dense sweep, double at random points.
void test_vec_exp() {
  double worst_ulp = 0;
  for (int64_t k = 0; k < 4000000; ++k) {
    const float x = -104.0f + 194.0f * static_cast<float>(k) / 4000000.0f;
    const double want = std::exp(static_cast<double>(x));
    const float wf = static_cast<float>(want);
    if (std::isinf(wf) || wf < 1.17549435e-38f) continue;
    const double ulp = std::nextafter(wf, INFINITY) - wf;
    worst_ulp = std::max(worst_ulp, std::fabs(mt::vec_exp(x) - want) / ulp);
  }
  std::uniform_real_distribution<double> u(-708.0, 709.0);
  double worst_rel = 0;
  for (int k = 0; k < 2000000; ++k) {
    const double x = u(rng);
    worst_rel = std::max(worst_rel, std::fabs(mt::vec_exp(x) - std::exp(x)) / std::exp(x));
  }
  const bool specials = std::isnan(mt::vec_exp(NAN)) && mt::vec_exp(-INFINITY) == 0.0f &&
                        std::isinf(mt::vec_exp(INFINITY)) && std::isnan(mt::vec_exp(double(NAN))) &&
                        mt::vec_exp(-double(INFINITY)) == 0.0 && mt::vec_exp(-800.0) == 0.0;
  std::printf("vec_exp: float max %.3f ulp, double max rel %.3g, specials %s\n", worst_ulp, worst_rel,
              specials ? "ok" : "WRONG");
  if (worst_ulp > 2.0 || worst_rel > 1e-15 || !specials) ++failures;
}

// The 64-byte pack version (vscalef under AVX-512, integer exponent arithmetic otherwise) lane by
// lane, from the overflow edge down through the subnormal results, plus the special values.
void test_vec_exp_packs() {
  constexpr int P = mt::kPackSize<float>;
  double worst_ulp = 0;
  const int64_t steps = 4000000;
  for (int64_t k = 0; k < steps; k += P) {
    mt::PackF32 x;
    for (int j = 0; j < P; ++j) x[j] = -110.0f + 200.0f * static_cast<float>(k + j) / steps;
    const mt::PackF32 e = mt::vec_exp(x);
    for (int j = 0; j < P; ++j) {
      const double want = std::exp(static_cast<double>(x[j]));
      const float wf = static_cast<float>(want);
      if (std::isinf(wf)) {
        if (!std::isinf(e[j])) worst_ulp = 1e9;
        continue;
      }
      const double ulp = std::nextafter(wf, INFINITY) - wf;  // 2^-149 in the subnormal range
      worst_ulp = std::max(worst_ulp, std::fabs(e[j] - want) / ulp);
    }
  }
  constexpr int PD = mt::kPackSize<double>;
  std::uniform_real_distribution<double> u(-750.0, 712.0);
  double worst_rel = 0, worst_sub = 0;
  for (int k = 0; k < 2000000; k += PD) {
    mt::PackF64 x;
    for (int j = 0; j < PD; ++j) x[j] = u(rng);
    const mt::PackF64 e = mt::vec_exp(x);
    for (int j = 0; j < PD; ++j) {
      const double want = std::exp(x[j]);
      if (std::isinf(want)) {
        if (!std::isinf(e[j])) worst_rel = 1e9;
      } else if (want < 2.2250738585072014e-308) {
        worst_sub = std::max(worst_sub, std::fabs(e[j] - want) / 4.9406564584124654e-324);
      } else {
        worst_rel = std::max(worst_rel, std::fabs(e[j] - want) / want);
      }
    }
  }
  mt::PackF32 sf = {};
  sf[0] = NAN, sf[1] = -INFINITY, sf[2] = INFINITY, sf[3] = -1e30f, sf[4] = 1e30f;
  const mt::PackF32 ef = mt::vec_exp(sf);
  mt::PackF64 sd = {};
  sd[0] = NAN, sd[1] = -INFINITY, sd[2] = INFINITY, sd[3] = -1e300, sd[4] = 1e300;
  const mt::PackF64 ed = mt::vec_exp(sd);
  const bool specials = std::isnan(ef[0]) && ef[1] == 0.0f && std::isinf(ef[2]) && ef[3] == 0.0f &&
                        std::isinf(ef[4]) && ef[5] == 1.0f && std::isnan(ed[0]) && ed[1] == 0.0 &&
                        std::isinf(ed[2]) && ed[3] == 0.0 && std::isinf(ed[4]) && ed[5] == 1.0;
  std::printf("vec_exp packs: float max %.3f ulp (subnormals included), double max rel %.3g, "
              "double subnormal max %.1f ulp, specials %s\n",
              worst_ulp, worst_rel, worst_sub, specials ? "ok" : "WRONG");
  if (worst_ulp > 2.0 || worst_rel > 1e-15 || worst_sub > 1.0 || !specials) ++failures;
}

}  // namespace

int main() {
  test_vec_exp();
  test_vec_exp_packs();
  test_all_shapes<float>();
  test_all_shapes<double>();
  test_all_shapes<mt::Half>();
  test_all_shapes<mt::BFloat16>();
  std::printf(failures ? "FAILED (%d)\n" : "all passed\n", failures);
  return failures ? 1 : 0;
}
