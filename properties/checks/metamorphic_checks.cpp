// Metamorphic properties: a transformation of the case whose exact outputs are a known
// rearrangement of the original's, judged "within the bound" (checks.h): both runs against the
// original's exact values and bounds.
#include <algorithm>
#include <numeric>
#include <sstream>

#include "gen/rng.h"
#include "properties/checks/checks.h"
#include "properties/checks/runs.h"

namespace attnv::checks {
namespace {

using I = std::int64_t;

std::vector<I> permutation(I n, std::uint64_t seed) {
  std::vector<I> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), I{0});
  gen::Rng rng(seed);
  for (I i = n - 1; i > 0; --i) std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(rng.uniform_int(0, i))]);
  return p;
}

// Both runs against the original's exact values: out and lse.
PropertyResult judge_pair(const char* name, const Case& c, const Outputs& a, const Outputs& b,
                          const detail::Exact& e, const std::string& what) {
  double r_out = 0, r_lse = 0;
  std::string d = detail::disagreement(c, "out", a.out, b.out, e.exact.out, e.bounds.out, e.bounds.out, e.out_dtype, &r_out);
  if (d.empty() && !a.lse.empty())  // empty: the kernel claims no LSE
    d = detail::disagreement(c, "lse", a.lse, b.lse, e.exact.lse, e.bounds.lse, e.bounds.lse, e.out_dtype, &r_lse);
  const double ratio = std::max(r_out, r_lse);
  if (d.empty()) return PropertyResult::pass(name, c.id).with_ratio(ratio);
  return PropertyResult::fail(name, c.id, what + " beyond both runs' allowances", d).with_ratio(ratio);
}

Case forward_only(const Case& c) {
  Case r = c;
  r.dout.clear();
  return r;
}

// The part of a case one batch (b >= 0) and/or one KV head with its G query heads (hk >= 0) see.
Case sub_case(const Case& c, I b_only, I hk_only) {
  const Shape& s = c.problem.shape;
  const I G = c.problem.group();
  Problem p = c.problem;
  if (b_only >= 0) p.shape.B = 1;
  if (hk_only >= 0) { p.shape.Hkv = 1; p.shape.Hq = G; }
  Case r = make_zero_case(p, false);
  r.id = c.id;
  for (I b = 0; b < s.B; ++b) {
    if (b_only >= 0 && b != b_only) continue;
    const I rb = b_only >= 0 ? 0 : b;
    if (p.has_kv_len) r.kv_len[static_cast<std::size_t>(rb)] = c.kv_len[static_cast<std::size_t>(b)];
    for (I hk = 0; hk < s.Hkv; ++hk) {
      if (hk_only >= 0 && hk != hk_only) continue;
      const I rhk = hk_only >= 0 ? 0 : hk;
      for (I j = 0; j < s.Tk; ++j) {
        for (I d = 0; d < s.Dk; ++d) r.k[r.ki(rb, rhk, j, d)] = c.k[c.ki(b, hk, j, d)];
        for (I d = 0; d < s.Dv; ++d) r.v[r.vi(rb, rhk, j, d)] = c.v[c.vi(b, hk, j, d)];
      }
      for (I g = 0; g < G; ++g) {
        const I h = hk * G + g, rh = rhk * G + g;
        for (I i = 0; i < s.Tq; ++i) {
          for (I d = 0; d < s.Dk; ++d) r.q[r.qi(rb, rh, i, d)] = c.q[c.qi(b, h, i, d)];
          // The mask and bias planes this (b, h) reads, into the sub-case's (rb, rh).
          for (I j = 0; j < s.Tk; ++j) {
            if (p.has_mask) r.mask[r.mi(rb, rh, i, j)] = c.mask[c.mi(b, h, i, j)];
            if (p.has_bias) r.bias[r.bi(rb, rh, i, j)] = c.bias[c.bi(b, h, i, j)];
          }
        }
      }
    }
  }
  return r;
}

// Writes a sub-case's outputs into the full problem's positions.
void stitch(const Case& c, const Case& sub, const Outputs& so, I b_only, I hk_only, Outputs& into) {
  const Shape& s = c.problem.shape;
  const I G = c.problem.group();
  for (I b = 0; b < s.B; ++b) {
    if (b_only >= 0 && b != b_only) continue;
    for (I h = 0; h < s.Hq; ++h) {
      if (hk_only >= 0 && h / G != hk_only) continue;
      const I rb = b_only >= 0 ? 0 : b, rh = hk_only >= 0 ? h % G : h;
      for (I i = 0; i < s.Tq; ++i) {
        if (!so.lse.empty()) into.lse[c.li(b, h, i)] = so.lse[sub.li(rb, rh, i)];
        for (I d = 0; d < s.Dv; ++d) into.out[c.oi(b, h, i, d)] = so.out[sub.oi(rb, rh, i, d)];
      }
    }
  }
}

}  // namespace

PropertyResult check_query_permutation(Kernel& k, const Case& c0, Layout layout, std::uint64_t seed) {
  const char* name = "query_permutation";
  const Case c = forward_only(c0);
  if (c.problem.causal || c.problem.window.bounded())
    return PropertyResult::not_applicable(name, c.id, "positional problem");
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  const std::vector<I> perm = permutation(s.Tq, seed);
  Case pc = c;  // row i of pc is row perm[i] of c
  for (I i = 0; i < s.Tq; ++i) {
    const I from = perm[static_cast<std::size_t>(i)];
    for (I b = 0; b < s.B; ++b)
      for (I h = 0; h < s.Hq; ++h)
        for (I d = 0; d < s.Dk; ++d) pc.q[pc.qi(b, h, i, d)] = c.q[c.qi(b, h, from, d)];
    // Every plane of the mask and bias (per batch, per head) moves with the queries.
    for (I b = 0; b < s.B; ++b)
      for (I h = 0; h < s.Hq; ++h)
        for (I j = 0; j < s.Tk; ++j) {
          if (c.problem.has_mask) pc.mask[pc.mi(b, h, i, j)] = c.mask[c.mi(b, h, from, j)];
          if (c.problem.has_bias) pc.bias[pc.bi(b, h, i, j)] = c.bias[c.bi(b, h, from, j)];
        }
  }
  const Outputs a = detail::run(k, c, layout).out;
  const Outputs pb = detail::run(k, pc, layout).out;
  Outputs b = a;  // pb mapped back to the original row order
  for (I i = 0; i < s.Tq; ++i) {
    const I to = perm[static_cast<std::size_t>(i)];
    for (I bb = 0; bb < s.B; ++bb)
      for (I h = 0; h < s.Hq; ++h) {
        if (!pb.lse.empty()) b.lse[c.li(bb, h, to)] = pb.lse[c.li(bb, h, i)];
        for (I d = 0; d < s.Dv; ++d) b.out[c.oi(bb, h, to, d)] = pb.out[c.oi(bb, h, i, d)];
      }
  }
  return judge_pair(name, c, a, b, detail::exact_forward(k, c), "permuting the queries changed the outputs");
}

PropertyResult check_key_permutation(Kernel& k, const Case& c0, Layout layout, std::uint64_t seed) {
  const char* name = "key_permutation";
  const Case c = forward_only(c0);
  if (c.problem.causal || c.problem.window.bounded() || c.problem.has_kv_len)
    return PropertyResult::not_applicable(name, c.id, "positional problem or kv_len");
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  const std::vector<I> perm = permutation(s.Tk, seed);
  Case pc = c;  // key j of pc is key perm[j] of c
  for (I j = 0; j < s.Tk; ++j) {
    const I from = perm[static_cast<std::size_t>(j)];
    for (I b = 0; b < s.B; ++b)
      for (I h = 0; h < s.Hkv; ++h) {
        for (I d = 0; d < s.Dk; ++d) pc.k[pc.ki(b, h, j, d)] = c.k[c.ki(b, h, from, d)];
        for (I d = 0; d < s.Dv; ++d) pc.v[pc.vi(b, h, j, d)] = c.v[c.vi(b, h, from, d)];
      }
    for (I b = 0; b < s.B; ++b)
      for (I h = 0; h < s.Hq; ++h)
        for (I i = 0; i < s.Tq; ++i) {
          if (c.problem.has_mask) pc.mask[pc.mi(b, h, i, j)] = c.mask[c.mi(b, h, i, from)];
          if (c.problem.has_bias) pc.bias[pc.bi(b, h, i, j)] = c.bias[c.bi(b, h, i, from)];
        }
  }
  return judge_pair(name, c, detail::run(k, c, layout).out, detail::run(k, pc, layout).out,
                    detail::exact_forward(k, c), "permuting keys and values together changed the outputs");
}

PropertyResult check_gqa_repeat_interleave(Kernel& k, const Case& c0, Layout layout) {
  const char* name = "gqa_repeat_interleave";
  const Case c = forward_only(c0);
  const Shape& s = c.problem.shape;
  if (s.Hkv == s.Hq) return PropertyResult::not_applicable(name, c.id, "MHA (the expansion is the identity)");
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  Case mha = c;
  mha.problem.shape.Hkv = s.Hq;
  mha.k.assign(static_cast<std::size_t>(k_elements(mha.problem.shape)), 0.0);
  mha.v.assign(static_cast<std::size_t>(v_elements(mha.problem.shape)), 0.0);
  const I G = c.problem.group();
  for (I b = 0; b < s.B; ++b)
    for (I h = 0; h < s.Hq; ++h)  // repeat_interleave: query head h reads KV head h / G
      for (I j = 0; j < s.Tk; ++j) {
        for (I d = 0; d < s.Dk; ++d) mha.k[mha.ki(b, h, j, d)] = c.k[c.ki(b, h / G, j, d)];
        for (I d = 0; d < s.Dv; ++d) mha.v[mha.vi(b, h, j, d)] = c.v[c.vi(b, h / G, j, d)];
      }
  mha.id = c.id + " (K, V repeat_interleave'd to MHA)";
  return judge_pair(name, c, detail::run(k, c, layout).out, detail::run(k, mha, layout).out,
                    detail::exact_forward(k, c), "GQA and MHA on repeat_interleave'd K, V disagree");
}

PropertyResult check_layout_invariance(Kernel& k, const Case& c0) {
  const char* name = "layout_invariance";
  const Case c = forward_only(c0);
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const detail::Exact e = detail::exact_forward(k, c);
  const Outputs dense = detail::run(k, c, Layout::bhtd).out;
  for (Layout l : {Layout::bthd, Layout::gapped}) {
    PropertyResult r = judge_pair(name, c, dense, detail::run(k, c, l).out, e,
                                  "layouts bhtd and " + std::string(layout_name(l)) + " disagree");
    if (!r.ok) return r;
  }
  return PropertyResult::pass(name, c.id);
}

PropertyResult check_batch_head_independence(Kernel& k, const Case& c0, Layout layout) {
  const char* name = "batch_head_independence";
  const Case c = forward_only(c0);
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  if (s.B == 1 && s.Hkv == 1) return PropertyResult::not_applicable(name, c.id, "one batch, one KV head");
  const Outputs full = detail::run(k, c, layout).out;
  const detail::Exact e = detail::exact_forward(k, c);
  for (bool by_batch : {true, false}) {
    Outputs stitched = full;
    const I parts = by_batch ? s.B : s.Hkv;
    if (parts == 1) continue;
    for (I part = 0; part < parts; ++part) {
      const Case sub = sub_case(c, by_batch ? part : -1, by_batch ? -1 : part);
      stitch(c, sub, detail::run(k, sub, layout).out, by_batch ? part : -1, by_batch ? -1 : part, stitched);
    }
    PropertyResult r = judge_pair(name, c, full, stitched, e,
                                  by_batch ? "each batch run alone disagrees with the full run"
                                           : "each KV head group run alone disagrees with the full run");
    if (!r.ok) return r;
  }
  return PropertyResult::pass(name, c.id);
}

}  // namespace attnv::checks
