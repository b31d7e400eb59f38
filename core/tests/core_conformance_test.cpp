// The optimized core through the conformance suite, exactly as a third-party kernel would be:
// the one-line macro on a factory (R2 runs the backward), once per ISA path (core/isa.h).
//
//   Core          the path a user gets (ATTNV_CORE_ISA, else the widest this CPU runs), every dtype
//   CorePortable, CoreAvx2, CoreAvx512   each narrower path forced, on f32 only (the widest
//                 is the Core suite's, so it is not run twice)
//   CoreAvx512Bf16   the opt-in avx512_bf16 path (never the default), on bf16 only: the one
//                 storage it computes differently (Q.K^T on vdpbf16ps, subnormals flushed)
//
// Why f32 only on the forced paths: the whole suite takes about 90 s per path on the 2-core CI
// machine, and the paths differ only in the f32 micro-kernels (f64 always takes the portable
// f64 set); f16 and bf16 reach the same f32 kernels after the 16-bit conversions, which
// isa_test.cpp checks bit for bit on every path. A path this CPU lacks is one skipped test
// naming the missing features (so CI on an AVX2 machine says what it could not certify).
#include <memory>
#include <string>

#include "core/core_kernel.h"
#include "core/isa.h"
#include "properties/conformance/conformance_gtest.h"

namespace {

using namespace attnv;

// The core on one forced path, claiming one storage dtype only (see the top of the file).
class CoreOneDtype final : public Kernel {
 public:
  CoreOneDtype(core::Isa isa, DType dtype) : core_({.isa = isa}), dtype_(dtype) {}
  std::string name() const override { return core_.name(); }
  std::string configuration() const override { return core_.configuration(); }  // its evidence names the path
  Capabilities capabilities() const override {
    Capabilities c = core_.capabilities();
    c.dtypes = {dtype_};
    return c;
  }
  PrecisionModel precision(DType storage) const override { return core_.precision(storage); }
  void forward(const Problem& p, const KernelViews& v) override { core_.forward(p, v); }
  void backward(const Problem& p, const KernelViews& v) override { core_.backward(p, v); }
  void decode(const Problem& p, const DecodeViews& v) override { core_.decode(p, v); }

 private:
  core::CoreKernel core_;
  DType dtype_;
};

class MissingPath : public ::testing::Test {
 public:
  explicit MissingPath(std::string why) : why_(std::move(why)) {}
  void TestBody() override { GTEST_SKIP() << why_; }

 private:
  std::string why_;
};

// The suite on `isa` when this CPU runs it, else one skipped test saying why.
bool register_path(const char* name, core::Isa isa, DType dtype = DType::f32) {
  const std::string missing = core::missing_features(isa, core::cpu_features());
  if (isa == core::widest_isa(core::cpu_features())) return false;  // the Core suite's path
  if (missing.empty())
    return conformance::register_conformance_suite(name, __FILE__, __LINE__,
                                                   [isa, dtype] { return std::make_unique<CoreOneDtype>(isa, dtype); });
  const std::string why = std::string("the ") + core::isa_name(isa) + " path cannot run here: this CPU lacks " + missing;
  ::testing::RegisterTest((std::string(name) + "/ConformanceTest").c_str(), "path_not_runnable", nullptr, nullptr,
                          __FILE__, __LINE__, [why]() -> ::testing::Test* { return new MissingPath(why); });
  return true;
}

[[maybe_unused]] const bool portable = register_path("CorePortable", core::Isa::portable);
[[maybe_unused]] const bool avx2 = register_path("CoreAvx2", core::Isa::avx2);
[[maybe_unused]] const bool avx512 = register_path("CoreAvx512", core::Isa::avx512);
[[maybe_unused]] const bool avx512_bf16 = register_path("CoreAvx512Bf16", core::Isa::avx512_bf16, DType::bf16);

}  // namespace

ATTNV_CONFORMANCE_SUITE(Core, [] { return std::make_unique<attnv::core::CoreKernel>(); });
