#include "cli/progress.h"

#include <cstdio>
#include <iostream>
#include <string>

#include "io/text.h"

namespace attnv::cli {

Progress::Progress(bool terminal) : terminal_(terminal), start_(std::chrono::steady_clock::now()) {}

void Progress::update(const conformance::RequirementResult& r, std::size_t done, std::size_t total) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // printable: the line is redrawn with \r and ESC[K, and text that came from outside attnv must
  // not be able to add sequences of its own.
  const std::string what = io::printable(r.id + " " + r.property + " [" + std::string(dtype_name(r.dtype)) + "] " +
                                         std::string(conformance::verdict_name(r.verdict)));
  char line[256];
  if (total == 0) {  // the total is not known in advance: count only
    std::snprintf(line, sizeof line, terminal_ ? "\r\033[K[%zu] %5.0f s  %s" : "[%zu] %.0f s %s", done, elapsed, what.c_str());
    std::cerr << line << (terminal_ ? "" : "\n") << std::flush;
    drawn_ = terminal_;
  } else if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
    std::snprintf(line, sizeof line, "\r\033[K[%s%s] %zu/%zu %5.0f s  %s", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                  std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), done, total, elapsed, what.c_str());
    std::cerr << line << std::flush;
    drawn_ = true;
  } else {
    std::snprintf(line, sizeof line, "[%zu/%zu] %s (%d cases, %.1f s)", done, total, what.c_str(), r.cases_run, r.seconds);
    std::cerr << line << '\n';
  }
}

void Progress::finish() {
  if (terminal_ && drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace attnv::cli
