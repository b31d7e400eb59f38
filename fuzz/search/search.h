#pragma once
// The search behind `attnv fuzz`: independent searchers (one kernel each) mutate numeric-fuzz
// genomes (fuzz/numeric/genome_mutator.h), judge each with the shared differential judge
// (fuzz/numeric/differential_judge.h) and keep the inputs that reach a numeric signal bucket they had not
// reached (fuzz/numeric/numeric_signal.h: headroom and error/bound levels), so the corpus
// climbs toward overflow and toward the bound as libFuzzer's extra counters make it climb.
// The first finding stops every searcher; shrink() then makes its case small.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/numeric/case_genome.h"
#include "fuzz/numeric/differential_judge.h"

namespace attnv::fuzz {

// Makes one kernel per searcher (the same as conformance::KernelFactory, which fuzz/ does not
// include: the layering keeps it out of properties/).
using KernelFactory = std::function<std::unique_ptr<Kernel>()>;

struct SearchOptions {
  std::optional<DType> dtype;   // narrow the kernel's claims to one storage dtype
  double max_seconds = 60;
  int jobs = 1;                 // independent searchers, one kernel each
  std::uint64_t seed = 1;       // searcher i draws from seed + i
  std::vector<std::vector<std::uint8_t>> seeds;  // initial inputs (the seed corpus), split over the searchers
  fuzz::DifferentialOptions judging;
  double status_seconds = 3;    // how often on_status is called
};

struct SearchStatus {
  double seconds = 0;
  std::int64_t execs = 0;       // inputs run (skipped ones included)
  std::int64_t skipped = 0;     // declined by the reference or the kernel
  std::int64_t declined = 0;    // of those, declined by the kernel's supports()
  std::size_t corpus = 0;       // inputs kept, over all searchers
  std::size_t buckets = 0;      // signal buckets reached, union over searchers
  double best_ratio = 0;        // highest worst error/threshold ratio of a passing input
};

struct SearchResult {
  std::optional<fuzz::Finding> finding;
  // attnv's own error (a HarnessError: its reference or bound could not judge) on `genome`: the
  // search stops with no verdict on the kernel, and the case is kept so the defect can be found.
  std::optional<std::string> attnv_error;
  fuzz::Genome genome;          // the input that found it (or met attnv's error)
  SearchStatus status;          // at the end
};

// Runs until the first finding, attnv's first own error on an input, or max_seconds. The factory
// is called once per searcher. Other exceptions (a kernel that cannot be made) propagate.
SearchResult run_search(const KernelFactory& make, const SearchOptions& opt,
                        const std::function<void(const SearchStatus&)>& on_status);

struct ShrinkResult {
  fuzz::Genome genome;
  fuzz::Finding finding;
  std::int64_t execs = 0;
  int steps = 0;                // accepted simplifications
  bool recurred = false;        // the found genome failed the same way when judged again
  // attnv's own error when it judged the found genome again ("" when none): then whether the
  // kernel fails it again is unknown, not the kernel's nondeterminism.
  std::string rejudge_attnv_error;
};

// Greedy genome-level shrinking: fewer batches and heads, shorter Tq, Tk, Dk, Dv, options and
// poison off, ordinary exponents, fewer and zeroed value codes, each kept only while the same
// finding kind persists, until nothing more helps or the time is up.
// A candidate on which attnv itself cannot judge (a HarnessError) is not kept: it is no evidence
// of the finding. The found genome is judged once more first: a kernel that fails a case only
// sometimes (not deterministic there) is not shrunk, since a smaller case that failed once would
// be no better evidence, and `recurred` says so: `attnv repro` may then see the saved case pass.
ShrinkResult shrink(Kernel& k, const fuzz::Genome& g, const fuzz::Finding& f, const Capabilities& claims,
                    const fuzz::DifferentialOptions& opt, double max_seconds);

// The same shrinking for a case on which attnv met its own error: a candidate is kept while
// judging it still throws a HarnessError of the same signature (the message with its numbers
// left out: "bound is NaN at dq[350]" and "... at dq[7]" are one defect), so the saved case is
// the smallest form of attnv's defect, not of some other one.
// The found genome is judged once more first: an error that does not recur (on this kernel
// instance, this time) is not shrunk, and `recurred` says so, for a saved case that may not
// show it again must not be presented as one that does.
struct AttnvErrorShrinkResult {
  fuzz::Genome genome;
  std::string error;            // the message on the shrunk genome
  std::int64_t execs = 0;
  int steps = 0;
  bool recurred = false;        // the found genome met the same error again
};
AttnvErrorShrinkResult shrink_attnv_error(Kernel& k, const fuzz::Genome& g, const std::string& error,
                                          const Capabilities& claims, const fuzz::DifferentialOptions& opt, double max_seconds);

// A message with every number (digits, a decimal point, an exponent) written as '#'.
std::string error_signature(const std::string& message);

}  // namespace attnv::fuzz
