#pragma once
// A minimal parallel-for on std::thread: split [0, n) into contiguous chunks, pulled in order by
// the calling thread and up to threads - 1 workers. Deterministic partition (chunk boundaries
// depend only on n, the thread count and the grain), and the exception of the lowest chunk that
// throws is rethrown on the calling thread (the same one in every run, whatever the timing).
// The workers are started on first need and kept for later calls (thread_local state such as
// the decode's workspace survives between calls), polling for the next call for 50 us before
// they sleep (a decode loop's next call comes sooner than a sleeping thread wakes); a call made
// while another holds them (a nested call from inside a body, or one from another thread) starts
// threads of its own, so calls never wait for each other. The workers are joined at exit.
#include <cstdint>
#include <functional>

namespace attnv {

// ATTNV_THREADS if set (>= 1), else std::thread::hardware_concurrency().
int default_threads();

// Calls body(begin, end) on disjoint chunks covering [0, n). threads <= 0: default_threads().
// Chunks hold at least `grain` indices; with one chunk the body runs on the calling thread.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& body,
                  int threads = 0, std::int64_t grain = 1);

}  // namespace attnv
