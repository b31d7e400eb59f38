#pragma once
// Progress of a conformance run on stderr: a bar redrawn in place on a terminal, one plain line
// per finished requirement x dtype otherwise (logs and CI keep every line). The share done and
// the ETA count the cases of the requirements in flight, so both move within a long requirement.
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "properties/conformance/conformance.h"

namespace attnv::cli {

class Progress {
 public:
  explicit Progress(bool terminal);
  // Called once per finished requirement x dtype.
  void update(const conformance::RequirementResult& r, std::size_t done, std::size_t total);
  // Called after each case of a requirement in flight (from several threads at once).
  void on_case(const std::string& id, DType dtype, int cases_run, int cases);
  // Clears the bar (terminal) so the summary starts on a clean line.
  void finish();

  // The share of the run done: finished jobs count 1, jobs in flight the share of their cases.
  static double share_done(std::size_t done, std::size_t total, double in_flight);
  // "ETA 1m05s", "ETA 12s", or "" while too little is done to say.
  static std::string eta_text(double elapsed_s, double share);

 private:
  double elapsed() const;
  double in_flight_share() const;  // mutex_ held
  void draw(const std::string& what);  // mutex_ held; terminal only

  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::mutex mutex_;
  std::size_t done_ = 0, total_ = 0;  // total_ 0 until the first requirement finishes
  std::map<std::pair<std::string, DType>, double> in_flight_;  // share of its cases run
};

}  // namespace attnv::cli
