#include "properties/checks/recording.h"

#include <stdexcept>
#include <utility>

namespace attnv::checks {
namespace {
thread_local Recording* active = nullptr;
}  // namespace

RecordRuns::RecordRuns() {
  if (active) throw std::logic_error("RecordRuns: already recording on this thread");
  active = &rec_;
}

RecordRuns::~RecordRuns() { active = nullptr; }

Recording RecordRuns::take() { return std::exchange(rec_, Recording{}); }

namespace detail {

void record_run(const Case& c, Layout layout, bool backward, const Outputs& out, bool decode) {
  if (active) active->runs.push_back({c, layout, backward, decode, out});
}

void record_exact(const Case& c, const Outputs& exact, const bound::Bounds& b) {
  if (active) active->exact.push_back({c, exact, b});
}

}  // namespace detail
}  // namespace attnv::checks
