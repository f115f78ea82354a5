// minitensor from C++, without Python: softmax over dim 1 of a {2, 3, 4, 5} tensor, then a check
// that every (outer, inner) column of the result is a probability distribution that matches a
// straightforward double-precision softmax.
#include <cmath>
#include <cstdio>

#include "ops/softmax/softmax.h"

int main() {
  mt::manual_seed(42);
  const mt::Tensor input = mt::randn({2, 3, 4, 5}, mt::DType::Float32, mt::Device());
  mt::Tensor output;  // undefined: Forward allocates it
  mt::Softmax<float>::Forward(input, output, 1);

  const float* x = input.data<float>();
  const float* y = output.data<float>();
  const int outer = 2, axis = 3, inner = 4 * 5;
  double worst = 0.0;
  for (int o = 0; o < outer; ++o) {
    for (int i = 0; i < inner; ++i) {
      auto at = [&](int a) { return (o * axis + a) * inner + i; };
      double max = -INFINITY, sum = 0.0, total = 0.0;
      for (int a = 0; a < axis; ++a) max = std::fmax(max, x[at(a)]);
      for (int a = 0; a < axis; ++a) sum += std::exp(double(x[at(a)]) - max);
      for (int a = 0; a < axis; ++a) {
        const double expected = std::exp(double(x[at(a)]) - max) / sum;
        worst = std::fmax(worst, std::fabs(expected - y[at(a)]));
        total += y[at(a)];
      }
      worst = std::fmax(worst, std::fabs(total - 1.0));
    }
  }
  const bool ok = worst < 1e-6;
  std::printf("softmax_example: %d rows of shape {2, 3, 4, 5} over dim 1, max error %.3g: %s\n",
              outer * inner, worst, ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
