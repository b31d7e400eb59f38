#include "report/tests/sample_certificate.h"

#include <memory>
#include <stdexcept>

#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "kernels/narrowed_kernel.h"

namespace attnv::report::testing {
namespace {

// Claims less than the naive kernel can do, so the certificate has "not claimed" cells.
class NarrowKernel : public Kernel {
 public:
  std::string name() const override { return "naive-narrow"; }
  Capabilities capabilities() const override {
    Capabilities c = inner_.capabilities();
    c.dtypes = {DType::f32};
    c.backward = false;
    c.custom_scale = false;
    return c;
  }
  PrecisionModel precision(DType d) const override { return inner_.precision(d); }
  void forward(const Problem& p, const KernelViews& v) override { inner_.forward(p, v); }

 private:
  kernels::NaiveKernel inner_;
};

// Declines every problem over 64 keys (what --kernel-option max_tk=64 would make a plugin do).
class DecliningKernel : public NarrowKernel {
 public:
  Support supports(const Problem& p, KernelOp) override {
    if (p.shape.Tk > 64) return Support::no("Tk = " + std::to_string(p.shape.Tk) + " > max_tk 64");
    return Support::yes();
  }
};

KernelInfo info(const Kernel& k, std::string spec, const std::vector<DType>& dtypes) {
  KernelInfo i{std::move(spec), k.name(), "test-1.0", k.capabilities(), {}, {}, "", 0, {}, k.configuration()};
  // A plugin is identified by its file's hash (a made-up one: these kernels are in process).
  if (i.spec.rfind("plugin:", 0) == 0) i.sha256 = std::string(64, 'a');
  for (DType d : dtypes) i.precision.emplace_back(d, k.precision(d));
  return i;
}

Certificate certify(const conformance::KernelFactory& make, const std::string& spec, conformance::ConformanceOptions opt) {
  opt.tier = conformance::Tier::quick;
  opt.threads = 2;
  const std::unique_ptr<Kernel> k = make();
  Certificate c{"0.1.0", "", {"0123456789abcdef0123456789abcdef01234567", "GCC 12.2.0", "Test CPU <model> & co", "portable"},
                info(*k, spec, k->capabilities().dtypes), conformance::run_conformance(make, opt), ""};
  c.command = "attnv certify --kernel " + shell_quote(spec) + " --suite quick --seed " + std::to_string(opt.seed);
  return c;
}

}  // namespace

Certificate naive_certificate(std::uint64_t seed) {
  conformance::ConformanceOptions opt;
  opt.seed = seed;
  opt.dtypes = {DType::f32, DType::bf16};
  opt.only = {"R1", "R2", "R3", "R5", "R13", "R19"};
  Certificate c = certify([] { return std::make_unique<NarrowKernel>(); }, "builtin:naive-narrow", opt);
  c.kernel.notes.push_back("decode declared but not yet checked");
  return c;
}

Certificate mutant_certificate(std::uint64_t seed) {
  for (const kernels::Mutant& m : kernels::mutant_zoo()) {
    if (m.name != "causal_off_by_one") continue;
    conformance::ConformanceOptions opt;
    opt.seed = seed;
    opt.dtypes = {DType::f32};
    opt.only = {"R1", "R5", "R13"};
    return certify(m.make, "plugin:/tmp/mutant's <causal> & co.so", opt);
  }
  throw std::logic_error("causal_off_by_one is not in the mutant zoo");
}

Certificate leaky_certificate(std::uint64_t seed) {
  for (const kernels::Mutant& m : kernels::mutant_zoo()) {
    if (m.name != "hidden_times_zero") continue;
    conformance::ConformanceOptions opt;
    opt.seed = seed;
    opt.dtypes = {DType::f32};
    opt.only = {"R1", "R5", "R6"};
    const auto make = m.make;
    // Claims no more than most production kernels: hidden NaN/inf may reach an output.
    return certify([make] { return std::make_unique<kernels::NarrowedKernel>(make(), [](Capabilities& c) { c.hidden_nonfinite = false; }); },
                   "plugin:/tmp/leaky.so", opt);
  }
  throw std::logic_error("hidden_times_zero is not in the mutant zoo");
}

Certificate declining_certificate(std::uint64_t seed) {
  conformance::ConformanceOptions opt;
  opt.seed = seed;
  opt.dtypes = {DType::f32};
  opt.only = {"R1", "R3", "R13"};
  Certificate c = certify([] { return std::make_unique<DecliningKernel>(); }, "plugin:/tmp/declining.so", opt);
  c.kernel.abi_version = 2;
  c.kernel.options = {{"max_tk", "64"}};
  c.kernel.configuration = "isa=avx2 (cpu dispatch) --kernel-option max_tk=64";
  return c;
}

}  // namespace attnv::report::testing
