// End to end: `attnv fuzz` finds a planted bug in a mutant plugin, writes a reproducer that
// `attnv repro` confirms (exit 1) and that a correct kernel passes (exit 0); a failure that did not
// recur is never called fixed by repro (exit 2); runs clean on a
// correct kernel (exit 0); turns a segfaulting plugin into a finding (exit 1, attnv survives);
// rejects bad arguments with exit 2 and a message naming what is wrong.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnv_mutant_plugins.h"
#include "cli/tests/run_attnv.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;
using testing::has;
using testing::run_attnv;


std::string mutant_plugin(const std::string& name) {
  for (const AttnvMutantPlugin& p : kAttnvMutantPlugins)
    if (p.name == name) return p.path;
  throw std::runtime_error("no mutant plugin " + name);
}

// Sets an environment variable for the attnv processes a test starts, and takes it back.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(FuzzCommand, FindsAMutantPluginAndReproducesIt) {
  const fs::path dir = fresh_dir("fuzz_mutant");
  const std::string spec = "plugin:" + mutant_plugin("no_max_subtraction");
  const fs::path out = dir / "found";
  const auto r = run_attnv("fuzz --kernel " + spec + " --dtype f32 --max-time 40 --seed 1 --shrink-time 5 --out " + out.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "FOUND ")) << r.output;
  EXPECT_TRUE(has(r.output, "attnv repro --kernel ")) << r.output;
  EXPECT_TRUE(fs::exists(out / "manifest.json"));
  EXPECT_TRUE(fs::exists(out / "case" / "q.npy"));
  EXPECT_TRUE(fs::exists(out / "case" / "out.npy")) << "the kernel's own outputs are kept";
  EXPECT_TRUE(fs::exists(out / "case" / "ref_out.npy"));
  EXPECT_TRUE(fs::exists(out / "finding.txt"));
  EXPECT_TRUE(has(read_file(out / "manifest.json"), "\"recurred\": true")) << "a planted bug fails every time";

  const auto again = run_attnv("repro --kernel " + spec + " " + out.string(), dir);
  EXPECT_EQ(again.status, 1) << again.output;
  EXPECT_TRUE(has(again.output, "FAIL ")) << again.output;
  // The correct kernel passes the same case: the bug, once fixed, makes repro exit 0.
  const auto fixed = run_attnv("repro --kernel builtin:naive " + out.string(), dir);
  EXPECT_EQ(fixed.status, 0) << fixed.output;
  EXPECT_TRUE(has(fixed.output, "PASS")) << fixed.output;
  // The same kernel with kernel options is other code: not judged. (The mutant takes none, so
  // the folder is relabelled as found in the v2_declines plugin with no options.)
  std::string manifest = read_file(out / "manifest.json");
  const std::string found_in = "\"kernel\": \"" + spec + "\"";
  const std::size_t at = manifest.find(found_in);
  ASSERT_NE(at, std::string::npos) << manifest.substr(0, 2000);
  const std::string v2 = fs::absolute(PLUGIN_V2_DECLINES).lexically_normal().string();
  manifest.replace(at, found_in.size(), "\"kernel\": \"plugin:" + v2 + "\"");
  std::ofstream(out / "manifest.json") << manifest;
  const auto other = run_attnv("repro --kernel plugin:" + v2 + " --kernel-option decline=none " + out.string(), dir);
  EXPECT_EQ(other.status, 2) << other.output;
  EXPECT_TRUE(has(other.output, "recorded with kernel configuration none, and this run's v2_declines has "
                                "'--kernel-option decline=none'")) << other.output;
  EXPECT_FALSE(has(other.output, "PASS")) << other.output;
  // With its recorded configuration it is judged as far as its claims go (it claims no sinks).
  const auto same = run_attnv("repro --kernel plugin:" + v2 + " " + out.string(), dir);
  EXPECT_FALSE(has(same.output, "recorded with kernel configuration")) << same.output;
  EXPECT_TRUE(has(same.output, "kernel v2_declines does not claim")) << same.output;
  fs::remove_all(dir);
}

// The folder certify saves for a finding is judged again by the same requirement: a kernel that
// assumes dense BHTD strides fails R1 on a BTHD or gapped case, and repro on that folder keeps
// failing (it used to re-run the case as BHTD and exit 0, "passes"); so does a leak found by R5's
// perturbation, and a fully masked row's NaN or unwritten output (R7). The correct kernel passes
// the same folders: exit 0 means fixed.
TEST(FuzzCommand, ReproOfACertifyFindingFailsUntilTheKernelIsFixed) {
  const fs::path dir = fresh_dir("repro_certify");
  struct Planted {
    const char* mutant;
    const char* requirement;
  };
  // R7 too: a fixed kernel's repro of an R7 folder was said to exit 2 (issue 39, item 6); it passes.
  for (const Planted p : {Planted{"dense_strides_assumed", "R1"}, Planted{"mask_after_softmax", "R5"},
                          Planted{"nan_on_fully_masked", "R7"}, Planted{"empty_rows_unwritten", "R7"}}) {
    const std::string spec = "plugin:" + mutant_plugin(p.mutant);
    const fs::path report = dir / p.mutant;
    const auto r = run_attnv("certify --kernel " + spec + " --dtype f32 --only " + p.requirement +
                                 " --max-findings 2 --stop-at-findings --report " + report.string(),
                             dir);
    ASSERT_EQ(r.status, 1) << r.output;
    EXPECT_TRUE(has(r.output, "repro:     attnv repro --kernel " + spec)) << r.output;
    int folders = 0;
    for (const fs::directory_entry& f : fs::directory_iterator(report / "failures")) {
      ++folders;
      EXPECT_TRUE(has(read_file(f.path() / "manifest.json"), "\"recurred\": true")) << "a planted bug fails every time";
      const auto again = run_attnv("repro --kernel " + spec + " " + f.path().string(), dir);
      EXPECT_EQ(again.status, 1) << again.output;
      EXPECT_TRUE(has(again.output, "FAILS: " + std::string(p.requirement) + " still fails")) << again.output;
      const auto fixed = run_attnv("repro --kernel builtin:naive " + f.path().string(), dir);
      EXPECT_EQ(fixed.status, 0) << fixed.output;
      EXPECT_TRUE(has(fixed.output, "passes: " + std::string(p.requirement) + " holds")) << fixed.output;
    }
    EXPECT_EQ(folders, 2) << p.mutant;
  }
  fs::remove_all(dir);
}

// A failure is judged again only by the code that failed (Kernel::configuration()): the built-in
// core on the ISA path it was recorded on, a plugin with the options it was given. Other code is
// the same kernel's name on another kernel; its PASS would say "fixed" of a failure it never ran.
// A kernel of another name is judged. The folder of a mutant's finding is relabelled as a failure
// of the v2_declines plugin with options, then of the core's portable path (neither gives a
// finding of its own to record).
TEST(FuzzCommand, ReproJudgesOnlyTheConfigurationThatFailed) {
  const fs::path dir = fresh_dir("repro_configuration");
  const std::string spec = "plugin:" + mutant_plugin("dense_strides_assumed");
  const fs::path report = dir / "report";
  const auto r = run_attnv("certify --kernel " + spec + " --dtype f32 --only R1 --max-findings 1 --stop-at-findings --report " +
                               report.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  fs::path folder;
  for (const fs::directory_entry& f : fs::directory_iterator(report / "failures")) folder = f.path();
  ASSERT_FALSE(folder.empty()) << r.output;
  const std::string manifest = read_file(folder / "manifest.json");
  // The two fields as certify wrote them, replaced in place.
  const std::string name_field = "\"kernel\": \"dense_strides_assumed\"", config_field = "\"kernel_configuration\": \"\"";
  ASSERT_NE(manifest.find(name_field), std::string::npos) << manifest.substr(0, 2000);
  ASSERT_NE(manifest.find(config_field), std::string::npos) << manifest.substr(0, 2000);
  const auto relabel = [&](const std::string& kernel, const std::string& config) {
    std::string m = manifest;
    m.replace(m.find(name_field), name_field.size(), "\"kernel\": \"" + kernel + "\"");
    const std::size_t c = m.find(config_field);
    if (config == "(absent)")  // written before attnv recorded it
      m.replace(c, config_field.size(), "\"unread_old_field\": \"\"");
    else
      m.replace(c, config_field.size(), "\"kernel_configuration\": \"" + config + "\"");
    std::ofstream(folder / "manifest.json") << m;
  };

  relabel("v2_declines", "--kernel-option decline=none");
  const std::string v2 = std::string("repro --kernel plugin:") + PLUGIN_V2_DECLINES;
  auto run = run_attnv(v2 + " " + folder.string(), dir);
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_TRUE(has(run.output, "recorded with kernel configuration '--kernel-option decline=none', and this run's "
                              "v2_declines has none")) << run.output;
  EXPECT_FALSE(has(run.output, "passes")) << run.output;
  // With its recorded options it is judged as far as its claims go (it claims no bottom-right causal).
  run = run_attnv(v2 + " --kernel-option decline=none " + folder.string(), dir);
  EXPECT_FALSE(has(run.output, "recorded with kernel configuration")) << run.output;
  EXPECT_TRUE(has(run.output, "NOT JUDGED: not claimed")) << run.output;

  relabel("core", "ATTNV_CORE_ISA=portable");
  {
    const ScopedEnv same("ATTNV_CORE_ISA", "portable");
    run = run_attnv("repro --kernel builtin:core " + folder.string(), dir);
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_TRUE(has(run.output, "failed with kernel core, ATTNV_CORE_ISA=portable)")) << run.output;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    for (const char* env : {"avx2", ""}) {  // forced, and the default (the widest path, never portable here)
      const ScopedEnv other("ATTNV_CORE_ISA", env);
      run = run_attnv("repro --kernel builtin:core " + folder.string(), dir);
      EXPECT_EQ(run.status, 2) << env << "\n" << run.output;
      EXPECT_TRUE(has(run.output, "recorded with kernel configuration 'ATTNV_CORE_ISA=portable', and this run's core has "
                                  "'ATTNV_CORE_ISA=")) << run.output;
      EXPECT_TRUE(has(run.output, "run attnv repro again with ATTNV_CORE_ISA=portable")) << run.output;
      EXPECT_FALSE(has(run.output, "passes")) << run.output;
    }
  }
  // The same core built as a plugin: its worker names the path it runs (attnv_kernel's
  // configuration), so the plugin is held to the same rule.
  const std::string core_plugin = std::string("repro --kernel plugin:") + PLUGIN_CORE + " " + folder.string();
  {
    const ScopedEnv same("ATTNV_CORE_ISA", "portable");
    run = run_attnv(core_plugin, dir);
    EXPECT_EQ(run.status, 0) << run.output;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    const ScopedEnv other("ATTNV_CORE_ISA", "avx2");
    run = run_attnv(core_plugin, dir);
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_TRUE(has(run.output, "recorded with kernel configuration 'ATTNV_CORE_ISA=portable', and this run's core has "
                                "'ATTNV_CORE_ISA=avx2'")) << run.output;
  }
  // Another kernel is judged, and named: whether a correct kernel passes the case.
  run = run_attnv("repro --kernel builtin:naive " + folder.string(), dir);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "failed with kernel core, ATTNV_CORE_ISA=portable)")) << run.output;
  EXPECT_TRUE(has(run.output, "holds on this case with kernel naive")) << run.output;

  // Evidence from before attnv recorded the configuration is judged as this run has it, and says so.
  relabel("core", "(absent)");
  run = run_attnv("repro --kernel builtin:core " + folder.string(), dir);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(has(run.output, "as this run has it: the evidence does not record one")) << run.output;
  fs::remove_all(dir);
}

// attnv repro of bad_nan_once's failure in `folder`: passing now (the marker gone) is neither fixed
// nor failing (exit 2, `neither` said), and failing again (the marker back) still fails (exit 1).
void expect_no_fix_until_it_fails_again(const std::string& spec, const fs::path& folder, const fs::path& marker,
                                        const fs::path& dir, const std::string& neither, const std::string& fails) {
  const auto passed = run_attnv("repro --kernel " + spec + " " + folder.string(), dir);
  EXPECT_EQ(passed.status, 2) << passed.output;
  EXPECT_TRUE(has(passed.output, "  PASS")) << passed.output;
  EXPECT_TRUE(has(passed.output, "this pass is no evidence of a fix")) << passed.output;
  EXPECT_TRUE(has(passed.output, neither)) << passed.output;
  EXPECT_FALSE(has(passed.output, "attnv repro: passes")) << passed.output;
  std::ofstream(marker) << "fail once more\n";
  const auto failed = run_attnv("repro --kernel " + spec + " " + folder.string(), dir);
  EXPECT_EQ(failed.status, 1) << failed.output;
  EXPECT_TRUE(has(failed.output, fails)) << failed.output;
}

// A kernel that fails a case once and passes it after (bad_nan_once: NaN on the call that finds a
// marker file, which that call removes; a race looks like this from outside). attnv fuzz finds
// it, judges the case again, sees it pass: the case is not shrunk, and the reproducer records that
// the failure did not recur. attnv repro then does not call the kernel's next pass a fix (exit 2,
// neither fixed nor failing), while a run that fails it again still fails (exit 1).
TEST(FuzzCommand, APassOfAFailureThatDidNotRecurIsNoFix) {
  const fs::path dir = fresh_dir("fuzz_nan_once");
  const fs::path marker = dir / "marker", out = dir / "found";
  const std::string spec = std::string("plugin:") + PLUGIN_BAD_NAN_ONCE;
  const ScopedEnv env("ATTNV_TEST_NAN_ONCE_MARKER", marker.c_str());
  std::ofstream(marker) << "fail once\n";
  const auto r = run_attnv("fuzz --kernel " + spec + " --max-time 20 --shrink-time 2 --out " + out.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "FOUND ")) << r.output;
  EXPECT_TRUE(has(r.output, "not shrunk: judged again, this case did not fail the same way")) << r.output;
  EXPECT_FALSE(fs::exists(marker)) << "the one failing call happened";
  EXPECT_TRUE(has(read_file(out / "manifest.json"), "\"recurred\": false")) << read_file(out / "manifest.json");

  expect_no_fix_until_it_fails_again(spec, out, marker, dir, "neither fixed nor failing: 0 of 1 case failed",
                                     "attnv repro: FAILS: 1 of 1 case failed");
  fs::remove_all(dir);
}

// The same for certify's evidence: R1's first call meets the marker and fails; judged again at
// once, the case passes, so the finding says the kernel is not deterministic there and the
// evidence records it; attnv repro does not call the next pass a fix. A planted bug that fails
// every time is recorded as recurring (ReproOfACertifyFindingFailsUntilTheKernelIsFixed's
// folders), and repro of a correct kernel on those says fixed.
TEST(FuzzCommand, ACertifyFindingThatDidNotRecurIsNoFix) {
  const fs::path dir = fresh_dir("certify_nan_once");
  const fs::path marker = dir / "marker", report = dir / "report";
  const std::string spec = std::string("plugin:") + PLUGIN_BAD_NAN_ONCE;
  const ScopedEnv env("ATTNV_TEST_NAN_ONCE_MARKER", marker.c_str());
  std::ofstream(marker) << "fail once\n";
  const auto r = run_attnv("certify --kernel " + spec + " --dtype f32 --only R1 --report " + report.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "judged again at once, this case did not fail the same way")) << r.output;
  std::vector<fs::path> folders;
  for (const fs::directory_entry& f : fs::directory_iterator(report / "failures")) folders.push_back(f.path());
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_TRUE(has(read_file(folders[0] / "manifest.json"), "\"recurred\": false")) << read_file(folders[0] / "manifest.json");
  EXPECT_TRUE(has(read_file(folders[0] / "finding.txt"), "not deterministic here")) << read_file(folders[0] / "finding.txt");

  expect_no_fix_until_it_fails_again(spec, folders[0], marker, dir, "neither fixed nor failing: R1 holds on this case",
                                     "FAILS: R1 still fails");
  fs::remove_all(dir);
}

TEST(FuzzCommand, CorrectKernelRunsCleanUntilTheTimeIsUp) {
  const fs::path dir = fresh_dir("fuzz_naive");
  const auto r = run_attnv("fuzz --kernel builtin:naive --max-time 3 --jobs 2 --out " + (dir / "out").string(), dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "no finding: ")) << r.output;
  EXPECT_TRUE(has(r.output, " execs (")) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out")) << "nothing to reproduce, nothing written";
  fs::remove_all(dir);
}

TEST(FuzzCommand, ASegfaultingPluginIsAFindingNotACrash) {
  const fs::path dir = fresh_dir("fuzz_segv");
  const fs::path out = dir / "found";
  const std::string spec = std::string("plugin:") + PLUGIN_BAD_SEGV;
  const auto r = run_attnv("fuzz --kernel " + spec + " --max-time 20 --shrink-time 2 --out " + out.string(), dir);
  ASSERT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r.output, "FOUND crashed")) << r.output;
  EXPECT_TRUE(has(r.output, "SIGSEGV") || has(r.output, "signal")) << r.output;
  const auto again = run_attnv("repro --kernel " + spec + " " + out.string(), dir);
  EXPECT_EQ(again.status, 1) << again.output;
  fs::remove_all(dir);
}

TEST(FuzzCommand, BadArgumentsExitTwoNamingWhatIsWrong) {
  const fs::path dir = fresh_dir("fuzz_args");
  const std::string segv = std::string("plugin:") + PLUGIN_BAD_SEGV;
  struct Bad {
    std::string args, message;
  };
  const Bad bad[] = {
      {"fuzz --kernel builtin:nope", "unknown kernel 'builtin:nope' (use builtin:core, builtin:naive or plugin:PATH)"},
      {"fuzz --kernel " + segv + " --dtype f16", "--dtype f16: kernel "},
      {"fuzz --kernel " + segv + " --dtype f16", "does not claim it (it claims f32)"},
      {"fuzz --kernel builtin:naive --dtype f8", "'f8' is not a dtype (use f64, f32, f16 or bf16)"},
      {"fuzz --kernel builtin:naive --corpus " + (dir / "nowhere").string(), "/nowhere: not a folder"},
      {"fuzz --dtype f32", "--kernel is required"},
      {"fuzz --kernel builtin:naive --out " + (dir / "attnv.log").string(), "attnv.log: exists and is not a folder"},
      // No time for one input: "no finding" would be a PASS with no evidence.
      {"fuzz --kernel builtin:naive --max-time 0 --out " + (dir / "none").string(), "nothing was judged: no input ran within --max-time 0 s"},
      {"repro --kernel builtin:naive " + (dir / "nowhere").string(), "nowhere"},
  };
  for (const Bad& b : bad) {
    const auto r = run_attnv(b.args, dir);
    EXPECT_EQ(r.status, 2) << b.args << "\n" << r.output;
    EXPECT_TRUE(has(r.output, b.message)) << b.args << "\nexpected: " << b.message << "\ngot: " << r.output;
  }
  fs::remove_all(dir);
}

// A version 2 plugin's declines are skipped and counted, never findings (its forward refuses a
// declined problem, so one call of it would be a "refused" finding); declining every input is
// not "no finding" but nothing judged.
TEST(FuzzCommand, DeclinedCasesAreSkippedAndCounted) {
  const fs::path dir = fresh_dir("fuzz_v2_declines");
  auto r = run_attnv(std::string("fuzz --kernel plugin:") + PLUGIN_V2_DECLINES + " --max-time 2 --jobs 1 --out " +
                         (dir / "out").string(), dir);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "no finding")) << r.output;
  EXPECT_FALSE(has(r.output, " (0 declined by the kernel)")) << r.output;
  EXPECT_TRUE(has(r.output, "declined by the kernel)")) << r.output;
  r = run_attnv(std::string("fuzz --kernel plugin:") + PLUGIN_V2_DECLINES + " --kernel-option decline=all --max-time 1 --jobs 1 --out " +
                    (dir / "out2").string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "nothing was judged: every input was skipped")) << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnv
