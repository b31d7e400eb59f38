// attnv repro: judge a saved failure again, the same way it was judged: the evidence folder of a
// certify / cases check finding with its requirement's check (properties/conformance/evidence.h),
// or the cases of an exchange folder (what `attnv fuzz` left) with the fuzz oracle. Exit 1 while
// the kernel still fails, 0 once it passes; a pass of a case whose failure did not recur when it
// was judged again at once (by certify or attnv fuzz) is neither (exit 2): the kernel passed that
// case then too.
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/kernel_spec.h"
#include "fuzz/search/fuzz_run.h"
#include "fuzz/search/reproducer.h"
#include "report/certificate.h"
#include "core/core_kernel.h"
#include "fuzz/numeric/oracle.h"
#include "properties/conformance/evidence.h"
#include "io/exchange.h"
#include "io/text.h"
#include "problem/error.h"

namespace attnv::cli {
namespace {

struct ReproArgs {
  std::string kernel;
  std::string dir;
  double timeout = 60;
  std::vector<std::string> kernel_options;  // --kernel-option KEY=VALUE, in order
};

std::unique_ptr<Kernel> make_kernel(const KernelChoice& choice) {
  return choice.info.spec == "builtin:core" ? std::make_unique<core::CoreKernel>(core::ForwardOptions{.threads = 1})
                                            : choice.make();
}

// A certify / cases check failure: its requirement judges the saved case again. Only a judged
// result decides: PASS is "fixed", FAIL is "still fails"; a case the check cannot judge with this
// kernel (not claimed, nothing exercised), or evidence that no longer matches what the check
// does, is neither, and exits 2.
int rejudge_evidence(const conformance::Evidence& e, const KernelChoice& choice, const std::string& dir) {
  std::unique_ptr<Kernel> k = make_kernel(choice);
  const bool same_kernel = e.kernel == k->name();
  fuzz::require_same_configuration(e.kernel_configuration, same_kernel, *k, dir);
  const std::string config =
      e.kernel_configuration ? *e.kernel_configuration : (same_kernel ? k->configuration() : std::string());
  std::cout << "evidence: " << io::printable(e.id) << ' ' << io::printable(e.property) << " on " << dtype_name(e.dtype)
            << ", case " << e.case_index << " of seed " << e.suite_seed << " (failed with kernel "
            << io::printable(e.kernel) << (config.empty() ? "" : ", " + io::printable(config))
            << (e.kernel_configuration || config.empty() ? "" : " as this run has it: the evidence does not record one")
            << ")\ncase: " << io::printable(e.pc.c.id) << ", layout " << layout_name(e.pc.layout)
            << ", " << e.runs.size() << " recorded call" << (e.runs.size() == 1 ? "" : "s") << '\n';
  const conformance::Rejudgement j = conformance::rejudge(*k, e);
  if (!j.mismatch.empty())
    throw InputError(dir + ": attnv's own error, not the kernel's: the check no longer makes the calls this evidence "
                     "recorded (" + j.mismatch + "); it was written by another attnv version, or edited");
  const props::PropertyResult& r = j.result;
  const std::string kernel = io::printable(choice.info.name);
  if (r.status == props::Status::attnv_error) {
    std::cout << "  ATTNV ERROR: " << io::printable(r.message, true) << '\n'
              << "attnv repro: attnv could not judge this case (its own error, not the kernel's): neither fixed nor failing\n";
    return 3;
  }
  if (!r.judged()) {
    std::cout << "  NOT JUDGED: " << io::printable(r.message, true) << '\n';
    throw InputError("attnv repro: " + e.id + " cannot judge this case with kernel " + kernel +
                     ": neither fixed nor failing (" + r.message + ")");
  }
  if (!r.ok) {
    std::cout << "  FAIL: " << io::printable(fuzz::indent_lines(r.message, "    "), true) << '\n';
    if (!r.worst.empty()) std::cout << "  worst: " << io::printable(r.worst, true) << '\n';
    std::cout << "attnv repro: FAILS: " << e.id << " still fails this case with kernel " << kernel << '\n';
    return 1;
  }
  std::cout << "  PASS" << (r.message.empty() ? "" : ": " + io::printable(r.message, true)) << '\n';
  if (e.recurred == false) {
    std::cout << "  but when the certifier judged this case again after it failed, it passed then too: this pass is "
                 "no evidence of a fix\n";
    throw InputError("attnv repro: neither fixed nor failing: " + e.id + " holds on this case with kernel " + kernel +
                     " now, but the case did not fail the same way when it was judged again at once after failing "
                     "(the kernel is not deterministic there), so passing it now does not show the bug gone; run "
                     "the certification again to look for it");
  }
  std::cout << "attnv repro: passes: " << e.id << " holds on this case with kernel " << kernel << " (" << j.runs_compared
            << " call" << (j.runs_compared == 1 ? "" : "s") << " checked against the evidence's inputs)\n";
  return 0;
}

int run_repro(const ReproArgs& a) {
  const KernelChoice choice = parse_kernel_spec(a.kernel, {a.timeout, a.kernel_options});
  const bool plugin = choice.info.spec.rfind("plugin:", 0) == 0;
  if (const std::optional<conformance::Evidence> e = conformance::read_evidence(a.dir)) return rejudge_evidence(*e, choice, a.dir);
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(a.dir);
  if (cases.empty()) throw InputError(a.dir + ": the manifest lists no case");
  std::unique_ptr<Kernel> k = make_kernel(choice);
  fuzz::OracleOptions opt;
  opt.fp = plugin ? fuzz::FpCheck::off : fuzz::FpCheck::flags;
  return fuzz::rejudge_reproducer(*k, cases, opt, choice.info.spec, choice.info.name, std::cout);
}

}  // namespace

void add_repro_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReproArgs>();
  auto* cmd = app.add_subcommand("repro", "Judge a saved failure again (a certify finding's folder, or attnv fuzz's reproducer)");
  cmd->footer(
      "A folder saved by certify or cases check (REPORT_DIR/failures/R5_no_leakage_f32_case17):\n"
      "the same requirement judges the same case again, in the same layout, with the same\n"
      "perturbation, and the calls it makes are checked against the inputs the folder recorded.\n"
      "A reproducer of attnv fuzz: the kernel runs every case of DIR (forward, and backward when\n"
      "the case has dout and the kernel claims it, in the recorded layout), judged as `attnv\n"
      "fuzz` does: the exact reference and the error bound of the kernel's precision model, NaN,\n"
      "written inputs, determinism, crashes.\n"
      "The kernel that failed must run in the configuration it was recorded with (the built-in\n"
      "core's ATTNV_CORE_ISA path, a plugin's --kernel-option flags): other code is another kernel.\n"
      "Exit status: 0 it passes (the bug is fixed), 1 it still fails, 2 usage or input error,\n"
      "another configuration, a case the kernel's claims no longer let the requirement judge, or a\n"
      "pass of a case whose failure did not recur when it was judged again at once after\n"
      "failing (no evidence of a fix), 3 attnv could not judge it (attnv's own error).\n"
      "Example: attnv repro --kernel plugin:./libmykernel.so report/failures/R1_matches_reference_f32_case3");
  cmd->add_option("--kernel", a->kernel, std::string("the kernel: ") + kKernelSpecForms)->type_name("KERNEL")->required();
  add_kernel_option_flag(*cmd, a->kernel_options);
  cmd->add_option("DIR", a->dir, "a failure's evidence folder, or an exchange folder (manifest.json and case folders)")->required();
  cmd->add_option("--timeout", a->timeout, "seconds a plugin call may take before it is reported as hung")
      ->check(CLI::Range(0.01, 86400.0))->capture_default_str();
  cmd->callback([a, &exit_code] { exit_code = run_repro(*a); });
}

}  // namespace attnv::cli
