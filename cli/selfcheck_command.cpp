// attnv selfcheck: the reference self-check (selfcheck/selfcheck.h).
#include <iostream>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/seed_option.h"
#include "cli/dtype_option.h"
#include "selfcheck/selfcheck.h"

namespace attnv::cli {

void add_selfcheck_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<selfcheck::SelfCheckOptions>();
  auto dtypes = std::make_shared<std::vector<std::string>>(std::vector<std::string>{"f32", "f16", "bf16"});
  auto* cmd = app.add_subcommand("selfcheck", "Check the fast reference against the multiprecision oracle on adversarial case families");
  cmd->footer(
      "Check the fast double-double reference against the multiprecision oracle, element by\n"
      "element, on every adversarial case family; report mismatches (must be 0) and the worst\n"
      "error of a plain f64 naive attention on the same cases. Exit 0 pass, 1 mismatches, 2 a\n"
      "family compared nothing (NOT EXERCISED: no evidence either way).");
  cmd->add_option("--cases", opt->cases_per_family, "small cases per family and dtype (every row checked)")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  cmd->add_option("--medium-cases", opt->medium_cases_per_family,
                  "realistic-size cases per family and dtype (sampled rows)")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  cmd->add_option("--rows", opt->rows_per_medium_case, "oracle rows sampled per realistic-size case")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--seed", opt->seed, "first seed")->check(seed_validator())->capture_default_str();
  cmd->add_option("--dtype", *dtypes, "storage dtypes (f64, f32, f16, bf16)")
      ->check(dtype_validator())->delimiter(',')->capture_default_str();
  cmd->add_flag("!--no-backward", opt->backward, "skip the dQ, dK, dV comparison");
  cmd->callback([opt, dtypes, &exit_code] {
    opt->dtypes.clear();
    for (const auto& d : *dtypes) opt->dtypes.push_back(*parse_dtype(d));
    const bool tty = isatty(STDERR_FILENO);
    std::int64_t done = 0;
    if (tty)
      opt->progress = [&done](const std::string& id) { std::cerr << "\r\033[K  case " << ++done << ": " << id << std::flush; };
    const selfcheck::SelfCheckReport r = selfcheck::run_selfcheck(*opt);
    if (tty) std::cerr << "\r\033[K";
    selfcheck::print_selfcheck(r, std::cout);
    exit_code = r.total().mismatches > 0 ? 1 : r.not_exercised().empty() ? 0 : 2;
  });
}

}  // namespace attnv::cli
