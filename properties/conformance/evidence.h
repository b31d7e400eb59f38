#pragma once
// The evidence folder of a failure: everything a requirement's judgement rested on, so the
// failure can be read without attnv and judged again by `attnv repro` (which exits 1 while the
// same requirement still fails the same case, 0 once it passes).
//
// An exchange folder (docs/exchange-format.md) holding:
//   case/     the drawn case (inputs only), meta.attnv_requirement = {id, property, dtype,
//             suite_seed, case_index, layout, check_seed, family, case_id, kernel,
//             kernel_configuration, recurred}: what the judgement needs beyond the tensors (the
//             check's seed picks its perturbation; the configuration, Kernel::configuration(),
//             which code of the kernel failed; recurred, whether the case failed the same way
//             when judged again at once, absent when it was not judged again);
//   run1/ ... every kernel call the check made, in order: the inputs exactly as the kernel got
//             them (perturbations included: both runs of a metamorphic check), the kernel's
//             outputs (out.npy, lse.npy, ...), and, where the check judged that call against the
//             reference, the exact values (ref_*.npy, f64) and the bounds (bound_*.npy, f64);
//             meta.attnv_run = {index, layout, backward, decode, id}; a decode call (R21) is
//             recorded as the forward it must equal (the cache's keys up to that call);
//   exact1/ ... a reference the check computed for inputs no call had (rare);
//   finding.txt  the finding as the certificate states it.
// R15's campaign has no evidence folder (its reproduce line reruns it).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "problem/kernel.h"
#include "properties/checks/property_result.h"
#include "properties/checks/recording.h"
#include "properties/conformance/conformance.h"

namespace attnv::conformance {

struct Evidence {
  std::string id, property;  // "R5", "no_leakage"
  DType dtype = DType::f32;
  std::uint64_t suite_seed = 0;
  int case_index = 0;
  std::string kernel;          // the kernel's name when it failed
  // Its Kernel::configuration() then ("ATTNV_CORE_ISA=avx512"); nullopt in evidence written
  // before attnv recorded it.
  std::optional<std::string> kernel_configuration;
  // Whether the case failed the same way when the certifier judged it again at once: false for a
  // kernel not deterministic there (a pass of it then is no evidence of a fix); nullopt when it
  // was not judged again (a hang: it would cost another timeout) or in evidence written before
  // attnv recorded it.
  std::optional<bool> recurred;
  generators::PropertyCase pc;      // the case, layout and check seed the check ran on
  std::vector<checks::RecordedRun> runs;  // the calls the check made, with the kernel's outputs
  std::string finding;         // finding.txt ("" when absent)
};

// Writes the evidence of one failing case into `dir` (replacing a folder of that name; the
// folder appears whole or not at all). Returns `dir`.
std::filesystem::path write_evidence(const std::filesystem::path& dir, const Requirement& r, DType dtype,
                                     std::uint64_t suite_seed, int case_index, const generators::PropertyCase& pc,
                                     const checks::Recording& rec, const std::string& kernel_name,
                                     const std::string& kernel_configuration, std::optional<bool> recurred,
                                     const std::string& finding_text);

// The evidence in an exchange folder, or nullopt when its manifest has no case with
// meta.attnv_requirement (a fuzz reproducer, a plain exchange folder). InputError when it has
// one that is malformed (naming the field).
std::optional<Evidence> read_evidence(const std::filesystem::path& dir);

struct Rejudgement {
  checks::PropertyResult result;  // the requirement's check on the saved case, with this kernel
  // "" when every call the check made now had the inputs the evidence recorded for it (up to the
  // shorter of the two: a check makes extra calls only after it sees a difference). Otherwise
  // the first difference: attnv's own inconsistency (the evidence no longer describes what the
  // check does), never a verdict on the kernel.
  std::string mismatch;
  int runs_compared = 0;
};

// The same requirement judged again on the saved case with kernel `k`.
Rejudgement rejudge(Kernel& k, const Evidence& e);

}  // namespace attnv::conformance
