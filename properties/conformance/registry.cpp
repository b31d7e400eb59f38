#include "properties/conformance/registry.h"

#include <stdexcept>

namespace attnv::props {
namespace {

GenOptions with(void (*tweak)(GenOptions&)) {
  GenOptions o;
  tweak(o);
  return o;
}

// The production share of checks that run the kernel and the reference several times a case
// (backward, three layouts, per-slice runs, two runs, perturbed copies): half the default, as a
// production case costs them several times what it costs R1.
constexpr int kManyRuns = 2 * GenOptions{}.production_every;

}  // namespace

const std::vector<PropertyEntry>& property_registry() {
  static const std::vector<PropertyEntry> r = [] {
    std::vector<PropertyEntry> e;
    // 1 in 10 rather than the default 1 in 32: one run and one reference a case make it the
    // cheapest place for a production shape, and it judges most of a tiled kernel's arithmetic.
    e.push_back({"matches_reference", with([](GenOptions& o) { o.production_every = 10; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_matches_reference(k, pc.c, pc.layout); }});
    e.push_back({"backward_matches_reference", with([](GenOptions& o) { o.with_dout = true; o.max_work = 60000; o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_backward_matches_reference(k, pc.c, pc.layout); }});
    e.push_back({"rows_sum_to_one", with([](GenOptions& o) { o.max_work = 60000; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_rows_sum_to_one(k, pc.c, pc.layout); }});
    e.push_back({"convex_hull", {}, [](Kernel& k, const PropertyCase& pc) { return check_convex_hull(k, pc.c, pc.layout); }});
    e.push_back({"no_leakage", with([](GenOptions& o) { o.masked_rows = true; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_no_leakage(k, pc.c, pc.layout, pc.seed); }});
    e.push_back({"hidden_nonfinite", with([](GenOptions& o) { o.masked_rows = true; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_hidden_nonfinite(k, pc.c, pc.layout, pc.seed); }});
    e.push_back({"fully_masked_rows", with([](GenOptions& o) { o.masked_rows = true; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_fully_masked_rows(k, pc.c, pc.layout); }});
    e.push_back({"query_permutation", with([](GenOptions& o) { o.positional = false; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_query_permutation(k, pc.c, pc.layout, pc.seed); }});
    e.push_back({"key_permutation", with([](GenOptions& o) { o.positional = false; o.kv_len = false; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_key_permutation(k, pc.c, pc.layout, pc.seed); }});
    e.push_back({"gqa_repeat_interleave", with([](GenOptions& o) { o.grouped = true; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_gqa_repeat_interleave(k, pc.c, pc.layout); }});
    e.push_back({"layout_invariance", with([](GenOptions& o) { o.layouts = false; o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_layout_invariance(k, pc.c); }});
    e.push_back({"batch_head_independence", with([](GenOptions& o) { o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_batch_head_independence(k, pc.c, pc.layout); }});
    e.push_back({"determinism", with([](GenOptions& o) { o.with_dout = true; o.max_work = 60000; o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_determinism(k, pc.c, pc.layout); }});
    e.push_back({"inputs_unchanged", with([](GenOptions& o) { o.with_dout = true; o.max_work = 60000; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_inputs_unchanged(k, pc.c, pc.layout); }});
    e.push_back({"key_translation", with([](GenOptions& o) { o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_key_translation(k, pc.c, pc.layout, pc.seed); }});
    e.push_back({"v_linearity", with([](GenOptions& o) { o.production_every = kManyRuns; }),
                 [](Kernel& k, const PropertyCase& pc) { return check_v_linearity(k, pc.c, pc.layout, pc.seed); }});
    // Prompts of up to 40 tokens (two decode runs of several calls each, a reference per call).
    // No production share: a production prompt (>= 64 tokens) is what max_tk = 40 rules out.
    e.push_back({"decode_equals_prefill", with([](GenOptions& o) {
                   o.kv_len = false; o.max_tk = 40; o.max_work = 60000;
                   o.production_every = 0;
                 }),
                 [](Kernel& k, const PropertyCase& pc) { return check_decode_equals_prefill(k, pc.c, pc.layout, pc.seed); }});
    // These build their own case from the dtype and the seed; the generated case only supplies them
    // (small, so drawing it costs nothing). No production share: the drawn shape is never run.
    const auto own = with([](GenOptions& o) { o.max_work = 1000; o.production_every = 0; });
    e.push_back({"score_rank", own,
                 [](Kernel& k, const PropertyCase& pc) { return check_score_rank(k, pc.c.problem.dtype, pc.seed, pc.layout); }});
    e.push_back({"entropy_temperature", own, [](Kernel& k, const PropertyCase& pc) {
                   return check_entropy_temperature(k, pc.c.problem.dtype, pc.seed, pc.layout);
                 }});
    e.push_back({"score_variance", own,
                 [](Kernel& k, const PropertyCase& pc) { return check_score_variance(k, pc.c.problem.dtype, pc.seed, pc.layout); }});
    return e;
  }();
  return r;
}

const PropertyEntry& property(const std::string& name) {
  for (const auto& e : property_registry())
    if (e.name == name) return e;
  throw std::invalid_argument("no property named " + name);
}

GenOptions rounding_campaign_options() {
  GenOptions o;
  o.dtypes = {DType::bf16};
  return o;
}

}  // namespace attnv::props
