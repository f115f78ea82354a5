// The library defines mt::num_threads() in core/parallel.cpp; the standalone test, benchmark and
// ctypes library define it here with the same contract (MINITENSOR_NUM_THREADS overrides).
#include <cstdlib>
#include <thread>

#include "core/parallel.h"

namespace mt {
int num_threads() {
  static const int n = [] {
    if (const char* env = std::getenv("MINITENSOR_NUM_THREADS")) {
      const int v = std::atoi(env);
      if (v > 0) return v;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int>(hw) : 1;
  }();
  return n;
}
}  // namespace mt
