#pragma once
// Certifying a kernel written in any language through files (cases/README.md).
//   export_cases: run the conformance suite on a RecordingKernel (answers from the naive kernel)
//                 and write every distinct call as an exchange case, plus attnv-export.json.
//   check:        rerun the same suite on a ReplayKernel that answers each call from the
//                 out.npy/lse.npy/dq.npy/... a program wrote into the call's case folder.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "cases/suite.h"
#include "properties/conformance/conformance.h"

namespace attnv::cases {

struct ExportSummary {
  std::size_t cases = 0;            // distinct calls written
  std::uint64_t calls = 0;          // kernel calls the suite made
  std::uint64_t bytes = 0;          // bytes of the .npy files written
  double seconds = 0;
  // The recording run's own findings (its answers judged under the claimed precision model).
  // Non-empty means a check may have stopped early on a recorded case and some calls a correct
  // kernel would get are not in the export: the claims are tighter than the naive kernel.
  std::vector<std::string> answer_findings;
};

using Progress = std::function<void(const conformance::RequirementResult&)>;

// Writes the cases into `dir` (created; case folders it writes are owned, see io::write_exchange)
// and dir/attnv-export.json last. InputError on bad options or an unwritable folder.
ExportSummary export_cases(const std::filesystem::path& dir, const Suite& suite, const Progress& progress = {});

// Reruns the suite recorded in dir/attnv-export.json against the answers in `dir`. Missing or
// malformed answers are findings of the requirement that needed them; a missing or invalid
// attnv-export.json or manifest.json is an InputError.
// `only` and `dtypes`, when not empty, narrow the rerun to part of the export (InputError for a
// dtype or requirement the export does not hold).
struct CheckFilter {
  std::vector<DType> dtypes;
  std::vector<std::string> only;
};
conformance::ConformanceReport check(const std::filesystem::path& dir, const Progress& progress = {},
                                     const CheckFilter& filter = {});
// R13 (determinism) and R14 (inputs unchanged) cannot be observed through files: their PASS
// becomes NOT EXERCISED, with a note that says why. Applied by check().
void mark_unobservable_through_files(conformance::RequirementResult& r);

}  // namespace attnv::cases
