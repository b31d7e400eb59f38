// attnv repro: judge a saved failure again, the same way it was judged: the evidence folder of a
// certify / cases check finding with its requirement's check (properties/conformance/evidence.h),
// or the cases of an exchange folder (what `attnv fuzz` left) with the fuzz differential judge. Exit 1 while
// the kernel still fails, 0 once it passes; a pass of a case whose failure did not recur when it
// was judged again at once (by certify or attnv fuzz) is neither (exit 2): the kernel passed that
// case then too.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/kernel_spec.h"
#include "properties/conformance/evidence_repro.h"
#include "fuzz/search/fuzz_run.h"
#include "core/core_kernel.h"
#include "fuzz/numeric/differential_judge.h"
#include "properties/conformance/evidence.h"
#include "io/exchange.h"
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

int run_repro(const ReproArgs& a) {
  const KernelChoice choice = parse_kernel_spec(a.kernel, {a.timeout, a.kernel_options});
  const bool plugin = choice.info.spec.rfind("plugin:", 0) == 0;
  const std::optional<conformance::Evidence> e = conformance::read_evidence(a.dir);
  const std::vector<io::ExchangeCase> cases = e ? std::vector<io::ExchangeCase>{} : io::read_exchange_cases(a.dir);
  if (!e && cases.empty()) throw InputError(a.dir + ": the manifest lists no case");
  std::unique_ptr<Kernel> k = make_kernel(choice);
  if (e) return conformance::rejudge_evidence(*k, *e, choice.info.name, a.dir, std::cout);
  fuzz::DifferentialOptions opt;
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
