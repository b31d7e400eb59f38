#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attnv {

int default_threads() {
  if (const char* env = std::getenv("ATTNV_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body,
                  int threads, std::int64_t grain) {
  if (n <= 0) return;
  if (threads <= 0) threads = default_threads();
  grain = std::max<std::int64_t>(grain, 1);
  // More chunks than threads so uneven rows (causal masks) balance; workers pull chunks.
  const std::int64_t max_chunks = (n + grain - 1) / grain;
  const std::int64_t chunks = std::min<std::int64_t>(max_chunks, std::int64_t{threads} * 8);
  if (threads == 1 || chunks == 1) {
    body(0, n);
    return;
  }
  // The exception rethrown is the one of the lowest chunk that throws, whatever the timing:
  // chunks are handed out in increasing order and a chunk below a failed one always runs, so a
  // message naming the first bad element is the same in every run (a report is promised
  // byte-identical per seed). Chunks above a failed one are not started.
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::int64_t error_chunk = chunks;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::int64_t c; (c = next.fetch_add(1)) < chunks;) {
      {
        std::lock_guard lock(error_mutex);
        if (c > error_chunk) continue;
      }
      const std::int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      try {
        body(begin, end);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (c < error_chunk) {
          error_chunk = c;
          error = std::current_exception();
        }
      }
    }
  };
  const int workers = static_cast<int>(std::min<std::int64_t>(threads, chunks));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  for (int t = 1; t < workers; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace attnv
