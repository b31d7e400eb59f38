// The seed corpus built into attnv is fuzz/corpus/numeric, file for file in name order and byte
// for byte, so an installed attnv (or attnv.fuzz) away from the checkout starts from it too.
#include "fuzz/search/seed_corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace attnv::fuzz {
namespace {

TEST(SeedCorpus, TheBuiltInSeedsAreTheCorpusFolder) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(ATTNV_CORPUS_DIR))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const std::vector<std::vector<std::uint8_t>> seeds = builtin_seed_corpus();
  ASSERT_GT(files.size(), 100u);
  ASSERT_EQ(seeds.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ifstream f(files[i], std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(seeds[i], bytes) << files[i];
  }
}

}  // namespace
}  // namespace attnv::fuzz
