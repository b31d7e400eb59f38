// attnv's own error on one input of the search (a HarnessError: its bound or reference could not
// judge, a harness that could not pass the call) stops the search with no verdict on the kernel
// and keeps the input, so `attnv fuzz` can save the case (exit 3) where it used to end as a bare
// "internal error" with nothing to reproduce. Planted here by a kernel whose harness fails on
// cases with more than 3 keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "cli/fuzz_search.h"
#include "cli/reproducer.h"
#include "fuzz/numeric/oracle.h"
#include "io/exchange.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"
#include "problem/kernel_fault.h"

namespace attnv::cli {
namespace {

class HarnessFailsPastThreeKeys final : public props::NarrowedKernel {
 public:
  HarnessFailsPastThreeKeys() : NarrowedKernel(std::make_unique<props::NaiveKernel>(), [](Capabilities&) {}) {}
  void forward(const Problem& p, const KernelViews& v) override {
    if (p.shape.Tk > 3) throw HarnessError("planted harness error: Tk " + std::to_string(p.shape.Tk));
    NarrowedKernel::forward(p, v);
  }
};

TEST(FuzzSearch, AttnvsOwnErrorStopsTheSearchAndKeepsTheInput) {
  SearchOptions opt;
  opt.dtype = DType::f32;
  opt.max_seconds = 60;
  opt.seed = 7;
  const conformance::KernelFactory make = [] { return std::unique_ptr<Kernel>(std::make_unique<HarnessFailsPastThreeKeys>()); };
  const SearchResult r = run_search(make, opt, nullptr);
  ASSERT_TRUE(r.attnv_error.has_value()) << "the search ran " << r.status.execs << " execs without meeting it";
  EXPECT_FALSE(r.finding.has_value()) << "attnv's error is no finding against the kernel";
  EXPECT_NE(r.attnv_error->find("planted harness error"), std::string::npos) << *r.attnv_error;
  HarnessFailsPastThreeKeys probe;
  const Capabilities claims = fuzz::fuzzed_claims(probe, opt.dtype);
  const Case c = fuzz::genome_case(r.genome, claims, opt.oracle.backward && claims.backward);
  EXPECT_GT(c.problem.shape.Tk, 3) << "the input kept is the one that met the error";

  // The case is saved as an exchange folder that names the error, the kernel and its layout.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "attnv_fuzz_search_attnv_error";
  std::filesystem::remove_all(dir);
  write_attnv_error_case(dir, c, fuzz::genome_layout(r.genome, claims), "builtin:naive", "", *r.attnv_error, "text\n");
  const std::vector<io::ExchangeCase> saved = io::read_exchange_cases(dir);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].c.q, c.q);
  EXPECT_EQ(reproducer_field(saved[0], "attnv_error"), r.attnv_error);
  EXPECT_EQ(reproducer_field(saved[0], "kernel"), std::optional<std::string>("builtin:naive"));
  EXPECT_EQ(reproducer_layout(saved[0]), fuzz::genome_layout(r.genome, claims));
  EXPECT_TRUE(std::filesystem::exists(dir / "finding.txt"));
  std::filesystem::remove_all(dir);
}

// The same kernel without the planted error runs clean: the error, not the search, stopped it.
TEST(FuzzSearch, TheSameSearchWithoutTheErrorRunsClean) {
  SearchOptions opt;
  opt.dtype = DType::f32;
  opt.max_seconds = 1;
  opt.seed = 7;
  const conformance::KernelFactory make = [] { return std::unique_ptr<Kernel>(std::make_unique<props::NaiveKernel>()); };
  const SearchResult r = run_search(make, opt, nullptr);
  EXPECT_FALSE(r.attnv_error.has_value());
  EXPECT_FALSE(r.finding.has_value());
  EXPECT_GT(r.status.execs, 0);
}

}  // namespace
}  // namespace attnv::cli
