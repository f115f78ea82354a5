// CPU parallelism: split [0, n) into contiguous chunks over a fixed number of std::threads.
// Small problems run inline: spawning threads costs ~20 us, more than a small softmax.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace mt {

// Threads used by CPU kernels; MINITENSOR_NUM_THREADS overrides hardware_concurrency.
int num_threads();

// Calls body(begin, end) on disjoint chunks covering [0, n). `cost_per_item` is a rough count of
// elements touched per item, used to keep small work on the calling thread.
template <typename Body>
void parallel_for(int64_t n, int64_t cost_per_item, const Body& body) {
  constexpr int64_t kMinWorkPerThread = 32768;
  const int64_t total = n * std::max<int64_t>(cost_per_item, 1);
  const int64_t threads =
      std::min<int64_t>({static_cast<int64_t>(num_threads()), n, total / kMinWorkPerThread});
  if (threads <= 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> errors(threads);
  workers.reserve(threads - 1);
  for (int64_t t = 1; t < threads; ++t) {
    workers.emplace_back([&, t] {
      try {
        const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
        if (begin < end) body(begin, end);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  try {
    body(int64_t{0}, std::min(n, chunk));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace mt
