// `attnv cases export|check` end to end: the export's "next:" hint follows the claims; --second
// and --claims are validated before anything is written; a second run judges R13 and the
// certificate shows the precision model the answers were judged by.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/tests/run_attnv.h"
#include "io/exchange.h"
#include "io/npy.h"
#include "problem/buffers.h"
#include "kernels/naive_kernel.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::has;
using testing::run_attnv;

// Every case of an export answered by attnv's naive kernel (forward, and backward where dout exists).
void answer(const fs::path& dir) {
  kernels::NaiveKernel naive;
  for (const io::ExchangeCase& ec : io::read_exchange_cases(dir)) {
    const Outputs o = ec.c.has_dout() ? run_backward(naive, ec.c) : run_forward(naive, ec.c);
    io::write_outputs(io::case_dir(dir, ec), "", ec.c, o, ec.c.problem.dtype);
  }
}

// The claims attnv-export.json recorded, as a claims file to edit.
nlohmann::json exported_claims(const fs::path& dir) {
  std::ifstream f(dir / "attnv-export.json");
  return nlohmann::json::parse(f)["claims"];
}

fs::path write_json(const fs::path& file, const nlohmann::json& j) {
  std::ofstream(file, std::ios::trunc) << j.dump();
  return file;
}

TEST(CasesCommand, ExportHintNamesOnlyTheAnswersTheClaimsAskFor) {
  const fs::path dir = fresh_dir("cases_hint");
  auto r = run_attnv("cases export --dtype f32 --only R18 --out " + (dir / "a").string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "next: write out.npy and lse.npy into each")) << r.output;
  EXPECT_FALSE(has(r.output, "dq.npy")) << r.output;

  nlohmann::json c = exported_claims(dir / "a");
  c["lse"] = false;
  r = run_attnv("cases export --dtype f32 --only R18 --out " + (dir / "b").string() + " --claims " +
                    write_json(dir / "no_lse.json", c).string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "next: write out.npy into each")) << r.output;
  EXPECT_FALSE(has(r.output, "lse.npy")) << r.output;

  c["lse"] = true;
  c["backward"] = true;
  r = run_attnv("cases export --dtype f32 --only R18 --out " + (dir / "c").string() + " --claims " +
                    write_json(dir / "bwd.json", c).string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "next: write out.npy and lse.npy (and dq.npy, dk.npy, dv.npy where dout.npy exists)"))
      << r.output;
  fs::remove_all(dir);
}

// A bad --second or --claims is a usage error (exit 2) that names the file, and no certificate
// file or report folder is written.
TEST(CasesCommand, BadSecondOrClaimsExitTwoAndWriteNothing) {
  const fs::path dir = fresh_dir("cases_bad_second");
  const fs::path ex = dir / "ex", other = dir / "other";
  ASSERT_EQ(run_attnv("cases export --dtype f32 --only R13 --out " + ex.string(), dir).status, 0);
  ASSERT_EQ(run_attnv("cases export --dtype f32 --only R13 --seed 7 --out " + other.string(), dir).status, 0);
  answer(ex);
  nlohmann::json bwd = exported_claims(ex);
  bwd["backward"] = true;
  const std::string outputs = " --json " + (dir / "c.json").string() + " --report " + (dir / "rep").string();
  struct Bad {
    std::string args, says;
  };
  const Bad bad[] = {
      {"--second " + (dir / "missing").string(), "--second " + (dir / "missing").string() + ": the folder does not exist"},
      {"--second " + other.string(),
       (other / "attnv-export.json").string() + " differs from " + (ex / "attnv-export.json").string()},
      {"--second " + ex.string(), "itself"},
      {"--claims " + write_json(dir / "bwd.json", bwd).string(),
       "\"backward\": true here, false in " + (ex / "attnv-export.json").string()},
      {"--claims " + (dir / "none.json").string(), "cannot open"},
  };
  for (const Bad& b : bad) {
    const auto r = run_attnv("cases check " + ex.string() + " " + b.args + outputs, dir);
    EXPECT_EQ(r.status, 2) << b.args << "\n" << r.output;
    EXPECT_TRUE(has(r.output, b.says)) << b.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir / "c.json")) << b.args;
    EXPECT_FALSE(fs::exists(dir / "rep")) << b.args;
  }
  fs::remove_all(dir);
}

TEST(CasesCommand, SecondRunJudgesDeterminismAndTheCertificateShowsTheModelUsed) {
  const fs::path dir = fresh_dir("cases_second");
  const fs::path ex = dir / "ex", copy = dir / "copy";
  ASSERT_EQ(run_attnv("cases export --dtype f32 --only R13,R14 --out " + ex.string(), dir).status, 0);
  fs::copy(ex, copy, fs::copy_options::recursive);
  answer(ex);
  answer(copy);

  auto r = run_attnv("cases check " + ex.string(), dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "NOT EXERCISED")) << r.output;  // R13 without a second run

  nlohmann::json loose = exported_claims(ex);
  loose["precision"]["f32"]["exp_ulps"] = 8;
  const fs::path claims = write_json(dir / "loose.json", loose);
  r = run_attnv("cases check " + ex.string() + " --second " + copy.string() + " --claims " + claims.string() + " --json " +
                    (dir / "c.json").string(), dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(has(r.output, "NOT EXERCISED")) << r.output;
  EXPECT_TRUE(has(r.output, "exp_ulps=8")) << r.output;
  EXPECT_TRUE(has(r.output, "precision models from --claims " + claims.string())) << r.output;
  std::ifstream j(dir / "c.json");
  const nlohmann::json cert = nlohmann::json::parse(j);
  EXPECT_TRUE(has(cert.dump(), "\"exp_ulps\":8")) << cert.dump().substr(0, 2000);

  // One bit of one answer of the second run: R13 fails, naming the case folder and the element;
  // the per-requirement rerun keeps --second.
  const io::ExchangeCase first = io::read_exchange_cases(copy).at(0);
  const fs::path out = io::case_dir(copy, first) / "out.npy";
  io::NpyArray a = io::read_npy(out);
  a.floats.at(0) = std::nextafter(static_cast<float>(a.floats[0]), 1e30f);
  io::write_npy(out, a.shape, a.type, a.floats);
  r = run_attnv("cases check " + ex.string() + " --second " + copy.string(), dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "FAIL R13 determinism on f32")) << r.output;
  EXPECT_TRUE(has(r.output, out.string())) << r.output;
  EXPECT_TRUE(has(r.output, "out[b=0,h=0,i=0,d=0] was")) << r.output;
  EXPECT_TRUE(has(r.output, "reproduce: attnv cases check " + ex.string() + " --second " + copy.string() +
                                " --dtype f32 --only R13"))
      << r.output;
  EXPECT_FALSE(has(r.output, "case -1")) << r.output;
  fs::remove_all(dir);
}


// cases check --report writes the evidence of each failing case into failures/, as certify does
// (--help and docs/certificate.md promised it; none was written); a later run with the same
// --report removes the earlier failures/, so a CERTIFIED certificate never sits beside findings
// of another run; a failures/ holding something attnv did not write is left alone, with an error.
TEST(CasesCommand, ReportFolderHoldsTheFailuresOfThisRunOnly) {
  const fs::path dir = fresh_dir("cases_failures");
  const fs::path ex = dir / "ex", rep = dir / "rep";
  ASSERT_EQ(run_attnv("cases export --dtype f32 --only R1 --out " + ex.string(), dir).status, 0);
  answer(ex);
  // One answer off by a tenth: R1 fails that case.
  const io::ExchangeCase first = io::read_exchange_cases(ex).front();
  Outputs o = run_forward(*std::make_unique<kernels::NaiveKernel>(), first.c);
  for (double& x : o.out) x = round_to(DType::f32, x * 1.1);
  io::write_outputs(io::case_dir(ex, first), "", first.c, o, DType::f32);
  auto r = run_attnv("cases check " + ex.string() + " --report " + rep.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  ASSERT_TRUE(fs::is_directory(rep / "failures")) << r.output;
  int folders = 0;
  for (const auto& e : fs::directory_iterator(rep / "failures")) folders += fs::exists(e.path() / "manifest.json");
  EXPECT_GE(folders, 1);

  answer(ex);
  r = run_attnv("cases check " + ex.string() + " --report " + rep.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(rep / "failures")) << "the earlier run's findings must not stay beside a CERTIFIED certificate";

  fs::create_directories(rep / "failures");
  std::ofstream(rep / "failures" / "notes.txt") << "mine";
  r = run_attnv("cases check " + ex.string() + " --report " + rep.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "holds notes.txt, which is not an evidence folder attnv wrote")) << r.output;
  EXPECT_TRUE(fs::exists(rep / "failures" / "notes.txt"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
