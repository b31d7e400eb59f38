// End to end: `attnv reference` on exchange folders written by the io library; its ref_*.npy
// must be the fast reference's doubles bit for bit and its bound_*.npy the bound library's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <unistd.h>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/tests/run_attnv.h"
#include "gen/families.h"
#include "io/exchange.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::fresh_dir;
using testing::run_attnv;

std::vector<Case> sample_cases() {
  std::vector<Case> cases;
  cases.push_back(gen::make_case(gen::Family::random, 3, {DType::f16, gen::Size::small, true}));
  cases.push_back(gen::make_case(gen::Family::fully_masked, 4, {DType::bf16, gen::Size::small, false}));
  // No masks: every row of this one has visible keys (the bad-input test relies on it).
  cases.push_back(gen::make_case(gen::Family::large_logits, 5, {DType::f32, gen::Size::small, true, false}));
  return cases;
}

void expect_bitwise(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t e = 0; e < got.size(); ++e)
    if (!(got[e] == want[e] || (std::isnan(got[e]) && std::isnan(want[e]))))
      FAIL() << what << "[" << e << "]: " << got[e] << " != " << want[e];
}

TEST(ReferenceCommand, WritesTheFastReferenceAndTheBoundIntoEachCase) {
  const fs::path dir = fresh_dir("inplace");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "reference.json"));
  for (const Case& c : cases) {
    const fs::path folder = io::case_dir(dir, c);
    const Outputs ref = io::read_outputs(folder, "ref_", c);
    const Outputs bnd = io::read_outputs(folder, "bound_", c);
    const Outputs exact = c.has_dout() ? ref::fast_backward(c) : ref::fast_forward(c);
    const PrecisionModel m = PrecisionModel::natural(c.problem.dtype);
    const bound::Bounds b = c.has_dout() ? bound::backward_bound(c, exact, m) : bound::forward_bound(c, exact, m);
    expect_bitwise(ref.out, exact.out, c.id + " ref_out");
    expect_bitwise(ref.lse, exact.lse, c.id + " ref_lse");
    expect_bitwise(ref.dq, exact.dq, c.id + " ref_dq");
    expect_bitwise(ref.dk, exact.dk, c.id + " ref_dk");
    expect_bitwise(ref.dv, exact.dv, c.id + " ref_dv");
    expect_bitwise(bnd.out, b.out, c.id + " bound_out");
    expect_bitwise(bnd.dk, b.dk, c.id + " bound_dk");
  }
  fs::remove_all(dir);
}

TEST(ReferenceCommand, OutFolderIsACompleteExchangeAndTheInputIsUntouched) {
  const fs::path dir = fresh_dir("in"), out = fresh_dir("out");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  const CommandResult r = run_attnv("reference --in " + dir.string() + " --out " + out.string() +
                              " --block 64 --p-dtype f16 --threads 1", dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "reference.json"));
  EXPECT_FALSE(fs::exists(io::case_dir(dir, cases[0]) / "ref_out.npy"));
  const std::vector<Case> copied = io::read_exchange(out);
  ASSERT_EQ(copied.size(), cases.size());
  // The model flags change the bound: P rounded to f16 before P.V loosens it.
  const Outputs exact = ref::fast_backward(cases[2]);
  PrecisionModel m = PrecisionModel::natural(DType::f32, 64);
  m.p_dtype = DType::f16;
  expect_bitwise(io::read_outputs(io::case_dir(out, cases[2]), "bound_", cases[2]).out,
                 bound::backward_bound(cases[2], exact, m).out, "bound_out with flags");
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST(ReferenceCommand, BadInputExitsTwoAndWritesNothing) {
  const fs::path dir = fresh_dir("bad");
  std::vector<Case> cases = sample_cases();
  // A NaN in a visible query is only found while computing the third case: nothing may be
  // written for the first one either.
  cases[2].q[0] = std::nan("");
  io::write_exchange(dir, cases);
  CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("non-finite q[b=0,h=0,t=0,d=0] = nan"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(io::case_dir(dir, cases[0]) / "ref_out.npy"));
  EXPECT_FALSE(fs::exists(dir / "reference.json"));
  // A tensor file of the wrong shape: named in the message.
  fs::remove_all(dir);
  io::write_exchange(dir, sample_cases());
  fs::copy_file(io::case_dir(dir, cases[1]) / "q.npy", io::case_dir(dir, cases[0]) / "q.npy",
                fs::copy_options::overwrite_existing);
  r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("q.npy"), std::string::npos) << r.output;
  r = run_attnv("reference --in " + (dir / "missing").string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
