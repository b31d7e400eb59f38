// attnv cases export: record the calls the conformance suite makes.
#include <algorithm>
#include <chrono>
#include <limits>

#include "cases/cases.h"
#include "cases/record_kernel.h"
#include "cases/replay_kernel.h"
#include "io/exchange.h"
#include "problem/error.h"
#include "properties/kernels/naive_kernel.h"

namespace attnv::cases {

ExportSummary export_cases(const std::filesystem::path& dir, const Suite& suite, const Progress& progress) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  if (suite.dtypes.empty()) throw InputError("no dtype to export (give --dtype)");
  if (suite.claims.caps.strided) throw InputError("strided cannot be claimed through files");
  auto rec = std::make_unique<RecordingKernel>(suite.claims, std::make_unique<props::NaiveKernel>());
  // Every case of every requirement is recorded: a finding of the answering kernel must not stop
  // a requirement early (the replayed kernel, if correct, would go on to later cases).
  const conformance::ConformanceReport rep =
      run_suite(*rec, suite, std::numeric_limits<int>::max(), [&](const std::string& id, DType d) { rec->start(id, d); },
                progress);
  ExportSummary sum;
  for (const auto& r : rep.results)
    if (r.verdict == conformance::Verdict::fail) sum.answer_findings.push_back(conformance::describe(r));
  sum.calls = rec->calls();
  std::vector<io::ExchangeCase> cases = rec->take_cases();
  sum.cases = cases.size();
  // A stale attnv-export.json must never describe a half-written export: remove it first,
  // write it last.
  std::error_code ec;
  fs::remove(dir / kExportFile, ec);
  io::write_exchange(dir, cases);
  for (const io::ExchangeCase& c : cases)
    for (const auto& f : fs::directory_iterator(io::case_dir(dir, c)))
      if (f.is_regular_file()) sum.bytes += f.file_size();
  write_suite(dir / kExportFile, suite, sum.cases, sum.bytes);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

void mark_unobservable_through_files(conformance::RequirementResult& r) {
  // Answers read back from files cannot differ between two runs (R13) and cannot write into an
  // input buffer (R14): a PASS there would be true by construction, so it is NOT EXERCISED.
  if (r.verdict != conformance::Verdict::pass || conformance::requirement(r.id).observable_through_files) return;
  r.verdict = conformance::Verdict::not_exercised;
  r.cases_not_exercised = r.cases_checked;
  r.cases_checked = 0;
  r.note = r.property == "determinism"
               ? "through files the answers are read back, so two runs cannot differ: run the program twice and "
                 "compare its answers to judge this"
               : "through files the program never sees attnv's input buffers, so it cannot write into them";
}

conformance::ConformanceReport check(const std::filesystem::path& dir, const Progress& progress,
                                     const CheckFilter& filter) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw InputError(dir.string() + ": the folder does not exist");
  Suite suite = read_suite(dir / kExportFile);
  for (DType d : filter.dtypes)
    if (std::find(suite.dtypes.begin(), suite.dtypes.end(), d) == suite.dtypes.end())
      throw InputError(dir.string() + ": the export holds no " + std::string(dtype_name(d)) + " cases");
  if (!filter.dtypes.empty()) suite.dtypes = filter.dtypes;
  for (const std::string& id : filter.only) {
    const conformance::Requirement& r = conformance::requirement(id);
    const bool exported = suite.only.empty() || std::any_of(suite.only.begin(), suite.only.end(), [&](const std::string& o) {
                            return o == r.id || o == r.property;
                          });
    if (!exported) throw InputError(dir.string() + ": the export does not hold requirement " + r.id);
  }
  if (!filter.only.empty()) suite.only = filter.only;
  ReplayKernel replay(dir, suite.claims);
  const auto said = [&](const conformance::RequirementResult& r) {
    if (!progress) return;
    conformance::RequirementResult shown = r;
    mark_unobservable_through_files(shown);
    progress(shown);
  };
  conformance::ConformanceReport rep = run_suite(replay, suite, conformance::ConformanceOptions{}.max_findings,
                                                 [&](const std::string& id, DType d) { replay.start(id, d); }, said);
  for (conformance::RequirementResult& r : rep.results) mark_unobservable_through_files(r);
  return rep;
}

}  // namespace attnv::cases
