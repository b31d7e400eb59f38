#pragma once
// What a check did, kept for the evidence folder of a failure (properties/conformance/
// evidence.h): every kernel run a check makes through detail::run (the case as the kernel got
// it, perturbations included, its layout and outputs), every decode call of R21 as its
// equivalent forward, and every reference the check judged against
// (the exact values and the bounds). Off unless a RecordRuns is alive on the calling thread, so
// the suite copies nothing when it saves nothing.
#include <vector>

#include "problem/buffers.h"
#include "problem/case.h"
#include "reference/bound/bound.h"

namespace attnv::checks {

struct RecordedRun {
  Case c;
  Layout layout = Layout::bhtd;
  bool backward = false;
  // A decode call (R21), recorded as the forward it must equal: `c` holds the cache's keys and
  // values up to this call and its queries, `out` what the decode call returned.
  bool decode = false;
  Outputs out;
};

struct RecordedExact {
  Case c;
  Outputs exact;
  bound::Bounds bounds;
};

struct Recording {
  std::vector<RecordedRun> runs;  // in call order
  std::vector<RecordedExact> exact;
};

// Records on this thread while alive (not nestable: one check at a time per thread).
class RecordRuns {
 public:
  RecordRuns();
  ~RecordRuns();
  RecordRuns(const RecordRuns&) = delete;
  RecordRuns& operator=(const RecordRuns&) = delete;
  Recording take();

 private:
  Recording rec_;
};

namespace detail {
// Called by detail::run and exact_forward / exact_backward; no-ops when nothing records.
void record_run(const Case& c, Layout layout, bool backward, const Outputs& out, bool decode = false);
void record_exact(const Case& c, const Outputs& exact, const bound::Bounds& b);
}  // namespace detail

}  // namespace attnv::checks
