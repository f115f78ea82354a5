#include "core/parallel.h"

#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

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

namespace {

thread_local bool inside_parallel_region = false;

// Workers sleep on a condition variable between regions. One region runs at a time; a region's
// tasks are handed out by a shared counter so fast threads take more of them.
class ThreadPool {
 public:
  explicit ThreadPool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work_loop(); });
  }

  // Returns false (doing nothing) when another thread is using the pool.
  bool try_run(int n_tasks, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      n_tasks_ = n_tasks;
      next_ = 0;
      unfinished_ = n_tasks;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_tasks();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return unfinished_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void work_loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
      }
      run_tasks();
    }
  }

  // Takes tasks until none is left; the thread that finishes the last one wakes the caller.
  void run_tasks() {
    inside_parallel_region = true;
    for (;;) {
      int index;
      const std::function<void(int)>* task;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!task_ || next_ >= n_tasks_) break;
        index = next_++;
        task = task_;
      }
      std::exception_ptr error;
      try {
        (*task)(index);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (error && !error_) error_ = error;
      if (--unfinished_ == 0) done_.notify_all();
    }
    inside_parallel_region = false;
  }

  std::vector<std::thread> threads_;
  std::mutex region_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  int n_tasks_ = 0, next_ = 0, unfinished_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

ThreadPool& pool() {
  // Never destroyed: workers blocked at interpreter exit must not be joined from a static
  // destructor (the process ends them).
  static ThreadPool* instance = new ThreadPool(num_threads() - 1);
  return *instance;
}

}  // namespace

void run_parallel_tasks(int n_tasks, const std::function<void(int)>& task) {
  if (n_tasks <= 1 || inside_parallel_region || !pool().try_run(n_tasks, task)) {
    for (int i = 0; i < n_tasks; ++i) task(i);
  }
}

}  // namespace mt
