// Runs a calibration and prints its table: attnv_bound_calibrate [cases_per_model] [first_seed]
// [fwd] [f64]. The CLI exposes the same function; this is the bound owner's direct driver.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "calibration/calibration.h"

int main(int argc, char** argv) {
  attnv::calibration::CalibrationOptions opt;
  if (argc > 1) opt.cases_per_model = std::atoll(argv[1]);
  if (argc > 2) opt.first_seed = std::strtoull(argv[2], nullptr, 10);
  bool f64 = false;
  for (int a = 3; a < argc; ++a) {
    if (!std::strcmp(argv[a], "fwd")) opt.backward = false;
    if (!std::strcmp(argv[a], "f64")) f64 = true;
  }
  opt.models = attnv::calibration::standard_models(f64);
  opt.progress = [](std::int64_t done, std::int64_t total) {
    if (done % 50 == 0 || done == total) std::fprintf(stderr, "\r%lld/%lld cases", static_cast<long long>(done), static_cast<long long>(total));
  };
  const auto table = attnv::calibration::calibrate(opt);
  std::fprintf(stderr, "\n");
  std::cout << table.format();
  for (const auto& m : table.models)
    std::cout << m.model.name << ": worst fwd case " << m.fwd_worst_case << ", worst bwd case "
              << m.bwd_worst_case << "\n";
  return 0;
}
