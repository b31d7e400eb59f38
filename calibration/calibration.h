#pragma once
// Calibration of the bound (BOUND.md section 9): emulated kernels, correct and with planted
// bugs, run on seeded family cases and compared with the exact outputs under the bound. The
// correct kernels must never exceed it; each bug must be caught in the share BOUND.md states.
// Library attnv_calibration (links the fast reference and the generators; attnv_bound does not).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gen/families.h"
#include "kernels/emulated/emulated.h"
#include "reference/bound/bound.h"

namespace attnv::calibration {

// A kernel structure in a precision model, named for the table ("bf16 tiled64 P=bf16").
struct CalibrationModel {
  std::string name;
  kernels::emulated::Config kernel;  // bugs all off: the correct kernel
};

// f32, f16, bf16 storage with f32 accumulation; naive and tiled (block 64); for f16 and bf16
// also P rounded to the storage dtype. With include_f64: f64 storage and accumulation too.
std::vector<CalibrationModel> standard_models(bool include_f64 = false);

struct CalibrationOptions {
  std::int64_t cases_per_model = 200;
  gen::Size size = gen::Size::medium;
  std::uint64_t first_seed = 1;
  std::vector<gen::Family> families;  // empty: gen::all_families(), cycled
  bool backward = true;               // also calibrate dQ, dK, dV and the dK-scale bug
  std::vector<CalibrationModel> models;  // empty: standard_models()
  // Exact outputs of a case (forward only, or forward and backward). Empty: the fast
  // reference (reference::fast_forward / reference::fast_backward).
  std::function<Outputs(const Case&, bool backward)> exact;
  // Called after each case with (model index, case index) progress; may be empty.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct BugResult {
  std::string bug;             // "pv_accum_f16", "sloppy_exp", "d_model_scale", "truncate_output", "dk_missing_scale"
  std::int64_t cases = 0;      // cases run
  // Cases where the buggy kernel's compared tensors differ from the correct kernel's in at least
  // one element: a bug that changes nothing cannot be caught by any checker (one key, a one-hot
  // row, a fully masked case, truncating a value already representable).
  std::int64_t affected = 0;
  std::int64_t caught = 0;     // cases with at least one element outside the bound
  double share() const { return affected ? static_cast<double>(caught) / static_cast<double>(affected) : 0; }
};

struct ModelResult {
  CalibrationModel model;
  std::int64_t cases = 0;
  // Per-case worst |error| / threshold of the correct kernel: forward (out, lse) and backward
  // (dq, dk, dv); max and 99th percentile over cases.
  double fwd_max = 0, fwd_p99 = 0, bwd_max = 0, bwd_p99 = 0;
  // Max over cases of TensorReport::worst_bound_usage: the share of b used beyond the roundings.
  double fwd_usage = 0, bwd_usage = 0;
  std::string fwd_worst_case, bwd_worst_case;  // case ids of the maxima
  std::int64_t correct_failures = 0;           // cases the correct kernel failed (must be 0)
  std::int64_t correct_non_finite = 0;
  std::vector<BugResult> bugs;
  bound::SignTest sign_correct;    // sign test of the correct kernel's O (must not be biased)
  bound::SignTest sign_truncated;  // sign test of the truncating kernel's O (must be biased)
};

struct CalibrationTable {
  std::vector<ModelResult> models;
  std::string format() const;  // a plain-text table, one line per model
};

CalibrationTable calibrate(const CalibrationOptions& opt);

}  // namespace attnv::calibration
