// attnv repro: judge the cases of an exchange folder again (typically what `attnv fuzz` left)
// with the same oracle: exit 1 while the kernel still fails one, 0 once it passes them all.
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/kernel_spec.h"
#include "cli/reproducer.h"
#include "core/core_kernel.h"
#include "fuzz/numeric/oracle.h"
#include "io/exchange.h"
#include "io/text.h"
#include "problem/error.h"

namespace attnv::cli {
namespace {

struct ReproArgs {
  std::string kernel;
  std::string dir;
  double timeout = 60;
};

int run_repro(const ReproArgs& a) {
  const KernelChoice choice = parse_kernel_spec(a.kernel, {a.timeout});
  const bool plugin = choice.info.spec.rfind("plugin:", 0) == 0;
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(a.dir);
  if (cases.empty()) throw InputError(a.dir + ": the manifest lists no case");
  std::unique_ptr<Kernel> k = choice.info.spec == "builtin:core"
                                  ? std::make_unique<core::CoreKernel>(core::ForwardOptions{.threads = 1})
                                  : choice.make();
  const Capabilities caps = k->capabilities();
  fuzz::OracleOptions opt;
  opt.fp = plugin ? fuzz::FpCheck::off : fuzz::FpCheck::flags;

  int failed = 0;
  for (const io::ExchangeCase& ec : cases) {
    const Case& c = ec.c;
    if (const std::string why = caps.unsupported(c.problem); !why.empty())
      throw InputError("case '" + c.id + "' (" + describe(c.problem) + "): kernel " + choice.info.name +
                       " does not claim " + why);
    Layout layout = reproducer_layout(ec);
    std::string note;
    if (layout != Layout::bhtd && !caps.strided) {
      note = " (layout " + std::string(layout_name(layout)) + " asked for; the kernel only claims dense bhtd)";
      layout = Layout::bhtd;
    }
    if (c.has_dout() && !caps.backward) note += " (case has dout; the kernel claims no backward: forward only)";
    const fuzz::Verdict v = fuzz::judge_case(*k, c, layout, opt);
    if (!v.judged)
      throw InputError("case '" + c.id + "': cannot be judged: " + v.skipped_why);
    std::cout << "case " << io::printable(c.id) << ": " << fuzz::case_line(c, layout) << (v.backward ? ", forward and backward" : ", forward")
              << note << '\n';
    if (v.finding) {
      ++failed;
      const fuzz::Finding& f = *v.finding;
      // The message may quote the plugin's own error text: printable, newlines kept.
      std::cout << "  FAIL " << fuzz::finding_kind_id(f.kind) << ": " << io::printable(indent_lines(f.message, "    "), true)
                << '\n';
      if (!f.worst.empty()) std::cout << "  worst: " << io::printable(f.worst, true) << '\n';
    } else {
      std::cout << "  PASS: worst error/bound ratio " << v.comparison.worst_ratio() << "\n    "
                << indent_lines(v.comparison.summary(), "    ") << '\n';
    }
  }
  std::cout << (failed ? "attnv repro: FAILS: " : "attnv repro: passes: ") << failed << " of " << cases.size()
            << " case" << (cases.size() == 1 ? "" : "s") << " failed with kernel " << io::printable(choice.info.name) << '\n';
  return failed ? 1 : 0;
}

}  // namespace

void add_repro_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReproArgs>();
  auto* cmd = app.add_subcommand("repro", "Judge the cases of an exchange folder again (a reproducer from attnv fuzz)");
  cmd->footer(
      "Runs the kernel on every case of DIR (forward, and backward when the case has dout and\n"
      "the kernel claims it, in the layout the reproducer recorded) and judges it as `attnv\n"
      "fuzz` does: the exact reference and the error bound of the kernel's precision model,\n"
      "NaN, written inputs, determinism, crashes.\n"
      "Exit status: 0 every case passes (the bug is fixed), 1 a case still fails, 2 usage or input error.\n"
      "Example: attnv repro --kernel plugin:./libmykernel.so attnv-fuzz-out");
  cmd->add_option("--kernel", a->kernel, std::string("the kernel: ") + kKernelSpecForms)->required();
  cmd->add_option("DIR", a->dir, "exchange folder (manifest.json and case folders)")->required();
  cmd->add_option("--timeout", a->timeout, "seconds a plugin call may take before it is reported as hung")
      ->check(CLI::Range(0.01, 86400.0))->capture_default_str();
  cmd->callback([a, &exit_code] { exit_code = run_repro(*a); });
}

}  // namespace attnv::cli
