// attnv certify: hold a kernel to every conformance requirement its claims cover and print the
// certificate (properties/conformance/conformance.h for the requirements, report/ for the
// certificate's forms).
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>

#include "cli/certificate_output.h"
#include "cli/commands.h"
#include "cli/seed_option.h"
#include "cli/dtype_option.h"
#include "cli/kernel_spec.h"
#include "cli/output_target.h"
#include "cli/progress.h"
#include "problem/error.h"
#include "util/parallel.h"

namespace attnv::cli {
namespace {

struct CertifyArgs {
  std::string kernel;
  std::vector<std::string> dtypes;
  std::string suite = "quick";
  std::uint64_t seed = 20261121;
  std::vector<std::string> only;
  int jobs = 0;
  double timeout = 60;
  std::vector<std::string> kernel_options;  // --kernel-option KEY=VALUE, in order
  int max_findings = 1;
  bool stop_at_findings = false;
  OutputOptions out;
};

// The command line that reruns exactly this certification (the certificate prints it).
std::string reproduce_command(const CertifyArgs& a, const std::string& spec, const std::vector<DType>& dtypes) {
  std::ostringstream o;
  o << "attnv certify --kernel " << report::shell_quote(spec);
  for (const std::string& k : a.kernel_options) o << " --kernel-option " << report::shell_quote(k);
  o << " --suite " << a.suite << " --seed " << a.seed;
  if (!dtypes.empty()) {
    o << " --dtype ";
    for (std::size_t i = 0; i < dtypes.size(); ++i) o << (i ? "," : "") << dtype_name(dtypes[i]);
  }
  if (!a.only.empty()) {
    o << " --only ";
    for (std::size_t i = 0; i < a.only.size(); ++i) o << (i ? "," : "") << report::shell_quote(a.only[i]);
  }
  return o.str();
}

int run_certify(const CertifyArgs& a) {
  conformance::ConformanceOptions opt;
  opt.tier = conformance::parse_tier(a.suite);
  opt.seed = a.seed;
  opt.only = a.only;
  for (const std::string& id : a.only) conformance::requirement(id);  // InputError if unknown
  opt.max_findings = a.max_findings;
  opt.stop_at_findings = a.stop_at_findings;
  opt.threads = a.jobs > 0 ? a.jobs : default_threads();
  for (const std::string& d : a.dtypes) opt.dtypes.push_back(*parse_dtype(d));
  if (!a.out.report_dir.empty()) opt.save_failures_dir = (std::filesystem::path(a.out.report_dir) / "failures").string();

  prepare_outputs(a.out);
  const KernelChoice choice = parse_kernel_spec(a.kernel, {a.timeout, a.kernel_options});
  Progress progress(can_redraw(STDERR_FILENO));
  opt.on_result = [&progress](const conformance::RequirementResult& r, std::size_t done, std::size_t total) {
    progress.update(r, done, total);
  };
  opt.on_case = [&progress](const std::string& id, DType d, int run, int cases) { progress.on_case(id, d, run, cases); };
  report::Certificate cert;
  cert.report = conformance::run_conformance(choice.make, opt);
  progress.finish();
  cert.kernel = choice.info;
  cert.environment = kernel_environment(choice.info.spec);
  cert.command = report::in_environment(cert, reproduce_command(a, choice.info.spec, opt.dtypes));
  return emit_certificate(cert, a.out);
}

}  // namespace

void add_certify_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<CertifyArgs>();
  auto* cmd = app.add_subcommand("certify", "Certify a kernel: run every conformance requirement its claims cover");
  cmd->footer(
      "Runs the conformance requirements (R1, R2, ...: `attnv requirements`) on the kernel, for\n"
      "every dtype it claims (or --dtype), and prints the certificate: requirement x dtype PASS,\n"
      "FAIL or not claimed, the worst error/bound ratio, and a reproduce command per finding.\n"
      "A plugin runs in a worker process: a crash, hang, out-of-bounds write or write into its\n"
      "inputs is a finding, and certification goes on.\n"
      "A plugin of ABI version 2 may decline cases (supports()): NOT SUPPORTED, counted, never a\n"
      "finding; declining every case of a requirement or of a claimed feature is not certified.\n"
      "Exit status: 0 certified, 1 findings (or declined claims), 2 usage or input error, 3 attnv could not judge a\n"
      "requirement (attnv's own error, reported as ATTNV ERROR, never a finding against the kernel).\n"
      "Example: attnv certify --kernel builtin:core --suite quick --report cert/");
  cmd->add_option("--kernel", a->kernel, std::string("the kernel: ") + kKernelSpecForms)->type_name("KERNEL")->required();
  add_kernel_option_flag(*cmd, a->kernel_options);
  cmd->add_option("--dtype", a->dtypes, "storage dtypes (f64, f32, f16, bf16; default: every dtype the kernel claims)")
      ->check(dtype_validator())->delimiter(',');
  cmd->add_option("--suite", a->suite, "case counts per requirement: quick, standard or full")
      ->check(CLI::IsMember({"quick", "standard", "full"}))->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of every case stream (same seed, same cases, same JSON)")->check(seed_validator())->capture_default_str();
  cmd->add_option("--only", a->only, "requirements to run (ids or names: R5,no_leakage; default: all)")->delimiter(',');
  cmd->add_option("--jobs", a->jobs, "requirement x dtype jobs run at once (default: the CPU count)")->check(CLI::Range(1, 256));
  cmd->add_option("--timeout", a->timeout, "seconds a plugin call may take before it is reported as hung")
      ->check(CLI::Range(0.01, 86400.0))->capture_default_str();
  cmd->add_option("--max-findings", a->max_findings, "findings kept per requirement x dtype")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_flag("--stop-at-findings", a->stop_at_findings,
                "stop a requirement x dtype at its --max-findings-th failure (faster; the certificate then "
                "cannot say how many cases fail)");
  add_output_options(*cmd, a->out);
  cmd->callback([a, &exit_code] { exit_code = run_certify(*a); });
}

}  // namespace attnv::cli
