// Keys that kv_len hides are as good as absent: batch entry b with kv_len[b] = n gives the outputs
// of its own problem with the keys cut to their first n (Tk = n, no kv_len). docs/semantics.md
// places a bottom-right query by the keys it may see, so both problems align the same way; a
// kernel that aligns by the stored Tk, or lets a padded key into a softmax, tail tile or window,
// breaks it. The exact outputs of the two are equal; each run is judged with its own bound.
#include "gen/rng.h"
#include "problem/features/registry.h"
#include "properties/checks/runs.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {
namespace {

using I = std::int64_t;

// Batch entry b of c, its keys cut to the first n: the mask and bias planes it reads and its
// per-head inputs (sinks, ALiBi slopes) come along.
Case cut_keys(const Case& c, I b, I n) {
  Problem p = c.problem;
  p.shape.B = 1;
  p.shape.Tk = n;
  p.has_kv_len = false;
  Case r = make_zero_case(p, false);
  r.id = c.id + " (batch " + std::to_string(b) + ", keys cut to " + std::to_string(n) + ")";
  const Shape& s = c.problem.shape;
  for (I hk = 0; hk < s.Hkv; ++hk)
    for (I j = 0; j < n; ++j) {
      for (I d = 0; d < s.Dk; ++d) r.k[r.ki(0, hk, j, d)] = c.k[c.ki(b, hk, j, d)];
      for (I d = 0; d < s.Dv; ++d) r.v[r.vi(0, hk, j, d)] = c.v[c.vi(b, hk, j, d)];
    }
  for (I h = 0; h < s.Hq; ++h)
    for (I i = 0; i < s.Tq; ++i) {
      for (I d = 0; d < s.Dk; ++d) r.q[r.qi(0, h, i, d)] = c.q[c.qi(b, h, i, d)];
      for (I j = 0; j < n; ++j) {
        if (p.has_mask) r.mask[r.mi(0, h, i, j)] = c.mask[c.mi(b, h, i, j)];
        if (p.has_bias) r.bias[r.bi(0, h, i, j)] = c.bias[c.bi(b, h, i, j)];
      }
    }
  for (const HeadInput& in : kHeadInputs) r.*in.values = c.*in.values;
  return r;
}

// Batch entry b's outputs (or bounds) of the cut case's, written into the full case's places.
void put_batch(const Case& c, const Case& cut, I b, const std::vector<double>& from_out, const std::vector<double>& from_lse,
               std::vector<double>& out, std::vector<double>& lse) {
  const Shape& s = c.problem.shape;
  for (I h = 0; h < s.Hq; ++h)
    for (I i = 0; i < s.Tq; ++i) {
      if (!from_lse.empty() && !lse.empty()) lse[c.li(b, h, i)] = from_lse[cut.li(0, h, i)];
      for (I d = 0; d < s.Dv; ++d) out[c.oi(b, h, i, d)] = from_out[cut.oi(0, h, i, d)];
    }
}

checks::PropertyResult check_padding_is_truncation(Kernel& k, const generators::PropertyCase& pc) {
  const char* name = "padding_is_truncation";
  using checks::PropertyResult;
  Case c = pc.c;
  c.dout.clear();
  const Shape& s = c.problem.shape;
  if (c.problem.varlen_sequences > 0)
    return PropertyResult::not_applicable(name, c.id, "packed sequences (their kv_len is per sequence)");
  if (s.Tk < 2) return PropertyResult::not_exercised(name, c.id, "one key: nothing to cut");
  if (!c.problem.has_kv_len) {  // then lengths of its own, each cutting at least one key
    c.problem.has_kv_len = true;
    gen::Rng rng(pc.seed ^ 0x7472756e63617465ull);
    c.kv_len.resize(static_cast<std::size_t>(s.B));
    for (I& n : c.kv_len) n = rng.uniform_int(1, s.Tk - 1);
  }
  if (auto why = checks::detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Outputs full = checks::detail::run(k, c, pc.layout).out;
  const checks::detail::Exact e = checks::detail::exact_forward(k, c);
  // Entries whose kv_len cuts nothing (n = Tk) or everything (n = 0: no problem has Tk = 0) keep
  // the full run's outputs and bounds: compared with themselves, they pass.
  Outputs cut = full;
  bound::Bounds cut_bounds = e.bounds;
  I entries = 0;
  for (I b = 0; b < s.B; ++b) {
    const I n = c.kv_len[static_cast<std::size_t>(b)];
    if (n <= 0 || n >= s.Tk) continue;
    const Case t = cut_keys(c, b, n);
    const Outputs o = checks::detail::run(k, t, pc.layout).out;
    const checks::detail::Exact et = checks::detail::exact_forward(k, t);
    put_batch(c, t, b, o.out, o.lse, cut.out, cut.lse);
    put_batch(c, t, b, et.bounds.out, et.bounds.lse, cut_bounds.out, cut_bounds.lse);
    ++entries;
  }
  if (entries == 0) return PropertyResult::not_exercised(name, c.id, "every kv_len is 0 or Tk: nothing is cut");
  double r_out = 0, r_lse = 0;
  std::string d = checks::detail::disagreement(c, "out", full.out, cut.out, e.exact.out, e.bounds.out, cut_bounds.out,
                                              e.out_dtype, &r_out);
  if (d.empty() && !full.lse.empty())  // empty: the kernel claims no LSE
    d = checks::detail::disagreement(c, "lse", full.lse, cut.lse, e.exact.lse, e.bounds.lse, cut_bounds.lse, e.out_dtype, &r_lse);
  const double ratio = std::max(r_out, r_lse);
  if (d.empty()) return PropertyResult::pass(name, c.id).with_ratio(ratio);
  return PropertyResult::fail(name, c.id, "kv_len = n disagrees with the keys cut to their first n, beyond both runs' allowances", d)
      .with_ratio(ratio);
}

}  // namespace

Requirement r23_padding_is_truncation() {
  return {
      .id = "R23",
      .property = "padding_is_truncation",
      .statement = "kv_len = n gives the outputs of the keys cut to their first n",
      .mutants = {"kv_len_aligned_to_stored_keys"},
      .needs = "kv_len",
      .missing = needs_claim(&Capabilities::kv_len, "kv_len"),
      .check = check_padding_is_truncation,
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
