// The file route in process: export a small suite, answer it with in-process kernels (correct,
// and with a planted bug), check; missing and malformed answers; the call hash; the claims file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "cases/call_hash.h"
#include "cases/cases.h"
#include "io/exchange.h"
#include "io/npy.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "properties/kernels/mutants.h"
#include "properties/kernels/naive_kernel.h"

namespace attnv::cases {
namespace {

namespace fs = std::filesystem;

Case small_case() {
  Problem p;
  p.shape = Shape{1, 2, 1, 3, 4, 2, 2};
  Case c = make_zero_case(p);
  for (std::size_t n = 0; n < c.q.size(); ++n) c.q[n] = 0.25 * static_cast<double>(n);
  for (std::size_t n = 0; n < c.k.size(); ++n) c.k[n] = -0.5 * static_cast<double>(n);
  for (std::size_t n = 0; n < c.v.size(); ++n) c.v[n] = static_cast<double>(n);
  return c;
}

TEST(CallHash, SameInputsSameHashAnyChangeDiffers) {
  const Case a = small_case();
  Case b = a;
  b.id = "another name";
  EXPECT_EQ(call_hash(a), call_hash(b));  // the id is not an input
  Case v = a;
  v.v[3] = std::nextafter(v.v[3], 100.0);
  Case causal = a;
  causal.problem.causal = true;
  Case scaled = a;
  scaled.problem.scale = 0.5;
  Case bwd = make_zero_case(a.problem, true);
  bwd.q = a.q, bwd.k = a.k, bwd.v = a.v;
  for (const Case* c : {&v, &causal, &scaled, &bwd}) EXPECT_NE(call_hash(a), call_hash(*c));
  Case z = a, nz = a;  // -0 and +0 are different inputs
  z.q[0] = 0.0;
  nz.q[0] = -0.0;
  EXPECT_NE(call_hash(z), call_hash(nz));
  Case n1 = a, n2 = a;  // NaN payloads are not
  n1.k[1] = std::numeric_limits<double>::quiet_NaN();
  n2.k[1] = -std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(call_hash(n1), call_hash(n2));
  EXPECT_EQ(hash_hex(0x12ab), "00000000000012ab");
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnv_cases_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  return d;
}

TEST(Claims, FileOverridesDefaultsStrictly) {
  const fs::path d = scratch("claims");
  fs::create_directories(d);
  auto write = [&](const std::string& text) {
    std::ofstream(d / "c.json") << text;
    return d / "c.json";
  };
  const std::string every = R"("gqa": true, "causal_top_left": true, "causal_bottom_right": true, "window": true,
      "mask": true, "bias": true, "kv_len": true, "custom_scale": true, "lse": true)";
  const Claims c = read_claims(write(R"({"backward": true, "softcap": false, )" + every + R"(,
      "precision": {"bf16": {"p_dtype": "bf16", "block": 64}}})"), {DType::bf16});
  EXPECT_TRUE(c.caps.backward);
  EXPECT_FALSE(c.caps.softcap);
  EXPECT_TRUE(c.caps.gqa);
  EXPECT_EQ(c.model(DType::bf16).p_dtype, DType::bf16);
  EXPECT_EQ(c.model(DType::bf16).block, 64);
  const Claims back = claims_from_json(claims_to_json(c), "x", {});
  EXPECT_EQ(back.caps.dtypes, c.caps.dtypes);
  EXPECT_EQ(back.model(DType::bf16), c.model(DType::bf16));
  EXPECT_TRUE(back.caps.backward);
  // A capability left out is an error naming it (it used to mean "claimed"), with the whole
  // file at the defaults to copy.
  try {
    read_claims(write(R"({"backward": true, "softcap": false})"), {DType::f32});
    ADD_FAILURE() << "a claims file without every capability was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing: gqa, causal_top_left, causal_bottom_right, window, mask, bias, kv_len, "
                                         "custom_scale, lse"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("\"softcap\":false"), std::string::npos) << e.what();
  }
  try {
    read_claims(write(R"({"casual": true})"), {DType::f32});
    ADD_FAILURE() << "a misspelt key was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"casual\": unknown key"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_claims(write(R"({"strided": true})"), {DType::f32}), InputError);
  EXPECT_THROW(read_claims(write(R"({"decode": true})"), {DType::f32}), InputError);
  EXPECT_FALSE(read_claims(write(R"({"decode": false, "backward": false, "softcap": true, )" + every + "}"), {DType::f32}).caps.decode);
  EXPECT_THROW(read_claims(write(R"({"precision": {"f32": {"accum": "f8"}}})"), {DType::f32}), InputError);
  fs::remove_all(d);
}

// Answers every case of an export with `k` (forward, and backward where dout exists).
void answer(const fs::path& dir, Kernel& k) {
  for (const io::ExchangeCase& ec : io::read_exchange_cases(dir)) {
    const Outputs o = ec.c.has_dout() ? run_backward(k, ec.c) : run_forward(k, ec.c);
    io::write_outputs(io::case_dir(dir, ec), "", ec.c, o, ec.c.problem.dtype);
  }
}

Suite small_suite() {
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R18", "R11"};  // score_rank: 25 small own-built cases; R11: not claimed through files
  s.claims = default_claims(s.dtypes);
  return s;
}

std::string all_findings(const conformance::ConformanceReport& r) {
  std::string s;
  for (const auto& x : r.results) s += conformance::describe(x) + "\n";
  return s;
}

TEST(ExportCheck, CorrectAnswersPassPlantedBugFailsMissingAnswerIsAFinding) {
  const fs::path dir = scratch("export");
  const ExportSummary sum = export_cases(dir, small_suite());
  EXPECT_EQ(sum.cases, 25u);  // one own-built case per R18 draw; R11 makes no call
  EXPECT_TRUE(sum.answer_findings.empty());
  ASSERT_TRUE(fs::exists(dir / kExportFile));

  props::NaiveKernel naive;
  answer(dir, naive);
  conformance::ConformanceReport rep = check(dir);
  ASSERT_EQ(rep.results.size(), 2u);
  EXPECT_TRUE(rep.ok()) << all_findings(rep);
  EXPECT_EQ(rep.results[0].id, "R11");
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::not_claimed);
  EXPECT_EQ(rep.results[1].verdict, conformance::Verdict::pass);
  EXPECT_EQ(rep.results[1].cases_checked, 25);

  for (const props::Mutant& m : props::mutant_zoo())
    if (m.name == "spurious_alibi") {
      const auto bad = m.make();
      answer(dir, *bad);
    }
  rep = check(dir);
  EXPECT_FALSE(rep.ok());
  EXPECT_EQ(rep.results[1].verdict, conformance::Verdict::fail) << all_findings(rep);

  answer(dir, naive);
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(dir);
  fs::remove(io::case_dir(dir, cases[0]) / "out.npy");
  rep = check(dir);
  ASSERT_EQ(rep.results[1].verdict, conformance::Verdict::fail);
  const std::string msg = rep.results[1].findings.at(0).message;
  EXPECT_NE(msg.find("no answer for case " + cases[0].c.id), std::string::npos) << msg;
  EXPECT_NE(msg.find("out.npy missing"), std::string::npos) << msg;

  // A wrong shape names the file; an answer not in the storage dtype is refused, not rounded.
  const fs::path out = io::case_dir(dir, cases[0]) / "out.npy";
  const std::vector<std::int64_t> shape{1, 1};
  const std::vector<double> zero{0.0};
  io::write_npy(out, shape, io::NpyType::f64, zero);
  rep = check(dir);
  EXPECT_NE(rep.results[1].findings.at(0).message.find("out.npy"), std::string::npos) << all_findings(rep);
  Outputs o = run_forward(naive, cases[0].c);
  o.out[0] += 0x1p-40;  // not an f32
  io::write_outputs(io::case_dir(dir, cases[0]), "", cases[0].c, o, DType::f64);
  rep = check(dir);
  EXPECT_NE(rep.results[1].findings.at(0).message.find("not representable in f32"), std::string::npos)
      << all_findings(rep);
  fs::remove_all(dir);
}

// Through files, R13 and R14 hold by construction (answers read back cannot differ or write an
// input): they are NOT EXERCISED, never PASS. Other requirements keep their verdicts.
TEST(ExportCheck, DeterminismAndInputsUnchangedAreNotExercisedThroughFiles) {
  conformance::RequirementResult r13;
  r13.id = "R13";
  r13.property = "determinism";
  r13.verdict = conformance::Verdict::pass;
  r13.cases_checked = r13.cases_run = 100;
  mark_unobservable_through_files(r13);
  EXPECT_EQ(r13.verdict, conformance::Verdict::not_exercised);
  EXPECT_EQ(r13.cases_checked, 0);
  EXPECT_NE(r13.note.find("run the program twice"), std::string::npos);
  conformance::RequirementResult r14 = r13;
  r14.id = "R14";
  r14.property = "inputs_unchanged";
  r14.verdict = conformance::Verdict::pass;
  mark_unobservable_through_files(r14);
  EXPECT_EQ(r14.verdict, conformance::Verdict::not_exercised);
  conformance::RequirementResult r1 = r13;
  r1.id = "R1";
  r1.property = "matches_reference";
  r1.verdict = conformance::Verdict::pass;
  mark_unobservable_through_files(r1);
  EXPECT_EQ(r1.verdict, conformance::Verdict::pass);
  conformance::RequirementResult failed = r13;
  failed.verdict = conformance::Verdict::fail;
  mark_unobservable_through_files(failed);
  EXPECT_EQ(failed.verdict, conformance::Verdict::fail);  // a malformed answer is still a finding
}

TEST(ExportCheck, BadFoldersAreInputErrors) {
  EXPECT_THROW(check(scratch("nothing")), InputError);
  const fs::path dir = scratch("nosuite");
  fs::create_directories(dir);
  EXPECT_THROW(check(dir), InputError);
  std::ofstream(dir / kExportFile) << "{\"format\": \"attnv-cases-export\", \"version\": 2}";
  EXPECT_THROW(check(dir), InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv::cases
