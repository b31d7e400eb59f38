// End to end: `attnv certify --kernel plugin:PATH` on the example plugin, on plugins that crash,
// hang, write out of bounds or into their inputs (each a finding, certification goes on, the exit
// code stays right), and on plugins that cannot be loaded, crash while loading, or are no file (exit 2).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli/tests/run_attnv.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::has;
using testing::run_attnv;


bool has_one_of(const std::string& text, const std::string& alternatives) {
  for (std::size_t from = 0;;) {
    const std::size_t bar = alternatives.find('|', from);
    if (has(text, alternatives.substr(from, bar - from))) return true;
    if (bar == std::string::npos) return false;
    from = bar + 1;
  }
}

TEST(CertifyPlugins, ExamplePluginIsCertified) {
  const fs::path dir = fresh_dir("certify_example");
  const auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_EXAMPLE_MINIMAL + " --jobs 2", dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "CERTIFIED: ")) << r.output;
  EXPECT_TRUE(has(r.output, "not claimed")) << "it claims no GQA, no backward: those are listed, not failed\n" << r.output;
  fs::remove_all(dir);
}

TEST(CertifyPlugins, NothingClaimedIsAnErrorNotACertificate) {
  const fs::path dir = fresh_dir("certify_unclaimed");
  // The example claims f32 and f64 only.
  const auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_EXAMPLE_MINIMAL + " --dtype f16", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "nothing was certified")) << r.output;
  fs::remove_all(dir);
}

TEST(CertifyPlugins, MisbehavingPluginsAreFindingsAndCertificationGoesOn) {
  const fs::path dir = fresh_dir("certify_bad");
  struct Bad {
    const char* path;
    const char* requirements;  // the first one meets the bug; the run must go on to the second
    const char* says;  // the diagnosis; "a|b": either (where a write lands decides which)
    const char* kind;  // the finding's kind (the certificate's JSON)
  };
  const Bad bad[] = {
      {PLUGIN_BAD_SEGV, "R1,R3", "crashed with SIGSEGV", "crashed"},
      {PLUGIN_BAD_ABORT, "R1,R3", "SIGABRT", "crashed"},
      {PLUGIN_BAD_HANG, "R1,R3", "no answer within 1 s", "hung"},
      {PLUGIN_BAD_OOB_WRITE, "R1,R3", "past the end of out|out: first corrupted byte 0 bytes past its end", "out_of_bounds"},
      {PLUGIN_BAD_CANARY, "R1,R3", "out: first corrupted byte", "out_of_bounds"},
      {PLUGIN_BAD_WRITES_Q, "R14,R3", "wrote into input q at element|wrote into input q at byte offset", "input_written"},
      {PLUGIN_BAD_NAN_OUT, "R1,R3", "non-finite", "non_finite"},
      {PLUGIN_BAD_REFUSES, "R1,R3", "refused the call", "refused"},
  };
  for (const Bad& b : bad) {
    const auto r = run_attnv(std::string("certify --kernel plugin:") + b.path + " --dtype f32 --timeout 1 --only " +
                                 b.requirements + " --json " + (dir / "c.json").string(),
                             dir);
    EXPECT_EQ(r.status, 1) << b.path << "\n" << r.output;
    EXPECT_TRUE(has_one_of(r.output, b.says)) << b.path << "\n" << r.output;
    EXPECT_TRUE(has(r.output, "R3 ")) << "certification stopped at the first failure\n" << r.output;
    EXPECT_TRUE(has(r.output, "NOT CERTIFIED")) << r.output;
    EXPECT_GT(fs::file_size(dir / "c.json"), 100u) << "the report is written even when the plugin misbehaves";
    std::ifstream json(dir / "c.json");
    const std::string doc((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(has(doc, std::string("\"kind\": \"") + b.kind + "\"")) << b.path << " should be a finding of kind " << b.kind;
    // A memory fault meets every requirement's calls: one finding (R14's for a written input, the
    // first result's otherwise); R3, which met only that fault, is not judged, not failed again.
    if (std::string(b.kind) == "input_written" || std::string(b.kind) == "out_of_bounds")
      EXPECT_TRUE(has(r.output, "NOT JUDGED")) << b.path << "\n" << r.output;
  }
  fs::remove_all(dir);
}

TEST(CertifyPlugins, UnloadablePluginsAreUsageErrors) {
  const fs::path dir = fresh_dir("certify_unloadable");
  auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_BAD_DECLARATION, dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "declares ATTNV_CAP_BACKWARD but backward is NULL")) << r.output;
  r = run_attnv("certify --kernel plugin:/nonexistent/libk.so", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "no such file")) << r.output;
  r = run_attnv(std::string("certify --kernel plugin:") + __FILE__, dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "invalid ELF header")) << r.output;
  // A plugin that crashes while it is loaded was attnv's "internal error", exit 3.
  r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_BAD_CTOR_ABORT, dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "cannot be loaded: it crashed with SIGABRT (abort) while loading")) << r.output;
  EXPECT_FALSE(has(r.output, "internal error")) << r.output;
  // A path that exists but is no file was "no such file".
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{dir.string(), "a directory"},
                                   {fifo.string(), "a FIFO"}, {"/dev/zero", "a character device"}}) {
    r = run_attnv("certify --kernel plugin:" + path, dir);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(has(r.output, "not a regular file (" + kind + ")")) << r.output;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv

namespace attnv {
namespace {

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// An ABI version 2 plugin that declines the odd head dimensions (supports()): certified, the
// declined cases counted in every form (terminal, JSON, JUnit, HTML), none of them a finding.
TEST(CertifyPluginsV2, DecliningSomeCasesIsCertifiedWithTheDeclinesCounted) {
  const fs::path dir = fresh_dir("certify_v2_declines");
  const auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_V2_DECLINES + " --jobs 2 --report " + dir.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "CERTIFIED: ")) << r.output;
  EXPECT_TRUE(has(r.output, "cases declined by the kernel (NOT SUPPORTED)")) << r.output;
  EXPECT_TRUE(has(r.output, "only even head dimensions are compiled")) << r.output;
  const std::string json = read_all(dir / "certificate.json");
  EXPECT_TRUE(has(json, "\"abi_version\": 2")) << "the certificate names the plugin's ABI version";
  EXPECT_TRUE(has(json, "\"why\": \"Dk = ")) << "every declined case is listed with its reason";
  EXPECT_FALSE(has(json, "\"cases_declined\": 0,"));
  const std::string junit = read_all(dir / "certificate.junit.xml");
  EXPECT_TRUE(has(junit, "cases declined by the kernel")) << junit.substr(0, 2000);
  EXPECT_FALSE(has(junit, "<failure"));
  EXPECT_TRUE(has(read_all(dir / "certificate.html"), "id=\"declined\""));
  fs::remove_all(dir);
}

// Declining everything is never certified; each requirement NOT SUPPORTED, a JUnit skip.
TEST(CertifyPluginsV2, DecliningEverythingIsNotCertified) {
  const fs::path dir = fresh_dir("certify_v2_all");
  const auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_V2_DECLINES +
                               " --kernel-option decline=all --only R1,R3 --junit " + (dir / "j.xml").string(),
                           dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "NOT CERTIFIED: the kernel declined what it claims: 2 NOT SUPPORTED (R1/f32, R3/f32)")) << r.output;
  EXPECT_TRUE(has(r.output, "claimed but declined in every case: dtype f32")) << r.output;
  const std::string junit = read_all(dir / "j.xml");
  EXPECT_TRUE(has(junit, "<skipped message=\"NOT SUPPORTED: the kernel declined")) << junit;
  EXPECT_TRUE(has(junit, "skipped=\"2\"")) << junit;
  fs::remove_all(dir);
}

// One build, two configurations: the option reaches the plugin (decline=softcap declines a
// feature it claims, so it is not certified) and is recorded in the certificate's provenance
// and in every command that reruns it.
TEST(CertifyPluginsV2, KernelOptionsChooseTheConfigurationAndAreRecorded) {
  const fs::path dir = fresh_dir("certify_v2_option");
  const auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_V2_DECLINES +
                               " --kernel-option decline=softcap --only R1,R3 --json " + (dir / "c.json").string(),
                           dir);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "claimed but declined in every case: softcap")) << r.output;
  EXPECT_TRUE(has(r.output, "--kernel-option decline=softcap --suite quick")) << "the rerun command keeps the option\n" << r.output;
  const std::string json = read_all(dir / "c.json");
  EXPECT_TRUE(has(json, "\"kernel_options\": [\n      {\n        \"key\": \"decline\",\n        \"value\": \"softcap\"")) << json.substr(0, 1500);
  EXPECT_TRUE(has(json, "\"uncovered\": true"));
  fs::remove_all(dir);
}

TEST(CertifyPluginsV2, BadKernelOptionsAreUsageErrors) {
  const fs::path dir = fresh_dir("certify_v2_bad_option");
  auto r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_V2_DECLINES + " --kernel-option decline=bogus", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "rejected --kernel-option decline=bogus: decline=bogus: expected odd_dk, softcap, all, none or broken")) << r.output;
  r = run_attnv(std::string("certify --kernel plugin:") + PLUGIN_EXAMPLE_MINIMAL + " --kernel-option a=b", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "takes no options (an ABI version 1 plugin), given --kernel-option a=b")) << r.output;
  r = run_attnv("certify --kernel builtin:naive --kernel-option a=b", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "only a plugin (plugin:PATH) takes options")) << r.output;
  // One value per --kernel-option: the folder after it stays repro's positional argument.
  r = run_attnv(std::string("repro --kernel plugin:") + PLUGIN_V2_DECLINES + " --kernel-option decline=none " +
                    (dir / "no_such_folder").string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "no_such_folder")) << r.output;
  EXPECT_FALSE(has(r.output, "--kernel-option")) << "the folder was not taken as an option value\n" << r.output;
  r = run_attnv(std::string("fuzz --kernel plugin:") + PLUGIN_V2_DECLINES + " --kernel-option novalue", dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--kernel-option 'novalue': expected KEY=VALUE")) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
