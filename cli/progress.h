#pragma once
// Progress of a conformance run on stderr: a bar redrawn in place on a terminal, one plain line
// per finished requirement x dtype otherwise (logs and CI keep every line).
#include <chrono>
#include <cstddef>

#include "properties/conformance/conformance.h"

namespace attnv::cli {

class Progress {
 public:
  explicit Progress(bool terminal);
  // Called once per finished requirement x dtype (from one thread at a time).
  void update(const conformance::RequirementResult& r, std::size_t done, std::size_t total);
  // Clears the bar (terminal) so the summary starts on a clean line.
  void finish();

 private:
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attnv::cli
