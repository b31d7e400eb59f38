// The numeric target's input format: the custom mutator relies on encode() inverting decode(),
// the differential judge on every byte string decoding to a valid case, and the tile-edge edits on every
// edge length being reachable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "fuzz/numeric/case_genome.h"
#include "problem/features/registry.h"
#include "problem/validate.h"
#include "kernels/naive_kernel.h"
#include "reference/fast/fast.h"

namespace attnv::fuzz {
namespace {

Genome random_genome(std::mt19937& rng) {
  Genome g;
  for (auto& b : g.header) b = static_cast<std::uint8_t>(rng());
  g.header[kB] &= static_cast<std::uint8_t>(~kDecodeBit);  // a forward (decode prompts: decode_fuzz_test.cpp)
  const std::size_t n = std::min<std::size_t>(value_count(g), rng() % 64);
  for (std::size_t i = 0; i < n; ++i) g.codes.push_back(static_cast<std::uint16_t>(rng()));
  return g;
}

TEST(Genome, EncodeInvertsDecode) {
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    const Genome g = random_genome(rng);
    const std::vector<std::uint8_t> bytes = encode(g);
    const Genome back = decode(bytes.data(), bytes.size());
    ASSERT_EQ(back.header, g.header) << "iteration " << i;
    ASSERT_EQ(back.codes, g.codes) << "iteration " << i;
  }
}

TEST(Genome, EveryByteStringIsAValidCase) {
  const Capabilities caps = kernels::NaiveKernel().capabilities();
  std::mt19937 rng(2);
  for (int i = 0; i < 300; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    const Genome g = decode(bytes.data(), bytes.size());
    const Case c = to_case(g, caps);
    const auto errs = check_case(c);
    ASSERT_TRUE(errs.empty()) << errs.front();
  }
}

TEST(Genome, CapabilitiesNotClaimedAreDropped) {
  Genome g;
  g.header[kFlags] = 0xff;
  g.header[kHkv] = 1;
  g.header[kGroup] = 1;
  Capabilities caps;
  caps.dtypes = {DType::f32};
  const Case c = to_case(g, caps);
  EXPECT_FALSE(c.problem.causal || c.problem.has_mask || c.problem.has_bias || c.problem.has_kv_len ||
               c.problem.softcap || c.problem.scale || c.problem.window.bounded());
  EXPECT_EQ(c.problem.shape.Hq, c.problem.shape.Hkv);
}

// Sinks are drawn for a kernel that claims them (bit 2 of the dtype byte), of either sign and
// up to dominating the row, and never for one that does not.
// Issue 15: the genome is held to the claim table. Every claim a problem can use is reachable
// from some byte string (a new row the genome forgets fails here, by name), and to_case fits
// every case to the kernel's claims through the table's drops: a claim not made, or withdrawn in
// the case's dtype, is never used.
TEST(Genome, EveryProblemFeatureIsReachableAndFittedAwayWhenNotClaimed) {
  Capabilities all;
  all.dtypes = {DType::f32, DType::f16, DType::bf16, DType::f64};
  for (const ClaimInfo& row : kClaims) all.*row.member = true;
  std::mt19937 rng(15);
  std::vector<Genome> genomes;
  for (int i = 0; i < 1500; ++i) genomes.push_back(random_genome(rng));
  for (const ClaimInfo& row : kClaims) {
    if (!row.used_by) continue;
    // Paged KV caches are decode problems; the numeric target calls forward only.
    if (row.key == "paged_kv") continue;
    int used = 0;
    for (const Genome& g : genomes) used += !row.used_by(to_case(g, all).problem).empty();
    EXPECT_GT(used, 0) << "no genome reaches '" << row.key << "'";
    Capabilities without = all, withdrawn = all;
    without.*row.member = false;
    for (DType d : all.dtypes) withdrawn.withdrawn[d] = {std::string(row.key)};
    for (const Capabilities& caps : {without, withdrawn})
      for (std::size_t i = 0; i < genomes.size(); i += 3) {
        const Case c = to_case(genomes[i], caps);
        ASSERT_EQ(caps.unsupported(c.problem), "") << row.key << ": " << describe(c.problem);
        const auto errs = check_case(c);
        ASSERT_TRUE(errs.empty()) << row.key << ": " << errs.front();
      }
  }
}

TEST(Genome, SinksAreDrawnOnlyWhereClaimed) {
  Capabilities caps = kernels::NaiveKernel().capabilities();
  int with = 0, negative = 0, dominant = 0;
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    Genome g = random_genome(rng);
    const Case c = to_case(g, caps);
    EXPECT_EQ(c.problem.has_sinks, (g.header[kDType] & kSinksBit) != 0);
    ASSERT_TRUE(check_case(c).empty()) << check_case(c).front();
    if (!c.problem.has_sinks) continue;
    ++with;
    for (double z : c.sinks) {
      EXPECT_LE(std::fabs(z), 30.0);
      negative += z < 0;
      dominant += z > 20;
    }
  }
  EXPECT_GT(with, 60);
  EXPECT_GT(negative, 0);
  EXPECT_GT(dominant, 0);
  caps.sinks = false;
  Genome g;
  g.header[kDType] = 0xff;
  EXPECT_FALSE(to_case(g, caps).problem.has_sinks);
}

// ALiBi and per-batch/per-head planes are drawn for a kernel that claims them (bits of the batch
// and KV-head bytes), with planes that differ, and never for one that does not.
TEST(Genome, AlibiAndPlanesAreDrawnOnlyWhereClaimed) {
  Capabilities caps = kernels::NaiveKernel().capabilities();
  ASSERT_TRUE(caps.alibi && caps.mask_bias_per_batch_head);
  int alibi = 0, mask_planes = 0, bias_planes = 0, differing = 0;
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    const Genome g = random_genome(rng);
    const Case c = to_case(g, caps);
    ASSERT_TRUE(check_case(c).empty()) << check_case(c).front();
    EXPECT_EQ(c.problem.has_alibi, (g.header[kHkv] & kAlibiBit) != 0);
    alibi += c.problem.has_alibi;
    mask_planes += c.problem.has_mask && c.problem.mask_dims.any();
    if (c.problem.has_bias && c.problem.bias_dims.any()) {
      ++bias_planes;
      const std::size_t plane = static_cast<std::size_t>(c.problem.shape.Tq * c.problem.shape.Tk);
      if (c.bias.size() > plane && plane > 1 &&
          !std::equal(c.bias.begin(), c.bias.begin() + static_cast<std::ptrdiff_t>(plane), c.bias.begin() + static_cast<std::ptrdiff_t>(plane)))
        ++differing;
    }
  }
  EXPECT_GT(alibi, 50);
  EXPECT_GT(mask_planes, 20);
  EXPECT_GT(bias_planes, 20);
  EXPECT_GT(differing, bias_planes / 2);
  caps.alibi = caps.mask_bias_per_batch_head = false;
  Genome g;
  g.header[kHkv] = 0xff;
  g.header[kB] = 0xff;
  g.header[kFlags] = 0xff;
  const Case c = to_case(g, caps);
  EXPECT_FALSE(c.problem.has_alibi || c.problem.mask_dims.any() || c.problem.bias_dims.any());
}

// Packed sequences are drawn for a kernel that claims them (bit 6 of the KV-head byte): one
// batch entry, no kv_len, mask or bias, 1-4 sequences, empty ones among them; never otherwise.
TEST(Genome, PackedSequencesAreDrawnOnlyWhereClaimed) {
  Capabilities caps = kernels::NaiveKernel().capabilities();
  ASSERT_TRUE(caps.varlen);
  int packed = 0, several = 0, empty = 0, with_alibi = 0;
  std::mt19937 rng(17);
  for (int i = 0; i < 300; ++i) {
    const Genome g = random_genome(rng);
    const Case c = to_case(g, caps);
    ASSERT_TRUE(check_case(c).empty()) << check_case(c).front();
    const Problem& p = c.problem;
    EXPECT_EQ(p.varlen_sequences > 0, (g.header[kHkv] & kVarlenBit) != 0);
    if (p.varlen_sequences == 0) continue;
    ++packed;
    EXPECT_EQ(p.shape.B, 1);
    EXPECT_FALSE(p.has_mask || p.has_bias);
    EXPECT_EQ(p.has_kv_len, (g.header[kHkv] & kSeqUsedBit) != 0);  // per sequence (SeqUsed... below)
    EXPECT_LE(p.varlen_sequences, kMaxSequences);
    several += p.varlen_sequences > 1;
    with_alibi += p.has_alibi;
    for (std::size_t s = 0; s + 1 < c.cu_seqlens_k.size(); ++s)
      empty += c.cu_seqlens_q[s] == c.cu_seqlens_q[s + 1] || c.cu_seqlens_k[s] == c.cu_seqlens_k[s + 1];
  }
  EXPECT_GT(packed, 100);
  EXPECT_GT(several, packed / 2);
  EXPECT_GT(empty, 0);
  EXPECT_GT(with_alibi, 20);
  caps.varlen = false;
  Genome g;
  g.header[kHkv] = 0xff;
  EXPECT_EQ(to_case(g, caps).problem.varlen_sequences, 0);
}

// Per-sequence key lengths (kv_len [S], bit 7 of header[kHkv] with bit 6): drawn only for a
// kernel claiming varlen_kv_len (and kv_len), each length within its sequence's keys, the edges
// 0 and all of them reached; poison goes only into the keys a sequence leaves unused.
TEST(Genome, PerSequenceKeyLengthsAreDrawnOnlyWhereClaimed) {
  Capabilities caps = kernels::NaiveKernel().capabilities();
  ASSERT_TRUE(caps.varlen_kv_len);
  int drawn = 0, none = 0, all = 0, some = 0;
  std::mt19937 rng(23);
  for (int i = 0; i < 400; ++i) {
    Genome g = random_genome(rng);
    g.header[kHkv] |= kVarlenBit;
    const Case c = to_case(g, caps);
    ASSERT_TRUE(check_case(c).empty()) << check_case(c).front();
    EXPECT_EQ(c.problem.has_kv_len, (g.header[kHkv] & kSeqUsedBit) != 0);
    if (!c.problem.has_kv_len) continue;
    ++drawn;
    ASSERT_EQ(c.kv_len.size(), static_cast<std::size_t>(c.problem.varlen_sequences));
    for (std::size_t s = 0; s < c.kv_len.size(); ++s) {
      const std::int64_t len = c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s];
      if (len == 0) continue;
      none += c.kv_len[s] == 0;
      all += c.kv_len[s] == len;
      some += c.kv_len[s] > 0 && c.kv_len[s] < len;
    }
  }
  EXPECT_GT(drawn, 100);
  EXPECT_GT(none, 20);
  EXPECT_GT(all, 20);
  EXPECT_GT(some, 20);

  Genome g;
  g.header[kHkv] = kVarlenBit | kSeqUsedBit;
  g.header[kTk] = 30;
  g.header[kKvLen0] = 2;  // S = 3
  g.header[kSigns] = 1 << kPoisonShift;
  const Case c = to_case(g, caps);
  ASSERT_TRUE(c.problem.has_kv_len);
  int poisoned = 0;
  for (std::size_t s = 0; s < c.kv_len.size(); ++s)
    for (std::int64_t j = c.cu_seqlens_k[s]; j < c.cu_seqlens_k[s + 1]; ++j) {
      EXPECT_EQ(std::isnan(c.k[c.ki(0, 0, j, 0)]), j >= c.cu_seqlens_k[s] + c.kv_len[s]) << s << ' ' << j;
      poisoned += std::isnan(c.k[c.ki(0, 0, j, 0)]);
    }
  EXPECT_GT(poisoned, 0);
  EXPECT_NO_THROW(reference::fast_forward(c, reference::FastOptions{.threads = 1}));  // unused keys are never read

  caps.varlen_kv_len = false;  // claims varlen and kv_len, not the two together
  const Case without = to_case(g, caps);
  EXPECT_GT(without.problem.varlen_sequences, 0);
  EXPECT_FALSE(without.problem.has_kv_len);
}

TEST(Genome, TileEdgeLengthsAreReachable) {
  for (std::int64_t n : {1, 15, 16, 17, 40, 47, 48, 49, 63, 64, 65, 127, 128, 129, 191, 192, 193, 200})
    EXPECT_EQ(length_of(code_for_length(n, kSmallT, kMaxT), kSmallT, kMaxT), n);
  for (std::int64_t n = 1; n <= kMaxD; ++n) EXPECT_EQ(length_of(code_for_length(n, kSmallD, kMaxD), kSmallD, kMaxD), n);
}

TEST(Genome, PoisonFillsOnlyKeysKvLenHides) {
  Genome g;
  g.header[kFlags] = kKvLen;
  g.header[kTk] = 8;      // Tk = 9
  g.header[kKvLen0] = 5;  // keys 5..8 hidden
  g.header[kSigns] = 1 << kPoisonShift;
  const Case c = to_case(g, kernels::NaiveKernel().capabilities());
  ASSERT_EQ(c.problem.shape.Tk, 9);
  for (std::int64_t j = 0; j < 9; ++j) EXPECT_EQ(std::isnan(c.k[c.ki(0, 0, j, 0)]), j >= 5) << j;
  EXPECT_NO_THROW(reference::fast_forward(c, reference::FastOptions{.threads = 1}));  // hidden values are never read
}

}  // namespace
}  // namespace attnv::fuzz
