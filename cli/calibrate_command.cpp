// attnv calibrate: the error bound's calibration table (reference/bound/calibration.h).
#include <iostream>
#include <unistd.h>

#include "cli/commands.h"
#include "reference/bound/calibration.h"

namespace attnv::cli {

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<bound::CalibrationOptions>();
  auto include_f64 = std::make_shared<bool>(false);
  opt->cases_per_model = 4000;
  auto* cmd = app.add_subcommand("calibrate", "Print the error bound's calibration table on exactly emulated kernels");
  cmd->footer(
      "Run exactly emulated kernels (correct, and with planted precision bugs) on seeded case\n"
      "families and print, per precision model, max and p99 of error/bound for the correct\n"
      "kernels and the share of cases caught for each bug. Exit 1 if a correct kernel exceeds\n"
      "the bound, a bug goes uncaught, or the sign test misjudges truncation.");
  cmd->add_option("--cases", opt->cases_per_model, "cases per precision model")
      ->check(CLI::Range(1, 10000000))->capture_default_str();
  cmd->add_option("--seed", opt->first_seed, "first seed")->capture_default_str();
  cmd->add_flag("!--no-backward", opt->backward, "forward only");
  cmd->add_flag("--f64", *include_f64, "also calibrate f64 storage with f64 accumulation");
  cmd->callback([opt, include_f64, &exit_code] {
    if (*include_f64) opt->models = bound::standard_models(true);
    if (isatty(STDERR_FILENO))
      opt->progress = [](std::int64_t done, std::int64_t total) {
        if (done % 20 == 0 || done == total) std::cerr << "\r\033[K  " << done << " / " << total << std::flush;
      };
    const bound::CalibrationTable table = bound::calibrate(*opt);
    if (isatty(STDERR_FILENO)) std::cerr << "\r\033[K";
    std::cout << table.format();
    bool ok = true;
    for (const auto& m : table.models) {
      ok = ok && m.correct_failures == 0 && m.correct_non_finite == 0 && !m.sign_correct.biased &&
           m.sign_truncated.biased;
      for (const auto& b : m.bugs)
        if (b.bug != "truncate_output") ok = ok && (b.affected == 0 || b.caught > 0);
    }
    exit_code = ok ? 0 : 1;
  });
}

}  // namespace attnv::cli
