#include "cli/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "io/text.h"

namespace attnv::cli {

Progress::Progress(bool terminal) : terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

double Progress::share_done(std::size_t done, std::size_t total, double in_flight) {
  if (total == 0) return 0;
  return std::clamp((static_cast<double>(done) + in_flight) / static_cast<double>(total), 0.0, 1.0);
}

std::string Progress::eta_text(double elapsed_s, double share) {
  // Under 1% (or 2 s) done the estimate is noise: say nothing rather than something wrong.
  if (!(share >= 0.01) || share >= 1 || elapsed_s < 2) return {};
  const long left = std::lround(elapsed_s * (1 - share) / share);
  char buf[48];
  if (left >= 60)
    std::snprintf(buf, sizeof buf, "ETA %ldm%02lds", left / 60, left % 60);
  else
    std::snprintf(buf, sizeof buf, "ETA %lds", left);
  return buf;
}

double Progress::in_flight_share() const {
  double s = 0;
  for (const auto& [key, share] : in_flight_) s += share;
  return s;
}

void Progress::draw(const std::string& what) {
  constexpr int kWidth = 30;
  const double share = share_done(done_, total_, in_flight_share());
  const int filled = static_cast<int>(kWidth * share);
  const std::string eta = eta_text(elapsed(), share);
  char line[320];
  std::snprintf(line, sizeof line, "\r\033[K[%s%s] %zu/%zu %5.0f s %s  %s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), done_, total_, elapsed(),
                eta.empty() ? "" : eta.c_str(), what.c_str());
  std::cerr << line << std::flush;
  drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::on_case(const std::string& id, DType dtype, int cases_run, int cases) {
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_[{id, dtype}] = cases > 0 ? static_cast<double>(cases_run) / cases : 0;
  // A redraw at most 5 times a second.
  if (!terminal_ || std::chrono::steady_clock::now() - last_draw_ < std::chrono::milliseconds(200)) return;
  const std::string what = io::printable(id + " [" + std::string(dtype_name(dtype)) + "] case " + std::to_string(cases_run) +
                                         "/" + std::to_string(cases));
  if (total_ > 0) return draw(what);
  // Before the first requirement finishes the number of requirements is not known: no bar yet.
  char line[320];
  std::snprintf(line, sizeof line, "\r\033[K%5.0f s  %s", elapsed(), what.c_str());
  std::cerr << line << std::flush;
  drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::update(const conformance::RequirementResult& r, std::size_t done, std::size_t total) {
  const std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.erase({r.id, r.dtype});
  done_ = done;
  total_ = total;
  // printable: the line is redrawn with \r and ESC[K, and text that came from outside attnv must
  // not be able to add sequences of its own.
  const std::string what = io::printable(r.id + " " + r.property + " [" + std::string(dtype_name(r.dtype)) + "] " +
                                         std::string(conformance::verdict_name(r.verdict)));
  char line[320];
  if (total == 0) {  // the total is not known in advance: count only
    std::snprintf(line, sizeof line, terminal_ ? "\r\033[K[%zu] %5.0f s  %s" : "[%zu] %.0f s %s", done, elapsed(), what.c_str());
    std::cerr << line << (terminal_ ? "" : "\n") << std::flush;
    drawn_ = terminal_;
  } else if (terminal_) {
    draw(what);
  } else {
    const std::string eta = eta_text(elapsed(), share_done(done_, total_, in_flight_share()));
    std::snprintf(line, sizeof line, "[%zu/%zu] %s (%d cases, %.1f s)%s%s", done, total, what.c_str(), r.cases_run, r.seconds,
                  eta.empty() ? "" : ", ", eta.c_str());
    std::cerr << line << '\n';
  }
}

void Progress::finish() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_ && drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace attnv::cli
