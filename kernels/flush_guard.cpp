// Out of line on purpose: the compiler does not model MXCSR, so the flushed arithmetic must not
// be visible where the mode is switched (no constant folding or code motion across the switch).
// The kernels call FlushGuard, then an out-of-line body that reads its operands from memory.
#include "kernels/flush_guard.h"

#include "problem/error.h"

#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h>
#define ATTNV_HAVE_MXCSR 1
#endif

namespace attnv::kernels {

namespace {
// MXCSR bit 15 is FTZ, bit 6 DAZ (Intel SDM vol. 1, 10.2.3).
constexpr unsigned kFtz = 1u << 15, kDaz = 1u << 6;
}  // namespace

bool FlushGuard::available() {
#ifdef ATTNV_HAVE_MXCSR
  return true;
#else
  return false;
#endif
}

FlushGuard::FlushGuard(bool on) : on_(on) {
  if (!on_) return;
#ifdef ATTNV_HAVE_MXCSR
  saved_ = _mm_getcsr();
  _mm_setcsr(saved_ | kFtz | kDaz);
#else
  (void)kFtz;
  (void)kDaz;
  throw InputError("flush_subnormals: this build has no MXCSR (not x86-64), it cannot flush");
#endif
}

FlushGuard::~FlushGuard() {
#ifdef ATTNV_HAVE_MXCSR
  if (on_) _mm_setcsr(saved_);
#endif
}

}  // namespace attnv::kernels
