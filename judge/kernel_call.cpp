#include "judge/kernel_call.h"

#include <cfenv>

#include "problem/error.h"
#include "problem/kernel_fault.h"

namespace attnv::judge {
namespace {
constexpr int kFpExceptions = FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO;
}  // namespace

void kernel_call(const std::function<void()>& f) {
  try {
    f();
  } catch (const KernelFault&) {
    throw;
  } catch (const HarnessError&) {
    throw;
  } catch (const InputError& e) {
    throw KernelFault(FaultKind::refused, std::string("refused: ") + e.what());
  } catch (const std::exception& e) {
    throw KernelFault(FaultKind::crashed, std::string("threw: ") + e.what());
  } catch (...) {
    throw KernelFault(FaultKind::crashed, "threw an exception that is not a std::exception");
  }
}

PrecisionModel kernel_precision(Kernel& k, const Problem& p) {
  PrecisionModel m;
  kernel_call([&] { m = k.precision_for(p); });
  m.storage = p.dtype;  // the problem's, whatever a kernel wrote: the bound reads it
  return m;
}

FpWatch::FpWatch(FpCheck mode) : mode_(mode) {
  if (mode_ == FpCheck::off) return;
  std::feclearexcept(FE_ALL_EXCEPT);
  if (mode_ == FpCheck::trap) feenableexcept(kFpExceptions);
}

FpWatch::~FpWatch() {
  if (mode_ == FpCheck::trap) fedisableexcept(kFpExceptions);
  if (mode_ != FpCheck::off) std::feclearexcept(FE_ALL_EXCEPT);
}

std::string FpWatch::raised() const {
  if (mode_ != FpCheck::flags) return "";  // a trap never gets here
  const int f = std::fetestexcept(kFpExceptions);
  std::string s;
  if (f & FE_OVERFLOW) s += "overflow ";
  if (f & FE_INVALID) s += "invalid-operation ";
  if (f & FE_DIVBYZERO) s += "division-by-zero ";
  if (!s.empty()) s.pop_back();
  return s;
}

}  // namespace attnv::judge
