// CPU parallelism: split [0, n) into contiguous chunks run by a persistent pool of worker threads
// (spawning threads per call costs tens of microseconds, more than a small softmax). Small
// problems run inline on the calling thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace mt {

// Threads used by CPU kernels; MINITENSOR_NUM_THREADS overrides hardware_concurrency.
int num_threads();

// Runs task(i) for every i in [0, n_tasks), spread over the pool; the caller runs some too and
// returns when all are done. The first exception thrown by a task is rethrown here. Calls from
// inside a task, or while another thread holds the pool, run serially on the caller.
void run_parallel_tasks(int n_tasks, const std::function<void(int)>& task);

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
  run_parallel_tasks(static_cast<int>(threads), [&](int t) {
    const int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) body(begin, end);
  });
}

}  // namespace mt
