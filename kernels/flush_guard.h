#pragma once
// Flush-to-zero for a scope: sets the x86 MXCSR flags FTZ (a result below min_normal becomes a
// signed zero) and DAZ (a subnormal operand is read as zero) on the calling thread and restores
// the previous MXCSR when the scope ends, so a kernel can really run the arithmetic a flushing
// production kernel runs (PrecisionModel::flush_subnormals). MXCSR is per thread: the flushed
// code must run on the constructing thread (the naive kernel is single-threaded).
namespace attnv::kernels {

class FlushGuard {
 public:
  // on = false does nothing. on = true where MXCSR does not exist throws InputError.
  explicit FlushGuard(bool on);
  ~FlushGuard();
  FlushGuard(const FlushGuard&) = delete;
  FlushGuard& operator=(const FlushGuard&) = delete;
  // Whether this build can flush (x86-64 with SSE).
  static bool available();

 private:
  bool on_ = false;
  unsigned saved_ = 0;
};

}  // namespace attnv::kernels
