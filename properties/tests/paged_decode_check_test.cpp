// R21's paged run (decode_checks.cpp, run C) is able to fail: each paged mutant, and a kernel
// that writes a slot of a page it must leave alone, is caught there, by run C, within the first
// cases of R21's own stream; the correct naive kernel passes the same cases; a kernel that does
// not claim paged_kv is never given a paged cache.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"
#include "problem/buffers.h"
#include "problem/cache_pages.h"
#include "properties/checks/checks.h"
#include "properties/conformance/conformance.h"
#include "properties/generators/property_case.h"

namespace attnv::checks::testing {

using namespace generators;  // the cases the checks run on
using namespace kernels;  // the kernels under test (kernels/)
namespace {

constexpr int kCases = 20;

struct Hunt {
  int cases = 0;        // cases until the first failure, 0 if none
  std::string message;  // the first failure's
};

Hunt hunt(Kernel& k) {
  GenOptions opt = conformance::requirement("decode_equals_prefill").options;
  opt.dtypes = {DType::f32};
  CaseStream stream(opt, conformance::kDefaultSeed);
  for (int n = 1; n <= kCases; ++n) {
    const PropertyCase pc = stream.next();
    const PropertyResult r = check_decode_equals_prefill(k, pc.c, pc.layout, pc.seed);
    if (!r.ok) return {n, r.message};
  }
  return {};
}

std::unique_ptr<Kernel> mutant(const std::string& name) {
  for (const Mutant& m : mutant_zoo())
    if (m.name == name) return m.make();
  return nullptr;
}

TEST(PagedRun, TheNaiveKernelPasses) {
  NaiveKernel naive;
  const Hunt h = hunt(naive);
  EXPECT_EQ(h.cases, 0) << h.message;
}

TEST(PagedRun, EachPagedMutantIsCaughtThere) {
  for (const char* name : {"paged_last_page_full", "paged_table_row0"}) {
    const std::unique_ptr<Kernel> k = mutant(name);
    ASSERT_TRUE(k) << name;
    const Hunt h = hunt(*k);
    std::printf("%s: caught at case %d: %s\n", name, h.cases, h.message.substr(0, 300).c_str());
    EXPECT_GT(h.cases, 0) << name << " survived " << kCases << " cases";
    EXPECT_NE(h.message.find("run C (paged cache"), std::string::npos) << h.message;
  }
}

// A paged mutant that does not claim paged_kv gets no paged call (and shows no bug).
TEST(PagedRun, OnlyForKernelsThatClaimIt) {
  NarrowedKernel k(mutant("paged_last_page_full"), [](Capabilities& c) { c.paged_kv = false; });
  const Hunt h = hunt(k);
  EXPECT_EQ(h.cases, 0) << h.message;
}

// Correct attention, but the append also writes the slot after the last new token (a "zero the
// next slot" habit): a byte of a page that must stay untouched.
class WritesNextSlot : public NaiveKernel {
 public:
  void decode(const Problem& p, const DecodeViews& v) override {
    NaiveKernel::decode(p, v);
    if (p.page_size == 0) return;
    const CachePages pages = CachePages::of(p, v);
    const std::int64_t next = v.cache_len[0] + p.shape.Tq;
    if (next < p.shape.Tk) store(v.k_cache, pages.index(0, 0, next, 0), 0.0);
  }
};

TEST(PagedRun, AWriteOutsideTheAppendsIsCaughtThere) {
  WritesNextSlot k;
  const Hunt h = hunt(k);
  EXPECT_GT(h.cases, 0);
  EXPECT_NE(h.message.find("run C (paged cache"), std::string::npos) << h.message;
  EXPECT_NE(h.message.find("untouched, past cache_len + n"), std::string::npos) << h.message;
}

// Correct attention, but the decode skips the output of query head 0's first token (a kernel that
// assumes the caller cleared the buffer): R21 names the element instead of reading attnv's NaN.
class SkipsOneOutputRow : public NaiveKernel {
 public:
  void decode(const Problem& p, const DecodeViews& v) override {
    std::vector<double> held(static_cast<std::size_t>(p.shape.Dv));
    for (std::int64_t d = 0; d < p.shape.Dv; ++d) held[static_cast<std::size_t>(d)] = load(v.out, {0, 0, 0, d});
    NaiveKernel::decode(p, v);
    for (std::int64_t d = 0; d < p.shape.Dv; ++d) store(v.out, {0, 0, 0, d}, held[static_cast<std::size_t>(d)]);
  }
};

TEST(DecodeRun, AnOutputLeftUnwrittenIsNamed) {
  SkipsOneOutputRow k;
  const Hunt h = hunt(k);
  EXPECT_EQ(h.cases, 1) << h.message;
  EXPECT_NE(h.message.find("unwritten (the first: out[b=0,h=0,i=0,d=0])"), std::string::npos) << h.message;
}

}  // namespace
}  // namespace attnv::checks::testing
