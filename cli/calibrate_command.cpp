// attnv calibrate: the error bound's calibration table (calibration/calibration.h).
#include <iostream>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/seed_option.h"
#include "calibration/calibration.h"

namespace attnv::cli {

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto opt = std::make_shared<calibration::CalibrationOptions>();
  auto include_f64 = std::make_shared<bool>(false);
  opt->cases_per_model = 4000;
  auto* cmd = app.add_subcommand("calibrate", "Print the error bound's calibration table on exactly emulated kernels");
  cmd->footer(
      "Run exactly emulated kernels (correct, and with planted precision bugs) on seeded case\n"
      "families and print, per precision model, max and p99 of error/bound for the correct\n"
      "kernels and the share of cases caught for each bug. Exit 1 if the bound is unsound: a\n"
      "correct kernel exceeds it or is non-finite where the exact value is finite, or the sign test\n"
      "flags a correct kernel as biased. Catch shares are reported, not judged: they depend on the\n"
      "model (a model that rounds P to bf16 legitimately allows most of an f16 accumulator's error)\n"
      "and on the number of cases (the sign test needs ~60 affected cases to flag truncation at\n"
      "p < 1e-6); the test suite asserts them with derived thresholds (reference/bound/BOUND.md).");
  cmd->add_option("--cases", opt->cases_per_model, "cases per precision model")
      ->check(CLI::Range(1, 10000000))->capture_default_str();
  cmd->add_option("--seed", opt->first_seed, "first seed")->check(seed_validator())->capture_default_str();
  cmd->add_flag("!--no-backward", opt->backward, "forward only");
  cmd->add_flag("--f64", *include_f64, "also calibrate f64 storage with f64 accumulation");
  cmd->callback([opt, include_f64, &exit_code] {
    if (*include_f64) opt->models = calibration::standard_models(true);
    if (isatty(STDERR_FILENO))
      opt->progress = [](std::int64_t done, std::int64_t total) {
        if (done % 20 == 0 || done == total) std::cerr << "\r\033[K  " << done << " / " << total << std::flush;
      };
    const calibration::CalibrationTable table = calibration::calibrate(*opt);
    if (isatty(STDERR_FILENO)) std::cerr << "\r\033[K";
    std::cout << table.format();
    bool ok = true;
    for (const auto& m : table.models)
      ok = ok && m.correct_failures == 0 && m.correct_non_finite == 0 && !m.sign_correct.biased;
    exit_code = ok ? 0 : 1;
  });
}

}  // namespace attnv::cli
