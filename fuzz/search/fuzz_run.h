#pragma once
// One whole fuzzing run, as `attnv fuzz` and Python's attnv.fuzz both make it: search (search.h),
// shrink the first finding (or the case of attnv's own error) and save it as a reproducer
// (reproducer.h); and the way back, a reproducer's cases judged again as `attnv repro` and
// attnv.repro judge them. The front ends only choose the kernel and where the text goes.
#include <ostream>
#include <string>
#include <vector>

#include "fuzz/search/search.h"
#include "io/exchange.h"

namespace attnv::fuzz {

struct FuzzJob {
  SearchOptions search;
  double shrink_seconds = 20;
  std::string out;             // the reproducer's folder
  std::string kernel_spec;     // as the reproducer records it ("plugin:./k.so", "python:mod.fn")
  std::string kernel_name;
  std::string reproduce_line;  // "  reproduce:  attnv repro ...\n", printed after the folder
  std::string after_folder;    // printed between the folder and the reproduce line ("" for none)
};

// Runs the search on the kernels `make` gives (one per searcher; `probe` shrinks and names the
// configuration) under `claims` (fuzzed_claims), shrinks what it found and saves it in job.out.
// Returns attnv fuzz's exit status: 0 no finding in the time, 1 a finding, 2 nothing judged
// (every input skipped, or none run), 3 attnv's own error on an input (its case saved). The
// verdict goes to `out`; the start line, the status lines and errors go to `log`.
int fuzz_and_save(const KernelFactory& make, Kernel& probe, const Capabilities& claims, const FuzzJob& job,
                  std::ostream& out, std::ostream& log);

// The cases of a reproducer (or any exchange folder) judged again with kernel `k` by the fuzz
// differential judge, each in its recorded layout: 1 when any still fails, 0 when every one passes. What it
// judged goes to `out`. InputError when a case cannot be judged with this kernel, was recorded
// with another configuration of it (`kernel_spec` names the kernel running now), or passes now
// although its failure did not recur when it was found (no evidence of a fix).
int rejudge_reproducer(Kernel& k, const std::vector<io::ExchangeCase>& cases, const DifferentialOptions& opt,
                       const std::string& kernel_spec, const std::string& kernel_name, std::ostream& out);

// The status line of a search: "12.0 s, 3400 execs (283/s), ...".
std::string status_line(const SearchStatus& s);

}  // namespace attnv::fuzz
