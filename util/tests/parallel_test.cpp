// parallel_for: every index once, and the exception rethrown is the one of the lowest index that
// throws, in every run and for every thread count (reports built on it are byte-identical).
#include <atomic>
#include <stdexcept>
#include <string>
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

}  // namespace
}  // namespace attnv
