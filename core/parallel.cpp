#include "core/parallel.h"

#include <cstdlib>

namespace mt {

int num_threads() {
  static const int threads = [] {
    if (const char* env = std::getenv("MINITENSOR_NUM_THREADS")) {
      const int n = std::atoi(env);
      if (n > 0) return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int>(hw) : 1;
  }();
  return threads;
}

}  // namespace mt
