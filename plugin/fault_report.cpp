#include "fault_report.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace attnv::plugin {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

namespace {

std::string verb(const wire::Status& s) { return s.access == 2 ? "wrote" : s.access == 1 ? "read" : "accessed"; }

// The multi-index of the element at byte `off` of a strided tensor, if an element starts there.
std::string element_at(const wire::Tensor& t, std::int64_t off) {
  const int eb = t.dtype == ATTNV_U8 ? 1 : t.dtype == ATTNV_F64 ? 8 : t.dtype == ATTNV_F32 ? 4 : 2;
  if (off % eb != 0) return "";
  std::int64_t e = off / eb;
  // Dimensions by decreasing stride (insertion sort: rank <= 4).
  const int rank = std::clamp(t.rank, 0, 4);
  int order[4] = {0, 1, 2, 3};
  for (int i = 1; i < rank; ++i)
    for (int j = i; j > 0 && t.stride[order[j]] > t.stride[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  std::int64_t idx[4] = {};
  for (int k = 0; k < rank; ++k) {
    const int d = order[k];
    if (t.stride[d] <= 0) continue;
    idx[d] = std::min(e / t.stride[d], t.shape[d] - 1);
    e -= idx[d] * t.stride[d];
  }
  if (e != 0) return "";
  std::string s = "[";
  for (int d = 0; d < rank; ++d) {
    if (d) s += ',';
    s += std::to_string(idx[d]);
  }
  s += ']';
  return s;
}

std::string hex(std::uint64_t x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(x));
  return buf;
}

}  // namespace

Fault describe_fault(const wire::Status& s, const CallLayout& l) {
  const std::string sig = signal_name(s.signal);
  if (s.signal == SIGABRT) return {FaultKind::crashed, "crashed with SIGABRT (abort)"};
  const bool memory = s.signal == SIGSEGV || s.signal == SIGBUS;
  const std::uint64_t a = s.fault_addr, base = s.region_base;
  if (memory && base != 0 && a >= base && a < base + l.total) {
    const auto off = static_cast<std::int64_t>(a - base);
    // Inside a buffer's pages (only an input's can fault: outputs are read-write).
    for (int k = 0; k < wire::kSlots; ++k) {
      const wire::Tensor& t = l.t[k];
      if (t.offset < 0 || off < t.offset || off >= t.offset + t.mapped) continue;
      const std::int64_t rel = off - t.offset;
      const std::string name = l.names[k] ? l.names[k] : wire::kTensorNames[k].data();
      if (rel >= t.bytes)
        return {FaultKind::out_of_bounds, verb(s) + " into input " + name + " past its last element: byte offset " +
                                              std::to_string(rel) + ", extent " + std::to_string(t.bytes) + " bytes"};
      const std::string at = element_at(t, rel);
      return {FaultKind::input_written,
              verb(s) + " into input " + name + (at.empty() ? " at byte offset " + std::to_string(rel) : " at element " + at)};
    }
    // In a guard page: blame the nearer neighbour.
    const wire::Tensor* before = nullptr;
    const wire::Tensor* after = nullptr;
    int ib = -1, ia = -1;
    for (int k = 0; k < wire::kSlots; ++k) {
      const wire::Tensor& t = l.t[k];
      if (t.offset < 0) continue;
      if (t.offset + t.mapped <= off && (!before || t.offset > before->offset)) before = &t, ib = k;
      if (t.offset > off && (!after || t.offset < after->offset)) after = &t, ia = k;
    }
    const std::int64_t past = before ? off - before->offset : 0;
    const std::int64_t ahead = after ? after->offset - off : 0;
    const bool blame_before = before && (!after || off - (before->offset + before->bytes) <= ahead);
    if (blame_before)
      return {FaultKind::out_of_bounds, verb(s) + " out of bounds past the end of " +
                                            (l.names[ib] ? l.names[ib] : wire::kTensorNames[ib].data()) + ": byte offset " +
                                            std::to_string(past) + ", extent " + std::to_string(before->bytes) + " bytes"};
    if (after)
      return {FaultKind::out_of_bounds, verb(s) + " out of bounds before the start of " +
                                            (l.names[ia] ? l.names[ia] : wire::kTensorNames[ia].data()) + ": byte offset -" +
                                            std::to_string(ahead)};
    return {FaultKind::out_of_bounds, verb(s) + " the shared status page at byte offset " + std::to_string(off)};
  }
  std::string m = "crashed with " + sig;
  if (s.signal != SIGABRT) m += " at address " + hex(a);
  if (memory && s.access) m += s.access == 2 ? " (write)" : " (read)";
  return {FaultKind::crashed, m};
}

}  // namespace attnv::plugin
