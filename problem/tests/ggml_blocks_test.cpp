// ggml's q8_0 and q4_0 blocks (problem/ggml_blocks.h): every element of a table of blocks decoded
// as the formats' definitions say (tests/ggml_blocks_table.py computes it apart, with exact
// fractions and its own f16 decoding), and ggml's quantizers held to the allowance derived in
// ggml_blocks.cpp, which is wider than half a quantum of the stored scale.
#include "problem/ggml_blocks.h"

#include "problem/error.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>


namespace attnv {
namespace {

struct BlockRow {
  GgmlBlock format;
  std::vector<std::uint8_t> block;
  std::vector<double> values;
};

std::vector<BlockRow> read_blocks() {
  std::ifstream in(ATTNV_GGML_BLOCKS_TABLE);
  std::vector<BlockRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string name, hex, v;
    s >> name >> hex;
    BlockRow r{name == "q8_0" ? GgmlBlock::q8_0 : GgmlBlock::q4_0, {}, {}};
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) r.block.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    while (s >> v) r.values.push_back(std::strtod(v.c_str(), nullptr));
    rows.push_back(std::move(r));
  }
  return rows;
}

TEST(GgmlBlocks, EveryElementDecodesAsTheDefinitionsTableSays) {
  const std::vector<BlockRow> rows = read_blocks();
  ASSERT_EQ(rows.size(), 24u) << ATTNV_GGML_BLOCKS_TABLE;
  for (const BlockRow& r : rows) {
    ASSERT_EQ(r.block.size(), static_cast<std::size_t>(ggml_block_bytes(r.format)));
    ASSERT_EQ(r.values.size(), 32u);
    for (int j = 0; j < kGgmlBlockElements; ++j)
      EXPECT_EQ(ggml_block_value(r.format, r.block, j), r.values[static_cast<std::size_t>(j)])
          << ggml_block_name(r.format) << " element " << j;
  }
}

// The table tells a layout bug apart: q4_0 read with element j's nibbles interleaved (2j, 2j + 1
// in one byte, the other common packing) disagrees on most of its elements.
TEST(GgmlBlocks, TheTableCatchesInterleavedNibbles) {
  int wrong = 0, total = 0;
  for (const BlockRow& r : read_blocks()) {
    if (r.format != GgmlBlock::q4_0) continue;
    for (int j = 0; j < kGgmlBlockElements; ++j) {
      const std::uint8_t byte = r.block[static_cast<std::size_t>(2 + j / 2)];
      const double interleaved = ggml_block_scale(r.block) * ((j % 2 == 0 ? byte & 15 : byte >> 4) - 8);
      wrong += interleaved != r.values[static_cast<std::size_t>(j)];
      ++total;
    }
  }
  EXPECT_GT(wrong, total / 2);
}

// ggml's quantizers on random blocks (normal values, some blocks with a lone large element): every
// value within ggml_allowance of d * code. Half a quantum of the stored d alone is not enough:
// the codes are rounded with the float d, then d is stored as an f16 (docs/quantized.md).
TEST(GgmlBlocks, QuantizersStayWithinTheDerivedAllowanceNotHalfAQuantum) {
  std::mt19937_64 rng(41);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-12, 8), element(0, 31);
  for (GgmlBlock f : {GgmlBlock::q8_0, GgmlBlock::q4_0}) {
    int past_half = 0, blocks = 0;
    double worst = 0;
    for (int n = 0; n < 2000; ++n) {
      std::array<double, kGgmlBlockElements> x{};
      const int e = n % 3 == 0 ? exponent(rng) : 0;
      for (double& v : x) v = std::ldexp(normal(rng), e);
      if (n % 5 == 0) x[static_cast<std::size_t>(element(rng))] *= 40;
      const std::vector<std::uint8_t> b = ggml_quantize_block(f, x);
      const double d = ggml_block_scale(b);
      bool past = false;
      for (int j = 0; j < kGgmlBlockElements; ++j) {
        const double err = std::fabs(x[static_cast<std::size_t>(j)] - ggml_block_value(f, b, j));
        ASSERT_LE(err, ggml_allowance(f, d)) << ggml_block_name(f) << " block " << n << " element " << j;
        worst = std::max(worst, err / std::fabs(d));
        past = past || err > std::fabs(d) / 2;
      }
      past_half += past;
      ++blocks;
    }
    std::printf("[ measured ] %s: %d of %d ggml-quantized blocks have a value past half a quantum of the stored scale; worst %.4f quanta\n",
                std::string(ggml_block_name(f)).c_str(), past_half, blocks, worst);
    EXPECT_GT(past_half, 0) << "the half-quantum rule would have held: the allowance is then looser than needed";
  }
}

TEST(GgmlBlocks, ANonFiniteElementIsRefusedByName) {
  std::array<double, kGgmlBlockElements> x{};
  x[5] = 1e39;  // finite in double, inf as ggml's float
  try {
    (void)ggml_quantize_block(GgmlBlock::q8_0, x);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("element 5"), std::string::npos) << e.what();
  }
}

TEST(GgmlBlocks, AZeroBlockIsZeroWithScaleZero) {
  const std::array<double, kGgmlBlockElements> zero{};
  for (GgmlBlock f : {GgmlBlock::q8_0, GgmlBlock::q4_0}) {
    const std::vector<std::uint8_t> b = ggml_quantize_block(f, zero);
    EXPECT_EQ(ggml_block_scale(b), 0.0);
    for (int j = 0; j < kGgmlBlockElements; ++j) EXPECT_EQ(ggml_block_value(f, b, j), 0.0);
  }
}

}  // namespace
}  // namespace attnv
