// Prints the kill table of the mutant zoo as Markdown: for every mutant, the requirement it is
// meant to break, whether the quick tier catches it there, after how many cases and how many
// seconds (run_requirement stops at the first finding), and every requirement that fails it
// on the quick tier in its dtype.
//
//   build/release/properties/attnv_kill_table > docs/kill-table.md
//   build/release/properties/attnv_kill_table gqa_tile lost_rescale   # some mutants only
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "properties/conformance/conformance.h"
#include "kernels/mutants.h"

int main(int argc, char** argv) {
  using namespace attnv;
  std::set<std::string> only(argv + 1, argv + argc);
  // A '|' inside a cell would end it.
  auto cell = [](std::string s) {
    for (std::size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2)) s.replace(at, 1, "\\|");
    return s;
  };
  std::printf("| mutant | bug | dtype | meant for | caught there | cases to catch | seconds to catch | every requirement that fails it (quick) |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  int missed = 0;
  for (const kernels::Mutant& m : kernels::mutant_zoo()) {
    if (!only.empty() && !only.count(m.name)) continue;
    const conformance::Requirement& meant = conformance::requirement(m.requirement);
    conformance::ConformanceOptions o;
    o.tier = conformance::Tier::quick;
    o.dtypes = {m.dtype};
    o.max_findings = 1;
    o.stop_at_findings = true;  // cases to catch = the index of the first failure + 1
    const auto kernel = m.make();
    const auto t0 = std::chrono::steady_clock::now();
    const conformance::RequirementResult r = conformance::run_requirement(*kernel, meant.id, m.dtype, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool caught = r.verdict == conformance::Verdict::fail;
    missed += caught ? 0 : 1;
    std::string all;
    for (const conformance::RequirementResult& x : conformance::run_conformance(*kernel, o).results)
      if (x.verdict == conformance::Verdict::fail) all += (all.empty() ? "" : ", ") + x.id;
    std::printf("| `%s` | %s | %s | %s %s | %s | %s | %.3f | %s |\n", m.name.c_str(), cell(m.bug).c_str(),
                std::string(dtype_name(m.dtype)).c_str(), meant.id.c_str(), meant.property.c_str(), caught ? "yes" : "**NO**",
                caught ? std::to_string(r.findings.front().case_index + 1).c_str() : "-", seconds,
                all.empty() ? "none" : all.c_str());
    std::fflush(stdout);
  }
  return missed == 0 ? 0 : 1;
}
