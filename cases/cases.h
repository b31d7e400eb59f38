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

// What `check` reruns, and on what.
struct CheckOptions {
  // When not empty, narrow the rerun to part of the export (InputError for a dtype or requirement
  // the export does not hold).
  std::vector<DType> dtypes = {};
  std::vector<std::string> only = {};
  // A copy of the export answered by a second run of the program: R13 (determinism) compares the
  // two runs bit for bit. Empty: R13 is NOT EXERCISED.
  std::filesystem::path second = {};
  // A claims file whose precision models replace the exported ones. Its capabilities and dtypes
  // must be the exported ones (the exported calls were drawn for them).
  std::filesystem::path claims = {};
  // When not empty, an evidence folder per failing case goes here (certify's --report
  // DIR/failures): the replayed call's inputs and the program's answers, the exact values and
  // the bounds, so a finding shows its case without searching the export's folders.
  std::filesystem::path failures = {};
};

// attnv-export.json with `opt` applied: the suite check() reruns and whose claims the certificate
// shows. Validates everything but the answers (the filters, the second folder, the claims file),
// so a usage error is reported before any output is written: InputError naming the file.
Suite checked_suite(const std::filesystem::path& dir, const CheckOptions& opt = {});

// Reruns the suite recorded in dir/attnv-export.json against the answers in `dir`. Missing or
// malformed answers are findings of the requirement that needed them; a missing or invalid
// attnv-export.json or manifest.json is an InputError. R13 and R14 are judged on what the files
// show (cases/README.md, "R13 and R14 through files").
conformance::ConformanceReport check(const std::filesystem::path& dir, const Progress& progress = {},
                                     const CheckOptions& opt = {});

// What this check could observe besides the answers.
struct FileEvidence {
  bool second_run = false;   // --second: R13 saw two runs of the program
  bool input_files = false;  // the export hashed its input files: R14 was judged on them
};
// A PASS of a requirement that replayed answers cannot show (Requirement::through_files), without
// the evidence it needs, becomes NOT EXERCISED with a note saying how to exercise it: a PASS
// there would be true by construction. Applied by check().
void mark_unobservable_through_files(conformance::RequirementResult& r, const FileEvidence& seen = {});

}  // namespace attnv::cases
