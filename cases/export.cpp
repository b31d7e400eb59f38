// attnv cases export: record the calls the conformance suite makes.
#include <algorithm>
#include <chrono>
#include <limits>

#include "cases/call_hash.h"
#include "cases/cases.h"
#include "cases/record_kernel.h"
#include "io/exchange.h"
#include "problem/error.h"
#include "kernels/naive_kernel.h"

namespace attnv::cases {

ExportSummary export_cases(const std::filesystem::path& dir, const Suite& suite, const Progress& progress) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  if (suite.dtypes.empty()) throw InputError("no dtype to export (give --dtype)");
  if (suite.claims.caps.strided) throw InputError("strided cannot be claimed through files");
  auto rec = std::make_unique<RecordingKernel>(suite.claims, std::make_unique<kernels::NaiveKernel>());
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
  // Hashed from the files as written (not from the values): any write to an input file, even
  // one that keeps the values, is something the program did to its inputs (R14 through files).
  InputRecord inputs{{}, input_files()};
  for (const io::ManifestEntry& e : io::read_manifest(dir)) {
    const fs::path folder = dir / e.dir;
    for (const auto& f : fs::directory_iterator(folder))
      if (f.is_regular_file()) sum.bytes += f.file_size();
    for (const std::string& name : inputs.files)
      if (fs::exists(folder / name)) inputs.hashes[e.dir][name] = hash_hex(file_hash(folder / name));
  }
  write_suite(dir / kExportFile, suite, sum.cases, sum.bytes, inputs);
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

}  // namespace attnv::cases
