// The soundness campaign (issue 39): correct kernels of different structures and declared models
// over every case family and storage dtype, with extra weight on the families that reach the
// edges of the arithmetic (large logits, cancellation, one-hot and all-negative rows, whose
// weights and gradients underflow), judged by R1 and R2's checks: not one violation. A false
// finding here is a bound or a reference that is not sound for a kernel computing within its
// declared model. CI runs a slice (ATTNV_CAMPAIGN_SEEDS seeds per family and dtype, default 3);
// the note of the issue records a longer run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/core_kernel.h"
#include "gen/families.h"
#include "kernels/emulated_kernel.h"
#include "kernels/naive_kernel.h"
#include "properties/checks/checks.h"

namespace attnv::checks {
using namespace kernels;  // the kernels under test (kernels/)
namespace {

struct Entry {
  std::string name;
  std::function<std::unique_ptr<Kernel>()> make;
};

// Each computes within the precision model it declares: the naive kernel in one pass, tiled
// with a power-of-two and an odd key block (tail tiles), with the scale applied to dS first
// (FlashAttention-2's backward order); the optimized core; the exact emulations of the natural,
// tiled, P-rounded and staged models.
std::vector<Entry> correct_kernels() {
  std::vector<Entry> k;
  k.push_back({"naive", [] { return std::make_unique<NaiveKernel>(); }});
  k.push_back({"naive_tiled16", [] { return std::make_unique<NaiveKernel>(NaiveOptions{Structure::tiled, 16}); }});
  k.push_back({"naive_tiled5", [] { return std::make_unique<NaiveKernel>(NaiveOptions{Structure::tiled, 5}); }});
  k.push_back({"naive_scale_ds_first",
               [] { return std::make_unique<NaiveKernel>(NaiveOptions{.scale_ds_first = true}); }});
  k.push_back({"core", [] { return std::make_unique<core::CoreKernel>(core::ForwardOptions{.threads = 1}); }});
  k.push_back({"emulated", [] { return std::make_unique<EmulatedKernel>(); }});
  k.push_back({"emulated_tiled8", [] {
                 return std::make_unique<EmulatedKernel>(EmulatedOptions{.structure = kernels::emulated::Structure::tiled, .block = 8});
               }});
  k.push_back({"emulated_p_rounded", [] { return std::make_unique<EmulatedKernel>(EmulatedOptions{.p_rounded = true}); }});
  return k;
}

int seeds_per_cell() {
  const char* s = std::getenv("ATTNV_CAMPAIGN_SEEDS");
  return s && *s ? std::max(1, std::atoi(s)) : 3;
}

TEST(SoundnessCampaign, CorrectKernelsHaveNoFinding) {
  const int seeds = seeds_per_cell();
  const std::vector<gen::Family> edges = {gen::Family::large_logits, gen::Family::cancelling_values,
                                          gen::Family::one_hot, gen::Family::all_negative};
  std::int64_t cases = 0, judged = 0, violations = 0;
  for (const Entry& e : correct_kernels()) {
    std::unique_ptr<Kernel> k = e.make();
    std::int64_t kernel_judged = 0;
    for (gen::Family f : gen::all_families()) {
      const bool edge = std::find(edges.begin(), edges.end(), f) != edges.end();
      for (DType d : {DType::f64, DType::f32, DType::f16, DType::bf16})
        for (int s = 1; s <= seeds * (edge ? 3 : 1); ++s) {
          gen::FamilyOptions o;
          o.dtype = d;
          const Case c = gen::make_case(f, static_cast<std::uint64_t>(s) * 7919 + 11, o);
          ++cases;
          for (const PropertyResult& r :
               {check_matches_reference(*k, c, Layout::bhtd), check_backward_matches_reference(*k, c, Layout::bhtd)}) {
            if (!r.judged()) continue;
            ++judged;
            ++kernel_judged;
            if (!r.ok) {
              ++violations;
              ADD_FAILURE() << e.name << " on " << c.id << ": " << r.message << "\n" << r.worst;
            }
          }
        }
    }
    EXPECT_GT(kernel_judged, 0) << e.name << " was judged on no case";
  }
  std::printf("soundness campaign: %zu kernels x %zu families x 4 dtypes, %lld kernel-cases, %lld judgements "
              "(R1, R2), %lld violations\n",
              correct_kernels().size(), gen::all_families().size(), static_cast<long long>(cases),
              static_cast<long long>(judged), static_cast<long long>(violations));
}

}  // namespace
}  // namespace attnv::checks
