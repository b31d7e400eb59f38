// End to end: `attnv certify` on the built-in kernels: exit codes, byte-identical JSON per seed,
// the report folder, and usage errors that say what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/tests/run_attnv.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::read_text;
using testing::run_attnv;

// A handful of requirements, one dtype: seconds, not minutes.
const std::string kFew = " --only R1,R3,R5,R9 --dtype f32";

TEST(CertifyCommand, NaiveKernelIsCertifiedAndTheJsonIsByteIdenticalPerSeed) {
  const fs::path dir = fresh_dir("certify_naive");
  const auto a = run_attnv("certify --kernel builtin:naive" + kFew + " --jobs 2 --json " + (dir / "a.json").string(), dir);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("CERTIFIED"), std::string::npos) << a.output;
  const auto b = run_attnv("certify --kernel builtin:naive" + kFew + " --jobs 1 --json " + (dir / "b.json").string(), dir);
  ASSERT_EQ(b.status, 0) << b.output;
  const std::string ja = read_text(dir / "a.json");
  ASSERT_FALSE(ja.empty());
  EXPECT_EQ(ja, read_text(dir / "b.json")) << "same seed, different thread count: the JSON must not change";
  const auto c = run_attnv("certify --kernel builtin:naive" + kFew + " --seed 7 --json " + (dir / "c.json").string(), dir);
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_NE(ja, read_text(dir / "c.json")) << "another seed draws other cases";
  fs::remove_all(dir);
}

TEST(CertifyCommand, ReportFolderHoldsEveryForm) {
  const fs::path dir = fresh_dir("certify_report");
  const auto r = run_attnv("certify --kernel builtin:core --only R1,R7 --dtype bf16 --report " + (dir / "cert").string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* f : {"certificate.json", "certificate.junit.xml", "certificate.html"})
    EXPECT_GT(fs::file_size(dir / "cert" / f), 100u) << f;
  fs::remove_all(dir);
}

TEST(CertifyCommand, PlainProgressLinesWhenNotATerminal) {
  const fs::path dir = fresh_dir("certify_progress");
  const auto r = run_attnv("certify --kernel builtin:naive --only R3,R8 --dtype f32,f16", dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("[4/4] "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << "no bar redrawing into a log";
  fs::remove_all(dir);
}

// The certificate's terminal summary quotes case ids from an exchange folder (here a finding
// for a missing answer): control characters in them never reach the terminal.
TEST(CertifyCommand, CasesCheckSummaryPrintsIdsWithoutControlCharacters) {
  const fs::path dir = fresh_dir("cases_ctrl");
  const fs::path ex = dir / "ex";
  auto r = run_attnv("cases export --suite quick --dtype f32 --only R18 --out " + ex.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  std::string manifest = read_text(ex / "manifest.json");
  const std::string first = "\"id\": \"R18/f32/0000/";
  const auto at = manifest.find(first);
  ASSERT_NE(at, std::string::npos) << manifest.substr(0, 400);
  manifest.replace(at, first.size(), R"("id": "R18/\u001b]0;pwn\u0007\r\u001b[2J/)");
  std::ofstream(ex / "manifest.json", std::ios::binary | std::ios::trunc) << manifest;
  r = run_attnv("cases check " + ex.string(), dir);  // no answers written: every case is a finding
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("no answer for case R18/?]0;pwn???[2J/"), std::string::npos) << r.output;
  for (char ch : r.output) {
    const auto u = static_cast<unsigned char>(ch);
    ASSERT_FALSE((u < 0x20 && u != '\n') || u == 0x7F) << "control character " << int(u) << " in:\n" << r.output;
  }
  fs::remove_all(dir);
}

TEST(CertifyCommand, UsageErrorsExitTwoAndSayWhatIsWrong) {
  const fs::path dir = fresh_dir("certify_usage");
  struct Bad {
    std::string args, says;
  };
  const Bad bad[] = {
      {"certify --kernel builtin:bogus", "unknown kernel 'builtin:bogus'"},
      {"certify --kernel plugin:", "needs a path"},
      {"certify --kernel builtin:naive --only R99", "no conformance requirement named 'R99'"},
      {"certify --kernel builtin:naive --dtype f8", "'f8' is not a dtype"},
      {"certify --kernel builtin:naive --suite huge", "huge"},
      {"certify", "--kernel is required"},
      {"certify --kernel builtin:naive --only R1 --json /nonexistent/dir/x.json", "does not exist"},
  };
  for (const Bad& b : bad) {
    const auto r = run_attnv(b.args, dir);
    EXPECT_EQ(r.status, 2) << b.args << "\n" << r.output;
    EXPECT_NE(r.output.find(b.says), std::string::npos) << b.args << "\n" << r.output;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
