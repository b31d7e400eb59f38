// parallel_for: every index once, and the exception rethrown is the one of the lowest index that
// throws, in every run and for every thread count (reports built on it are byte-identical). The
// chunks depend only on n, the thread count and the grain (kernels' bits rely on it), whichever
// way a call runs: on the kept workers, or on threads of its own when nested or concurrent.
// The workers are kept between calls, and a call never runs more threads than it asks for.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/parallel.h"

namespace attnv {
namespace {

TEST(ParallelFor, EveryIndexOnce) {
  for (const int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> seen(1000);
    parallel_for(1000, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
    }, threads);
    for (const auto& s : seen) ASSERT_EQ(s.load(), 1);
  }
}

// Indices 700 and 130 both throw; the later chunk is often done first (it sleeps less), but the
// message is always index 130's.
TEST(ParallelFor, TheLowestThrowingIndexIsRethrownWhateverTheTiming) {
  for (int run = 0; run < 50; ++run)
    for (const int threads : {2, 3, 4}) {
      std::string what;
      try {
        parallel_for(1000, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) {
            if (i == 130) {
              volatile double spin = 0;  // let the higher chunk throw first
              for (int k = 0; k < 20000; ++k) spin = spin + 1;
              throw std::runtime_error("index 130");
            }
            if (i == 700) throw std::runtime_error("index 700");
          }
        }, threads);
      } catch (const std::exception& ex) {
        what = ex.what();
      }
      ASSERT_EQ(what, "index 130") << "run " << run << ", " << threads << " threads";
    }
}

using Chunks = std::set<std::pair<std::int64_t, std::int64_t>>;

// The partition parallel_for promises: min(ceil(n / grain), 8 threads) chunks, chunk c being
// [n c / chunks, n (c + 1) / chunks).
Chunks expected_chunks(std::int64_t n, int threads, std::int64_t grain) {
  const std::int64_t chunks = std::min<std::int64_t>((n + grain - 1) / grain, 8 * std::int64_t{threads});
  Chunks out;
  for (std::int64_t c = 0; c < chunks; ++c) out.insert({n * c / chunks, n * (c + 1) / chunks});
  return out;
}

Chunks chunks_of(std::int64_t n, int threads, std::int64_t grain) {
  std::mutex m;
  Chunks seen;
  parallel_for(n, [&](std::int64_t b, std::int64_t e) {
    std::lock_guard lock(m);
    seen.insert({b, e});
  }, threads, grain);
  return seen;
}

TEST(ParallelFor, ChunksDependOnlyOnTheCountsWhicheverWayTheCallRuns) {
  for (const int threads : {2, 3, 8})
    for (const std::int64_t grain : {1, 7, 100}) {
      const Chunks want = expected_chunks(1000, threads, grain);
      EXPECT_EQ(chunks_of(1000, threads, grain), want) << threads << " threads, grain " << grain;
      // Nested: the outer call holds the workers, so the inner one starts threads of its own.
      std::mutex m;
      std::vector<Chunks> nested;
      parallel_for(2, [&](std::int64_t, std::int64_t) {
        Chunks c = chunks_of(1000, threads, grain);
        std::lock_guard lock(m);
        nested.push_back(std::move(c));
      }, 2);
      ASSERT_EQ(nested.size(), 2u);
      for (const Chunks& c : nested) EXPECT_EQ(c, want) << "nested, " << threads << " threads, grain " << grain;
    }
}

// A body that calls parallel_for (the conformance runner's jobs call kernels that do) finishes
// instead of waiting for the workers its own call holds, and its errors reach the outer call.
TEST(ParallelFor, NestedCallsFinishAndRethrow) {
  for (const int threads : {2, 3}) {
    std::vector<std::atomic<int>> seen(8 * 100);
    parallel_for(8, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i)
        parallel_for(100, [&](std::int64_t ib, std::int64_t ie) {
          for (std::int64_t j = ib; j < ie; ++j) ++seen[static_cast<std::size_t>(i * 100 + j)];
        }, threads);
    }, threads, 1);
    for (const auto& s : seen) ASSERT_EQ(s.load(), 1);
    std::string what;
    try {
      parallel_for(8, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i)
          parallel_for(100, [&](std::int64_t ib, std::int64_t ie) {
            for (std::int64_t j = ib; j < ie; ++j)
              if (i >= 3 && j == 50) throw std::runtime_error("outer " + std::to_string(i));
          }, threads);
      }, threads, 1);
    } catch (const std::exception& ex) {
      what = ex.what();
    }
    EXPECT_EQ(what, "outer 3") << threads << " threads";
  }
}

// Several threads calling at once (one holds the workers, the others start their own): each
// call covers its indices once and rethrows its own lowest failure.
TEST(ParallelFor, ConcurrentCallsFromSeveralThreads) {
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int call = 0; call < 50; ++call) {
        std::vector<std::atomic<int>> seen(300);
        parallel_for(300, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
        }, 2 + t % 2);
        for (const auto& s : seen)
          if (s.load() != 1) ++failures;
        const std::int64_t bad = 10 + 20 * t;
        std::string what;
        try {
          parallel_for(300, [&](std::int64_t b, std::int64_t e) {
            for (std::int64_t i = b; i < e; ++i)
              if (i == bad || i == 250) throw std::runtime_error(std::to_string(i));
          }, 2 + t % 2);
        } catch (const std::exception& ex) {
          what = ex.what();
        }
        if (what != std::to_string(bad)) ++failures;
      }
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(failures.load(), 0);
}

// The threads other than the caller are the same from call to call: what a decode step relies
// on to find its thread's workspace already allocated (core/decode.cpp, thread_workspace).
TEST(ParallelFor, WorkersAreKeptBetweenCalls) {
  thread_local int calls_seen = 0;
  const auto caller = std::this_thread::get_id();
  std::atomic<int> most{0};
  for (int call = 0; call < 20; ++call)
    parallel_for(2, [&](std::int64_t, std::int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // both chunks start at once
      if (std::this_thread::get_id() == caller) return;
      const int n = ++calls_seen;
      for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
      }
    }, 2, 1);
  EXPECT_GE(most.load(), 2) << "no thread but the caller ran chunks of two calls";
}

// `threads` threads run chunks at once, never more: after a call that started 7 workers, a
// 2-thread call still runs 2, and a 3-thread call 3.
TEST(ParallelFor, RunsAsManyThreadsAsAskedAtOnce) {
  auto most_at_once = [](int threads, std::int64_t chunks) {
    std::atomic<int> inside{0}, most{0};
    parallel_for(chunks, [&](std::int64_t, std::int64_t) {
      const int now = ++inside;
      for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
      }
      // Wait (bounded) for as many threads as asked, so that the maximum is reached if allowed.
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (most.load() < threads && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      --inside;
    }, threads, 1);
    return most.load();
  };
  EXPECT_EQ(most_at_once(8, 8), 8);
  EXPECT_EQ(most_at_once(2, 16), 2);
  EXPECT_EQ(most_at_once(3, 3), 3);
}

}  // namespace
}  // namespace attnv
