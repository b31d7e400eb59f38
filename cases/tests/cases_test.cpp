// The file route in process: export a small suite, answer it with in-process kernels (correct,
// and with a planted bug), check; missing and malformed answers; the call hash; the claims file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unistd.h>

#include "cases/call_hash.h"
#include "cases/cases.h"
#include "cases/suite.h"
#include "io/exchange.h"
#include "io/npy.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/validate.h"
#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "properties/conformance/requirement.h"
#include "report/certificate.h"

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

// Sinks are inputs: a case with sinks hashes apart from the same case without, and each sink
// value counts. (A case without sinks hashes as before sinks existed: nothing is added for it.)
TEST(CallHash, SinksAreHashedWhenPresent) {
  const Case a = small_case();
  Case s = a;
  s.problem.has_sinks = true;
  s.sinks = {0.5, -1.0};
  Case s2 = s;
  s2.sinks[1] = -2.0;
  EXPECT_NE(call_hash(a), call_hash(s));
  EXPECT_NE(call_hash(s), call_hash(s2));
  Case same = s;
  EXPECT_EQ(call_hash(s), call_hash(same));
}

// Every option a manifest carries (problem/features/) is an input of the call: setting it
// gives a hash of its own, whether through its data (sinks, ALiBi, the packed bounds), its own
// word (the extents: with B == Hq a per-batch and a per-head mask are the same size, so only the
// word tells them apart) or its hash_tag (chunk). A new row that nothing hashes fails here.
TEST(CallHash, EveryLaterOptionInAManifestChangesTheHash) {
  std::map<std::uint64_t, std::string> seen;
  for (const ProblemOption& o : kProblemOptions) {
    if (!o.in_manifest) continue;
    // The first of these where the option is valid: the extents need their tensor, packed
    // sequences B = 1 and no mask, bias or kv_len.
    for (Shape s : {Shape{2, 2, 1, 3, 4, 2, 2}, Shape{1, 2, 1, 3, 4, 2, 2}}) {
      Problem p;
      p.shape = s;
      p.has_mask = p.has_bias = s.B > 1;
      seen.emplace(call_hash(make_zero_case(p)), "none (B=" + std::to_string(s.B) + ")");
      Problem with = p;
      o.set(with, 2);
      if (!check_problem(with).empty()) continue;
      const auto [at, fresh] = seen.emplace(call_hash(make_zero_case(with)), std::string(o.key));
      EXPECT_TRUE(fresh) << o.key << " hashes as " << at->second;
      break;
    }
  }
  // Two bases and every row a case folder holds.
  EXPECT_EQ(seen.size(), 2u + static_cast<std::size_t>(std::count_if(std::begin(kProblemOptions), std::end(kProblemOptions),
                                                                      [](const ProblemOption& o) { return o.in_manifest; })));
}

// Exported folders carry their call hash: the bytes hashed may never change. Pinned on one case of
// each kind of input (plain, kv_len, sinks and alibi, packed sequences, a backward's dout).
TEST(CallHash, KnownHashesArePinned) {
  const Case plain = small_case();
  Case kv = plain;
  kv.problem.has_kv_len = true;
  kv.kv_len = {3};
  Case heads = plain;
  heads.problem.has_sinks = heads.problem.has_alibi = true;
  heads.sinks = {0.5, -1.0};
  heads.alibi = {0.25, 0.125};
  Case packed = plain;
  packed.problem.varlen_sequences = 2;
  packed.cu_seqlens_q = {0, 1, 3};
  packed.cu_seqlens_k = {0, 2, 4};
  Case bwd = make_zero_case(plain.problem, true);
  bwd.q = plain.q, bwd.k = plain.k, bwd.v = plain.v;
  bwd.dout[1] = 1.5;
  EXPECT_EQ(hash_hex(call_hash(plain)), "f37cf0aa87dea6c3");
  EXPECT_EQ(hash_hex(call_hash(kv)), "5d04d5ce5e602665");
  EXPECT_EQ(hash_hex(call_hash(heads)), "cda2919207890238");
  EXPECT_EQ(hash_hex(call_hash(packed)), "ed97d3435131e09e");
  EXPECT_EQ(hash_hex(call_hash(bwd)), "cbcb137ee54fc5f5");
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("attnv_cases_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  return d;
}

// attnv-export.json is read only up to a manifest's limit: a 200 MB one used to be read whole
// (52 s, 1.03 GB) and certified.
TEST(ExportCheck, AnOversizedExportFileIsRefusedBeforeItIsRead) {
  const fs::path dir = scratch("oversized");
  fs::create_directories(dir);
  { std::ofstream(dir / kExportFile) << "{"; }
  fs::resize_file(dir / kExportFile, (std::uintmax_t{65} << 20));  // sparse: nothing is written
  try {
    (void)read_suite(dir / kExportFile);
    ADD_FAILURE() << "a 65 MiB attnv-export.json was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit of 67108864 bytes (64 MiB) for attnv-export.json"),
              std::string::npos) << e.what();
  }
  fs::remove_all(dir);
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
      "precision": {"bf16": {"p_dtype": "bf16", "block": 64, "pv": "bf16"}}})"), {DType::bf16});
  EXPECT_TRUE(c.caps.backward);
  EXPECT_FALSE(c.caps.softcap);
  EXPECT_TRUE(c.caps.gqa);
  EXPECT_EQ(c.model(DType::bf16).p_dtype, DType::bf16);
  EXPECT_EQ(c.model(DType::bf16).block, 64);
  EXPECT_EQ(c.model(DType::bf16).pv, DType::bf16);  // a stage (docs/semantics.md)
  EXPECT_EQ(c.model(DType::bf16).dot, std::nullopt);
  EXPECT_FALSE(c.model(DType::bf16).flush_subnormals);  // absent: gradual underflow
  // flush_subnormals (BOUND.md section 12): read, written back by the export, junk refused.
  const Claims f = read_claims(write(R"({"backward": true, "softcap": false, )" + every + R"(,
      "precision": {"bf16": {"p_dtype": "bf16", "flush_subnormals": true}}})"), {DType::bf16});
  EXPECT_TRUE(f.model(DType::bf16).flush_subnormals);
  EXPECT_TRUE(claims_from_json(claims_to_json(f), "x", {DType::bf16}).model(DType::bf16).flush_subnormals);
  EXPECT_THROW(read_claims(write(R"({"backward": true, "softcap": false, )" + every + R"(,
      "precision": {"bf16": {"flush_subnormals": 1}}})"), {DType::bf16}), InputError);
  // A claim withdrawn in one dtype, carried through the export; one that is no problem feature
  // is an error naming it.
  const Claims w = read_claims(write(R"({"backward": true, "softcap": false, )" + every + R"(,
      "dtypes": ["f32", "f16"], "withdrawn": {"f16": ["bias"]}})"), {DType::f32});
  EXPECT_EQ(w.caps.withdrawn.at(DType::f16), (std::set<std::string>{"bias"}));
  EXPECT_EQ(claims_from_json(claims_to_json(w), "x", {}).caps.withdrawn, w.caps.withdrawn);
  try {
    read_claims(write(R"({"backward": true, "softcap": false, )" + every + R"(, "withdrawn": {"f32": ["lse"]}})"),
                {DType::f32});
    ADD_FAILURE() << "withdrawing lse was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("withdrawn in f32: 'lse' is not a problem feature"), std::string::npos) << e.what();
  }
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
  // Packed sequences cross the file route (cu_seqlens_q/k.npy): claimable, false when left out.
  EXPECT_TRUE(read_claims(write(R"({"varlen": true, "backward": false, "softcap": true, )" + every + "}"), {DType::f32}).caps.varlen);
  EXPECT_FALSE(read_claims(write(R"({"backward": false, "softcap": true, )" + every + "}"), {DType::f32}).caps.varlen);
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
  const auto r18_cases = conformance::cases_at(conformance::requirement("R18"), conformance::Tier::quick);
  EXPECT_EQ(sum.cases, static_cast<std::size_t>(r18_cases));  // one own-built case per R18 draw; R11 makes no call
  EXPECT_TRUE(sum.answer_findings.empty());
  ASSERT_TRUE(fs::exists(dir / kExportFile));

  kernels::NaiveKernel naive;
  answer(dir, naive);
  conformance::ConformanceReport rep = check(dir);
  ASSERT_EQ(rep.results.size(), 2u);
  EXPECT_TRUE(rep.ok()) << all_findings(rep);
  EXPECT_EQ(rep.results[0].id, "R11");
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::not_claimed);
  EXPECT_EQ(rep.results[1].verdict, conformance::Verdict::pass);
  EXPECT_EQ(rep.results[1].cases_checked, r18_cases);

  for (const kernels::Mutant& m : kernels::mutant_zoo())
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
  EXPECT_EQ(rep.results[1].findings.at(0).kind, "missing_output");

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

// Without the evidence a file can give (a second run for R13, input hashes for R14), R13 and R14
// would hold by construction (answers read back cannot differ or write an input): their PASS is
// NOT EXERCISED, with a note saying how to exercise it. Other requirements keep their verdicts.
TEST(ExportCheck, DeterminismAndInputsUnchangedNeedEvidenceThroughFiles) {
  conformance::RequirementResult r13;
  r13.id = "R13";
  r13.property = "determinism";
  r13.verdict = conformance::Verdict::pass;
  r13.cases_checked = r13.cases_run = 100;
  conformance::RequirementResult shown = r13;
  mark_unobservable_through_files(shown);
  EXPECT_EQ(shown.verdict, conformance::Verdict::not_exercised);
  EXPECT_EQ(shown.cases_checked, 0);
  EXPECT_NE(shown.note.find("--second"), std::string::npos) << shown.note;
  shown = r13;
  mark_unobservable_through_files(shown, {.second_run = true});
  EXPECT_EQ(shown.verdict, conformance::Verdict::pass);
  conformance::RequirementResult r14 = r13;
  r14.id = "R14";
  r14.property = "inputs_unchanged";
  shown = r14;
  mark_unobservable_through_files(shown, {.second_run = true});
  EXPECT_EQ(shown.verdict, conformance::Verdict::not_exercised);
  EXPECT_NE(shown.note.find("export again"), std::string::npos) << shown.note;
  shown = r14;
  mark_unobservable_through_files(shown, {.input_files = true});
  EXPECT_EQ(shown.verdict, conformance::Verdict::pass);
  conformance::RequirementResult r1 = r13;
  r1.id = "R1";
  r1.property = "matches_reference";
  mark_unobservable_through_files(r1);
  EXPECT_EQ(r1.verdict, conformance::Verdict::pass);
  conformance::RequirementResult failed = r13;
  failed.verdict = conformance::Verdict::fail;
  mark_unobservable_through_files(failed);
  EXPECT_EQ(failed.verdict, conformance::Verdict::fail);  // a malformed answer is still a finding
}

const conformance::RequirementResult& result_of(const conformance::ConformanceReport& rep, const std::string& id) {
  for (const auto& r : rep.results)
    if (r.id == id) return r;
  throw std::runtime_error("no result for " + id);
}

// The case folder of the first case whose id starts with `prefix` ("R13/").
fs::path folder_of(const fs::path& dir, const std::string& prefix) {
  for (const io::ExchangeCase& ec : io::read_exchange_cases(dir))
    if (ec.c.id.rfind(prefix, 0) == 0) return io::case_dir(dir, ec);
  throw std::runtime_error("no case " + prefix);
}

// Moves element 0 of a float .npy file one step up in its storage dtype: the same shape and
// dtype, one value (a few bits) different.
void nudge(const fs::path& file, DType storage) {
  io::NpyArray a = io::read_npy(file);
  a.floats.at(0) = storage == DType::f32 ? static_cast<double>(std::nextafter(static_cast<float>(a.floats[0]), 1e30f))
                                         : std::nextafter(a.floats[0], 1e300);
  io::write_npy(file, a.shape, a.type, a.floats);
}

Suite hygiene_suite() {
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R13", "R14"};
  s.claims = default_claims(s.dtypes);
  s.claims.caps.backward = true;  // R13's forward+backward runs alternate between the two answer sets too
  return s;
}

// R13 through files: NOT EXERCISED without a second run; with --second it compares the two runs,
// in the replayed check (repeated calls answered from the second folder) and over every case
// folder, and one changed bit in one answer is a FAIL naming the folder and the element.
TEST(ExportCheck, SecondRunJudgesDeterminism) {
  const fs::path dir = scratch("second_a"), copy = scratch("second_b");
  export_cases(dir, hygiene_suite());
  kernels::NaiveKernel naive;
  answer(dir, naive);
  fs::copy(dir, copy, fs::copy_options::recursive);

  conformance::ConformanceReport rep = check(dir);
  EXPECT_EQ(result_of(rep, "R13").verdict, conformance::Verdict::not_exercised);
  EXPECT_NE(result_of(rep, "R13").note.find("--second"), std::string::npos) << result_of(rep, "R13").note;
  // Nothing of R13 was judged, so nothing was exercised (the JSON said 100), and the certificate
  // is not a bare CERTIFIED: it names R13 first and is partial (docs/certificate.md).
  EXPECT_EQ(result_of(rep, "R13").exercised, 0);
  EXPECT_EQ(result_of(rep, "R13").judged_only_with, "--second COPY (a second run of the program)");
  report::Certificate cert;
  cert.report = rep;
  const report::Summary sum = report::summarize(cert);
  EXPECT_TRUE(sum.certified && sum.partial);
  EXPECT_EQ(sum.awaiting_evidence, std::vector<std::string>{"R13/f32"});
  const std::string line = report::verdict_line(cert);
  EXPECT_EQ(line.rfind("CERTIFIED EXCEPT R13/f32 (not judged: needs --second COPY (a second run of the program)); ", 0), 0u)
      << line;

  rep = check(dir, {}, {.second = copy});
  const std::size_t folders = io::read_exchange_cases(dir).size();
  EXPECT_EQ(result_of(rep, "R13").verdict, conformance::Verdict::pass) << all_findings(rep);
  EXPECT_EQ(result_of(rep, "R13").cases_checked,
            conformance::cases_at(conformance::requirement("R13"), conformance::Tier::quick) + static_cast<int>(folders))
      << all_findings(rep);

  // One bit of one answer of one of R13's own cases: the replayed check sees it (its two runs are
  // the two folders) and so does the folder comparison, which names the folder and element.
  const fs::path r13 = folder_of(copy, "R13/");
  nudge(r13 / "out.npy", DType::f32);
  rep = check(dir, {}, {.second = copy});
  const conformance::RequirementResult& fail = result_of(rep, "R13");
  ASSERT_EQ(fail.verdict, conformance::Verdict::fail) << all_findings(rep);
  EXPECT_EQ(fail.cases_failed, 2) << "the replayed check and the folder comparison: " << all_findings(rep);
  ASSERT_FALSE(fail.findings.empty());
  const std::string msg = fail.findings[0].message;
  EXPECT_NE(msg.find(r13.filename().string() + "/out.npy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out[b=0,h=0,i=0,d=0]"), std::string::npos) << msg;
  EXPECT_EQ(result_of(rep, "R14").verdict, conformance::Verdict::pass) << "answers are not inputs";

  // A backward answer (dq) of a case another requirement recorded: only the folder comparison
  // makes that call twice.
  fs::copy_file(dir / r13.filename() / "out.npy", r13 / "out.npy", fs::copy_options::overwrite_existing);
  const fs::path r14 = folder_of(copy, "R14/");
  ASSERT_TRUE(fs::exists(r14 / "dq.npy"));
  nudge(r14 / "dq.npy", DType::f32);
  rep = check(dir, {}, {.second = copy});
  ASSERT_EQ(result_of(rep, "R13").verdict, conformance::Verdict::fail) << all_findings(rep);
  EXPECT_EQ(result_of(rep, "R13").cases_failed, 1);
  EXPECT_NE(result_of(rep, "R13").findings.at(0).message.find(r14.filename().string() + "/dq.npy"), std::string::npos)
      << all_findings(rep);
  fs::remove_all(dir);
  fs::remove_all(copy);
}

// A second folder that is not a copy of the same export is a usage error naming the file.
TEST(ExportCheck, SecondFolderMustBeACopyOfTheSameExport) {
  const fs::path dir = scratch("same_a"), copy = scratch("same_b"), other = scratch("same_c");
  Suite s = hygiene_suite();
  s.claims.caps.backward = false;  // forward only: the export is 10x faster
  export_cases(dir, s);
  fs::copy(dir, copy, fs::copy_options::recursive);
  s.seed = 7;
  export_cases(other, s);
  const auto refused = [&](const CheckOptions& opt, const std::string& says) {
    try {
      check(dir, {}, opt);
      ADD_FAILURE() << "accepted; expected: " << says;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({.second = scratch("missing")}, "the folder does not exist");
  refused({.second = other}, (other / kExportFile).string() + " differs from");
  refused({.second = dir}, "itself");
  refused({.only = {"R14"}, .second = copy}, "evidence for R13 (determinism), which this check does not run");
  fs::remove(copy / io::kManifestFile);
  refused({.second = copy}, (copy / io::kManifestFile).string() + " is missing");
  fs::remove_all(dir);
  fs::remove_all(copy);
  fs::remove_all(other);
}

// R14 through files: judged on the input files, hashed at export. Untouched inputs PASS with
// every case folder counted; a rewritten k.npy is a FAIL naming the file. (Before, R14 was NOT
// EXERCISED through files whatever the program did.)
TEST(ExportCheck, ChangedInputFileIsAnR14Finding) {
  const fs::path dir = scratch("inputs");
  Suite s = hygiene_suite();
  s.only = {"R14"};
  export_cases(dir, s);
  kernels::NaiveKernel naive;
  answer(dir, naive);
  const int folders = static_cast<int>(io::read_exchange_cases(dir).size());
  conformance::ConformanceReport rep = check(dir);
  ASSERT_EQ(result_of(rep, "R14").verdict, conformance::Verdict::pass) << all_findings(rep);
  EXPECT_EQ(result_of(rep, "R14").cases_checked, folders);

  const fs::path folder = folder_of(dir, "R14/");
  fs::copy_file(folder / "k.npy", dir / "k.npy.exported");
  nudge(folder / "k.npy", DType::f32);
  rep = check(dir);
  const conformance::RequirementResult& r = result_of(rep, "R14");
  ASSERT_EQ(r.verdict, conformance::Verdict::fail) << all_findings(rep);
  EXPECT_EQ(r.cases_failed, 1);
  EXPECT_NE(r.findings.at(0).message.find("input written: " + (folder / "k.npy").string() + " changed since export"),
            std::string::npos)
      << all_findings(rep);

  // An input file that appears (a mask next to "mask": false) is a write too.
  fs::copy_file(dir / "k.npy.exported", folder / "k.npy", fs::copy_options::overwrite_existing);
  ASSERT_EQ(result_of(check(dir), "R14").verdict, conformance::Verdict::pass);
  const fs::path no_mask = [&] {
    for (const io::ExchangeCase& ec : io::read_exchange_cases(dir))
      if (!ec.c.problem.has_mask) return io::case_dir(dir, ec);
    throw std::runtime_error("every case has a mask");
  }();
  fs::copy_file(no_mask / "q.npy", no_mask / "mask.npy");
  EXPECT_NE(result_of(check(dir), "R14").findings.at(0).message.find("mask.npy appeared since export"), std::string::npos);
  fs::remove(no_mask / "mask.npy");

  // An export without hashes (an earlier attnv) leaves R14 NOT EXERCISED, saying to export again.
  std::ifstream in(dir / kExportFile);
  nlohmann::json j = nlohmann::json::parse(in);
  in.close();
  j.erase("inputs");
  std::ofstream(dir / kExportFile, std::ios::trunc) << j.dump();
  rep = check(dir);
  EXPECT_EQ(result_of(rep, "R14").verdict, conformance::Verdict::not_exercised);
  EXPECT_NE(result_of(rep, "R14").note.find("export again"), std::string::npos);
  fs::remove_all(dir);
}

// Per-sequence key lengths through files: with varlen_kv_len claimed, R1 exports packed cases
// with kv_len.npy as [S]; correct answers pass, answers aligned to the stored keys fail R1.
TEST(ExportCheck, PerSequenceKeyLengthsAreExportedAndJudged) {
  const fs::path dir = scratch("seqused");
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R1"};
  s.claims = default_claims(s.dtypes);
  s.claims.caps.varlen = s.claims.caps.varlen_kv_len = true;
  export_cases(dir, s);
  int seqused = 0;
  for (const io::ExchangeCase& ec : io::read_exchange_cases(dir))
    if (ec.c.problem.varlen_sequences > 0 && ec.c.problem.has_kv_len) {
      ++seqused;
      EXPECT_EQ(io::read_npy(io::case_dir(dir, ec) / "kv_len.npy").shape,
                std::vector<std::int64_t>{ec.c.problem.varlen_sequences});
    }
  EXPECT_GT(seqused, 5);
  kernels::NaiveKernel naive;
  answer(dir, naive);
  EXPECT_EQ(result_of(check(dir), "R1").verdict, conformance::Verdict::pass);
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == "seqused_aligned_to_stored_keys") {
      const auto bad = m.make();
      answer(dir, *bad);
    }
  // The mutant differs from a correct kernel only where a sequence uses fewer keys than it stores
  // under a bottom-right alignment. The generator draws such cases causal bottom-right in 6 of 10
  // (before, 1 of R1's 200 quick cases decided it, and none of the 100 a sanitizer build draws);
  // in process 7 of the 200 decide it now, 5 of them among the first 100.
  EXPECT_EQ(result_of(check(dir), "R1").verdict, conformance::Verdict::fail);
  fs::remove_all(dir);
}

// Packed sequences through files: claimed, R1 exports packed cases (the manifest's
// varlen_sequences, cu_seqlens_q/k.npy); correct answers pass, answers aligned by the packed
// corner fail R1, and rewritten bounds are an R14 finding naming the file.
TEST(ExportCheck, PackedSequencesAreExportedAndJudged) {
  const fs::path dir = scratch("varlen");
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R1", "R14"};
  s.claims = default_claims(s.dtypes);
  s.claims.caps.varlen = true;
  export_cases(dir, s);
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(dir);
  fs::path packed_folder;
  int packed = 0;
  for (const io::ExchangeCase& ec : cases)
    if (ec.c.problem.varlen_sequences > 0) {
      ++packed;
      packed_folder = io::case_dir(dir, ec);
      ASSERT_TRUE(fs::exists(packed_folder / "cu_seqlens_q.npy"));
      // The default claims leave out varlen_kv_len: a program claiming varlen and kv_len is never
      // exported the two together (per-sequence key lengths are a claim of their own).
      EXPECT_FALSE(ec.c.problem.has_kv_len) << ec.c.id;
    }
  EXPECT_GT(packed, 10);

  kernels::NaiveKernel naive;
  answer(dir, naive);
  conformance::ConformanceReport rep = check(dir);
  EXPECT_EQ(result_of(rep, "R1").verdict, conformance::Verdict::pass) << all_findings(rep);
  EXPECT_EQ(result_of(rep, "R14").verdict, conformance::Verdict::pass) << all_findings(rep);

  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == "varlen_global_alignment") {
      const auto bad = m.make();
      answer(dir, *bad);
    }
  rep = check(dir);
  EXPECT_EQ(result_of(rep, "R1").verdict, conformance::Verdict::fail) << all_findings(rep);

  answer(dir, naive);
  const io::NpyArray bounds = io::read_npy(packed_folder / "cu_seqlens_k.npy");
  std::vector<std::int64_t> moved = bounds.ints;
  moved.back() += 1;  // the program wrote into its input
  io::write_npy_int64(packed_folder / "cu_seqlens_k.npy", bounds.shape, moved);
  rep = check(dir);
  const conformance::RequirementResult& r14 = result_of(rep, "R14");
  ASSERT_EQ(r14.verdict, conformance::Verdict::fail) << all_findings(rep);
  EXPECT_NE(r14.findings.at(0).message.find("cu_seqlens_k.npy changed since export"), std::string::npos) << all_findings(rep);
  fs::remove_all(dir);
}

// The per-head inputs are input files too (the list comes from the input tables): a rewritten
// sinks.npy or alibi.npy is an R14 finding. An export that predates the recorded list
// ("input_files") hashed neither: judged on its own list, the same rewrite is not charged.
TEST(ExportCheck, RewrittenPerHeadInputsAreAnR14Finding) {
  const fs::path dir = scratch("head_inputs");
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R14"};
  s.claims = default_claims(s.dtypes);
  s.claims.caps.sinks = s.claims.caps.alibi = true;
  export_cases(dir, s);
  kernels::NaiveKernel naive;
  answer(dir, naive);
  ASSERT_EQ(result_of(check(dir), "R14").verdict, conformance::Verdict::pass);
  for (const char* name : {"sinks", "alibi"}) {
    fs::path folder;
    for (const io::ExchangeCase& ec : io::read_exchange_cases(dir))
      if (fs::exists(io::case_dir(dir, ec) / (std::string(name) + ".npy"))) folder = io::case_dir(dir, ec);
    ASSERT_FALSE(folder.empty()) << "no R14 case drew " << name;
    const fs::path file = folder / (std::string(name) + ".npy");
    fs::copy_file(file, dir / "exported.npy", fs::copy_options::overwrite_existing);
    nudge(file, DType::f32);
    conformance::ConformanceReport rep = check(dir);
    const conformance::RequirementResult& r = result_of(rep, "R14");
    ASSERT_EQ(r.verdict, conformance::Verdict::fail) << name << ": " << all_findings(rep);
    EXPECT_NE(r.findings.at(0).message.find("input written: " + file.string() + " changed since export"), std::string::npos)
        << all_findings(rep);

    std::ifstream in(dir / kExportFile);
    nlohmann::json j = nlohmann::json::parse(in);
    in.close();
    const nlohmann::json recorded = j;
    j.erase("input_files");
    for (auto& folder_hashes : j["inputs"].items()) folder_hashes.value().erase(std::string(name) + ".npy");
    std::ofstream(dir / kExportFile, std::ios::trunc) << j.dump();
    EXPECT_EQ(result_of(check(dir), "R14").verdict, conformance::Verdict::pass) << name << ", an export before the list";
    std::ofstream(dir / kExportFile, std::ios::trunc) << recorded.dump();
    fs::copy_file(dir / "exported.npy", file, fs::copy_options::overwrite_existing);
  }
  fs::remove_all(dir);
}

// --claims at check time: the precision model is replaced (a model too strict for the naive
// kernel's f32 accumulation makes its correct answers fail R1), capabilities never are.
TEST(ExportCheck, ClaimsAtCheckReplacePrecisionOnly) {
  const fs::path dir = scratch("claims_check");
  Suite s;
  s.dtypes = {DType::f32};
  s.only = {"R1"};
  s.claims = default_claims(s.dtypes);
  export_cases(dir, s);
  kernels::NaiveKernel naive;
  answer(dir, naive);
  ASSERT_TRUE(check(dir).ok());
  nlohmann::json claims = nlohmann::json::parse(claims_to_json(s.claims));
  const auto write = [&](const nlohmann::json& j) {
    std::ofstream(dir / "claims.json", std::ios::trunc) << j.dump();
    return dir / "claims.json";
  };
  claims["precision"]["f32"] = {{"accum", "f64"}, {"exp_ulps", 0.5}};  // f64 accumulation: a bound the f32 sums exceed
  const fs::path strict = write(claims);
  EXPECT_EQ(checked_suite(dir, {.claims = strict}).claims.model(DType::f32).accum, DType::f64);
  conformance::ConformanceReport rep = check(dir, {}, {.claims = strict});
  EXPECT_EQ(result_of(rep, "R1").verdict, conformance::Verdict::fail) << all_findings(rep);

  claims["precision"]["f32"] = {{"exp_ulps", 8}};
  rep = check(dir, {}, {.claims = write(claims)});
  EXPECT_EQ(result_of(rep, "R1").verdict, conformance::Verdict::pass) << all_findings(rep);

  claims["precision"]["f32"] = nlohmann::json::object();
  claims["backward"] = true;
  try {
    check(dir, {}, {.claims = write(claims)});
    ADD_FAILURE() << "a claims file changing a capability was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"backward\": true here, false in " + (dir / kExportFile).string()),
              std::string::npos)
        << e.what();
  }
  claims["backward"] = false;
  claims["dtypes"] = {"f32", "bf16"};
  EXPECT_THROW(check(dir, {}, {.claims = write(claims)}), InputError);
  fs::remove_all(dir);
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
