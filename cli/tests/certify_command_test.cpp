// End to end: `attnv certify` on the built-in kernels: exit codes, byte-identical JSON per seed,
// the report folder, and usage errors that say what is wrong.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/tests/run_attnv.h"
#include "core/isa.h"
#include "properties/conformance/requirement.h"

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

// A shell command line with attnv's path in front of `args`; stdout and stderr kept apart.
struct Split {
  int status;
  std::string out, err;
};
Split run_split(const std::string& env, const std::string& args, const fs::path& dir) {
  const std::string cmd = env + " " + std::string(ATTNV_BIN) + " " + args + " > " + (dir / "out.txt").string() + " 2> " +
                          (dir / "err.txt").string();
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(dir / "out.txt"), read_text(dir / "err.txt")};
}

TEST(CertifyCommand, SeedsOutsideUint64AreUsageErrorsInEveryCommand) {
  const fs::path dir = fresh_dir("certify_seed");
  const std::string commands[] = {"certify --kernel builtin:naive --only R1 --dtype f32", "cases export --out " + (dir / "x").string(),
                                  "fuzz --kernel builtin:naive --max-time 1", "selfcheck", "calibrate"};
  for (const std::string& c : commands)
    for (const char* seed : {"-1", "99999999999999999999999", "18446744073709551616", "12abc", "0x10", "''"}) {
      const auto r = run_attnv(c + " --seed " + seed, dir);
      EXPECT_EQ(r.status, 2) << c << " --seed " << seed << "\n" << r.output;
      EXPECT_NE(r.output.find("is not a seed"), std::string::npos) << c << " --seed " << seed << "\n" << r.output;
    }
  // The largest seed is a seed.
  const auto r = run_attnv("certify --kernel builtin:naive --only R13 --dtype f32 --seed 18446744073709551615", dir);
  EXPECT_EQ(r.status, 0) << r.output;
  fs::remove_all(dir);
}

TEST(CertifyCommand, DashWritesTheReportToStandardOutputAndTheSummaryToStderr) {
  const fs::path dir = fresh_dir("certify_stdout");
  auto r = run_split("", "certify --kernel builtin:naive --only R1,R13 --dtype f32 --json -", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // the whole of stdout is the JSON
  EXPECT_EQ(j["format"], "attnv-certificate");
  EXPECT_TRUE(j["verdict"]["certified"].get<bool>());
  EXPECT_NE(r.err.find("CERTIFIED"), std::string::npos) << r.err;
  r = run_split("", "certify --kernel builtin:naive --only R1 --dtype f32 --junit -", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u) << r.out.substr(0, 200);
  r = run_split("", "certify --kernel builtin:naive --only R1 --dtype f32 --json - --junit -", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("only one of --json, --junit and --html can be -"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// `--json /dev/stdout` as root once renamed a temporary file over the /dev/stdout link for the
// whole machine: a target that exists and is not a regular file is refused before the run.
TEST(CertifyCommand, RefusesReportTargetsThatAreNotRegularFiles) {
  const fs::path dir = fresh_dir("certify_nonregular");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  std::ofstream(dir / "real.json") << "keep";
  fs::create_symlink(dir / "real.json", dir / "link.json");
  struct Bad {
    std::string target, says;
  };
  const Bad bad[] = {{"/dev/stdout", "is a symbolic link"}, {"/dev/null", "is a device"},
                     {(dir / "fifo").string(), "is a pipe"}, {(dir / "link.json").string(), "is a symbolic link"}};
  for (const Bad& b : bad)
    for (const char* option : {"--json", "--junit", "--html"}) {
      const auto r = run_attnv("certify --kernel builtin:naive --only R1 --dtype f32 " + std::string(option) + " " + b.target, dir);
      EXPECT_EQ(r.status, 2) << option << " " << b.target << "\n" << r.output;
      EXPECT_NE(r.output.find(b.says), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("not a regular file"), std::string::npos) << r.output;
    }
  EXPECT_TRUE(fs::is_symlink("/dev/stdout") || fs::is_character_file("/dev/stdout"));
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(read_text(dir / "real.json"), "keep");
  fs::remove_all(dir);
}

// Colour: --color always|never, and auto = a terminal (here a pseudo-terminal from script(1))
// without NO_COLOR and TERM=dumb.
TEST(CertifyCommand, ColourFollowsTheOptionNoColorAndTermDumb) {
  const fs::path dir = fresh_dir("certify_color");
  const std::string run = "certify --kernel builtin:naive --only R13 --dtype f32";
  const std::string esc = "\033[";
  EXPECT_NE(run_attnv(run + " --color always", dir).output.find(esc), std::string::npos);
  EXPECT_EQ(run_attnv(run + " --color never", dir).output.find(esc), std::string::npos);
  EXPECT_EQ(run_attnv(run, dir).output.find(esc), std::string::npos) << "auto, not a terminal";
  EXPECT_EQ(run_attnv(run + " --color sometimes", dir).status, 2);
  if (std::system("command -v script > /dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) not installed: no pseudo-terminal";
  auto in_tty = [&](const std::string& env, const std::string& args) {
    const std::string cmd = "env " + env + " script -qec \"" + std::string(ATTNV_BIN) + " " + args + "\" /dev/null > " +
                            (dir / "tty.txt").string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return read_text(dir / "tty.txt");
  };
  EXPECT_NE(in_tty("TERM=xterm", run).find("\033[1;32m"), std::string::npos) << "auto on a terminal colours";
  EXPECT_EQ(in_tty("TERM=xterm NO_COLOR=1", run).find("\033[1;32m"), std::string::npos) << "NO_COLOR";
  EXPECT_EQ(in_tty("TERM=dumb", run).find("\033["), std::string::npos) << "TERM=dumb: no colour, no redrawing";
  EXPECT_EQ(in_tty("TERM=xterm", run + " --color never").find("\033[1;32m"), std::string::npos);
  fs::remove_all(dir);
}

// ATTNV_CORE_ISA (core/isa.h) forces the core's path, and the certificate names the path taken;
// a value that cannot run is a usage error (exit 2) naming it, before anything is certified.
TEST(CertifyCommand, CoreIsaEnvironmentChoosesThePathTheCertificateNames) {
  const fs::path dir = fresh_dir("certify_isa");
  auto r = run_split("ATTNV_CORE_ISA=portable", "certify --kernel builtin:core --only R13 --dtype f32 --json -", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["provenance"]["isa"], "portable");
  EXPECT_NE(r.err.find("(portable path)"), std::string::npos) << r.err;
  // Every rerun command repeats the setting: without it, a rerun would judge the default path.
  EXPECT_EQ(j["environment"], "ATTNV_CORE_ISA=portable");
  EXPECT_EQ(j["kernel"]["configuration"], "ATTNV_CORE_ISA=portable") << "what its evidence records";
  EXPECT_EQ(j["command"].get<std::string>().rfind("ATTNV_CORE_ISA=portable attnv certify --kernel builtin:core", 0), 0u) << j["command"];
  EXPECT_NE(r.err.find("rerun: ATTNV_CORE_ISA=portable attnv certify"), std::string::npos) << r.err;
  r = run_split("ATTNV_CORE_ISA=avx9", "certify --kernel builtin:core --only R13 --dtype f32", dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("ATTNV_CORE_ISA=avx9: unknown ISA path"), std::string::npos) << r.err;
  // Whatever the kernel: the provenance names the core's path, so the value is checked first.
  r = run_split("ATTNV_CORE_ISA=avx9", "certify --kernel builtin:naive --only R13 --dtype f32", dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out.find("CERTIFIED"), std::string::npos) << "nothing is certified";
  fs::remove_all(dir);
}

// The certificate names what it certified and what certified it.
TEST(CertifyCommand, CertificateIdentifiesAttnvTheMachineAndTheKernel) {
  const fs::path dir = fresh_dir("certify_provenance");
  const auto r = run_split("", "certify --kernel builtin:naive --only R13 --dtype f32 --json -", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& p = j["provenance"];
  EXPECT_FALSE(p["attnv_commit"].get<std::string>().empty());
  EXPECT_NE(p["compiler"].get<std::string>().find_first_of("0123456789"), std::string::npos) << p;
  EXPECT_FALSE(p["cpu"].get<std::string>().empty());
  EXPECT_EQ(p["isa"], core::isa_features(core::resolve_isa(core::Isa::best))) << p;
  EXPECT_EQ(j["environment"], "") << "nothing forced (and the naive kernel does not use the core)";
  EXPECT_EQ(j["command"].get<std::string>().rfind("attnv certify ", 0), 0u) << j["command"];
  EXPECT_EQ(j["kernel"]["sha256"], "") << "a built-in kernel has no file";
  EXPECT_EQ(j["kernel"]["configuration"], "") << "nothing beside its name picks the naive kernel's code";
  EXPECT_NE(r.err.find("certified by attnv"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// The quick suite's HTML page stays small: the coverage scatter bins cases into cells instead
// of drawing one circle per case: 241 KB against 4.3 MB (17,462 circles) on the same run.
// The same run holds the suite to exercising every claim of the core, which claims every
// feature: a feature the generators never draw (or draw only where no case is judged) would be
// NOT EXERCISED here.
TEST(CertifyCommand, QuickSuiteHtmlPageStaysSmallAndEveryClaimIsExercised) {
  // The page of the quick tier as users get it: a sanitizer build draws 1/kCaseDivisor of the
  // cases, so its page is not the one measured (and the run took 139 s of CI under ASan).
  if (conformance::kCaseDivisor > 1) GTEST_SKIP() << "measured in the release build only";
  const fs::path dir = fresh_dir("certify_html_size");
  const auto r = run_attnv("certify --kernel builtin:core --suite quick --html " + (dir / "c.html").string() +
                               " --json " + (dir / "c.json").string(),
                           dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto size = fs::file_size(dir / "c.html");
  EXPECT_LT(size, 400u * 1024) << "quick-suite page of " << size << " bytes";
  EXPECT_GT(size, 20u * 1024);
  std::ifstream in(dir / "c.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["verdict"]["unexercised_features"].empty()) << j["verdict"]["unexercised_features"].dump();
  EXPECT_GE(j["claims_exercised"].size(), 16u);
  for (const auto& f : j["claims_exercised"]) EXPECT_GE(f["judged"].get<int>(), 10) << f.dump();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
