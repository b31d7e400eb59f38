#include "properties/generators/property_case.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "gen/rng.h"
#include "problem/fit_to_claims.h"

namespace attnv::generators {
namespace {

using I = std::int64_t;

// Lengths: mostly small, often the awkward sizes around typical tiles (63, 65, 127, 129) and a
// long row; the first alternatives are the smallest, which is where shrinking goes.
rc::Gen<I> gen_length() {
  return rc::gen::weightedOneOf<I>({{6, rc::gen::inRange<I>(1, 10)},
                                    {3, rc::gen::element<I>(1, 2, 63, 65, 127, 129, 1000)},
                                    {2, rc::gen::inRange<I>(1, 300)}});
}

rc::Gen<I> gen_head_dim() {
  return rc::gen::weightedOneOf<I>({{5, rc::gen::inRange<I>(1, 9)},
                                    {3, rc::gen::element<I>(16, 31, 64, 65, 128, 256)},
                                    {2, rc::gen::inRange<I>(1, 257)}});
}

template <class T>
rc::Gen<T> sometimes(std::size_t weight_on, T off, T on) {
  return rc::gen::weightedElement<T>({{10 - weight_on, off}, {weight_on, on}});
}

I work(const Shape& s) { return s.B * s.Hq * s.Tq * s.Tk * (s.Dk + s.Dv); }

// Shrinks a shape until its work fits: head dims first, then queries, heads, batch, keys.
void fit(Shape& s, const GenOptions& opt) {
  s.Tk = std::min(s.Tk, opt.max_tk);
  s.Dv = std::min(s.Dv, opt.max_dv);
  while (work(s) > opt.max_work) {
    if (s.Dk + s.Dv > 16) {
      if (s.Dk >= s.Dv) s.Dk = (s.Dk + 1) / 2; else s.Dv = (s.Dv + 1) / 2;
    } else if (s.Tq > 1) {
      s.Tq = (s.Tq + 1) / 2;
    } else if (s.B > 1) {
      --s.B;
    } else if (s.Hq > s.Hkv * (opt.grouped ? 2 : 1)) {
      s.Hq -= s.Hkv;
    } else if (s.Tk > 1) {
      s.Tk = (s.Tk + 1) / 2;
    } else {
      break;
    }
  }
}

// A production length: whole 64-tiles, and a ragged tail (1..63) in 9 of 10 draws: the tail is
// where a tiled kernel pads, the exact multiple where it must not.
I production_length(I tiles) {
  return 64 * tiles + (*sometimes<bool>(9, false, true) ? *rc::gen::inRange<I>(1, 64) : 0);
}

// The shape of a real model's call: one batch, head dims of real models, GQA groups of 4 and 8
// (when claimed), and one long dimension at a time: a long context (Tq of 1 to 4 tiles, Tk up to
// 64 tiles) or a long prompt (Tq up to 32 tiles, Tk of 1 to 4 tiles). Cost decides the weights:
// the reference and the bound take ~40 ns per unit of Hq*Tq*Tk*(Dk+Dv), so one 64 x 64 tile
// at D = 64 (~50 ms with tails) already costs what 30 toy cases do. Hence mostly one tile and a
// tail each way, few heads, and thousands of keys only now and then, within production_max_work.
void production_shape(Shape& s, const GenOptions& opt, bool gqa) {
  s.B = 1;
  s.Hkv = 1;
  const I group = !gqa ? 1
                  : opt.grouped ? *rc::gen::weightedElement<I>({{2, 4}, {1, 8}})
                                : *rc::gen::weightedElement<I>({{4, 1}, {1, 4}, {1, 8}});
  s.Hq = s.Hkv * group;
  s.Dk = *rc::gen::weightedElement<I>({{2, 64}, {2, 128}, {1, 256}});
  s.Dv = std::min(s.Dk, opt.max_dv);
  const bool long_keys = *rc::gen::element(true, false);
  const I short_len = production_length(*rc::gen::weightedOneOf<I>({{3, rc::gen::just<I>(1)}, {1, rc::gen::inRange<I>(2, 5)}}));
  const I long_tiles = *rc::gen::weightedOneOf<I>(
      {{14, rc::gen::just<I>(1)}, {5, rc::gen::inRange<I>(2, 9)}, {1, rc::gen::inRange<I>(9, long_keys ? 65 : 33)}});
  const I per_long = s.Hq * short_len * (s.Dk + s.Dv);  // work per unit of the long length
  const I long_len = production_length(std::min(long_tiles, std::max<I>(1, opt.production_max_work / per_long / 64)));
  s.Tq = long_keys ? short_len : long_len;
  s.Tk = long_keys ? long_len : short_len;
}

}  // namespace

bool is_production_index(int production_every, std::int64_t index) {
  return production_every > 0 && (index + 1) % production_every == 0;
}

namespace {
GenOptions with_production(GenOptions opt, bool production) {
  opt.production = production;
  return opt;
}
}  // namespace

CaseStream::CaseStream(const GenOptions& opt, std::uint64_t seed)
    : every_(opt.production_every),
      toy_(gen_property_case(with_production(opt, false))),
      production_(gen_property_case(with_production(opt, true))),
      random_(seed) {}

PropertyCase CaseStream::next() {
  return (is_production_index(every_, index_++) ? production_ : toy_)(random_.split()).value();
}

std::string_view family_name(ValueFamily f) {
  switch (f) {
    case ValueFamily::moderate: return "moderate";
    case ValueFamily::large_logits: return "large_logits";
    case ValueFamily::far_negative: return "far_negative";
    case ValueFamily::near_ties: return "near_ties";
    case ValueFamily::one_hot: return "one_hot";
    case ValueFamily::subnormals: return "subnormals";
    case ValueFamily::f16_top: return "f16_top";
  }
  return "?";
}

rc::Gen<Problem> gen_problem(const GenOptions& opt) {
  return rc::gen::exec([opt] {
    const auto claims = [&opt](bool Capabilities::*f) { return !opt.claims || (*opt.claims).*f; };
    Problem p;
    Shape& s = p.shape;
    p.dtype = *rc::gen::elementOf(opt.dtypes);
    if (opt.production) {
      production_shape(s, opt, claims(&Capabilities::gqa));
    } else {
      s.B = *rc::gen::weightedElement<I>({{6, 1}, {3, 2}, {1, 3}});
      s.Hkv = *rc::gen::inRange<I>(1, 4);
      s.Hq = s.Hkv * (claims(&Capabilities::gqa) ? *rc::gen::inRange<I>(opt.grouped ? 2 : 1, 4) : 1);
      s.Tq = *gen_length();
      s.Tk = *gen_length();
      s.Dk = *gen_head_dim();
      s.Dv = *sometimes<bool>(7, false, true) ? *gen_head_dim() : s.Dk;  // Dv != Dk often
      fit(s, opt);
    }
    if (opt.options) {
      if (opt.positional) {
        p.causal = *sometimes<bool>(3, false, true);
        if (claims(&Capabilities::window) && *sometimes<bool>(2, false, true)) {
          // Now and then a side near 2^63 (the manifest allows up to 2^63 - 1): a kernel that
          // computes pos + wr or pos - wl overflows there.
          const auto side = [&] {
            return *rc::gen::weightedOneOf<I>({{12, rc::gen::inRange<I>(-1, s.Tk + 1)},
                                               {1, rc::gen::element(std::numeric_limits<I>::max(),
                                                                    std::numeric_limits<I>::max() - 1)}});
          };
          p.window.left = side();
          p.window.right = side();
        }
        p.alignment = *sometimes(4, Alignment::top_left, Alignment::bottom_right);  // fitted below
      }
      p.has_mask = claims(&Capabilities::mask) && *sometimes<bool>(opt.masked_rows ? 4 : 2, false, true);
      p.has_bias = claims(&Capabilities::bias) && *sometimes<bool>(2, false, true);
      // Per-batch and per-head planes, where claimed: mostly per head (the bug class of a kernel
      // that reads head 0's plane for every head), sometimes per batch, sometimes both.
      if (claims(&Capabilities::mask_bias_per_batch_head)) {
        const auto draw_dims = [&](bool has) {
          Leading d;
          if (!has || !*sometimes<bool>(5, false, true)) return d;
          d.heads = *sometimes<bool>(7, false, true);
          d.batch = !d.heads || *sometimes<bool>(4, false, true);
          return d;
        };
        p.mask_dims = draw_dims(p.has_mask);
        p.bias_dims = draw_dims(p.has_bias);
      }
      p.has_kv_len = opt.kv_len && claims(&Capabilities::kv_len) && *sometimes<bool>(opt.masked_rows ? 5 : 3, false, true);
      if (claims(&Capabilities::softcap) && *sometimes<bool>(2, false, true)) p.softcap = *rc::gen::element(1.0, 5.0, 30.0);
      if (claims(&Capabilities::custom_scale) && *sometimes<bool>(2, false, true))
        p.scale = *rc::gen::element(1.0, 0.5, 0.01, 3.0);
      p.has_sinks = opt.sinks && claims(&Capabilities::sinks) && *sometimes<bool>(2, false, true);
      p.has_alibi = opt.alibi && claims(&Capabilities::alibi) && *sometimes<bool>(3, false, true);
      // Packed sequences: 1 to 4 sequences in one batch entry, which takes no mask or bias
      // (docs/semantics.md); their bounds are values (make_values). The kv_len drawn above is
      // then per sequence, kept only where that is claimed (varlen_kv_len): no new draw, so a
      // kernel without the claim gets the cases it always got.
      if (opt.varlen && claims(&Capabilities::varlen) && *sometimes<bool>(3, false, true)) {
        p.varlen_sequences = *rc::gen::inRange<I>(1, 5);
        s.B = 1;
        p.has_kv_len = p.has_kv_len && claims(&Capabilities::varlen_kv_len);
        p.has_mask = p.has_bias = false;
        p.mask_dims = p.bias_dims = {};
        // Per-sequence key lengths place a bottom-right diagonal by the keys a sequence uses,
        // not the ones it stores: only that alignment tells the two apart. Drawn as the other
        // cases are (causal 3 in 10, bottom-right 4 in 10), 1 of R1's 200 quick cases decided a
        // kernel aligning to the stored keys; so these cases are causal bottom-right in 6 of 10.
        // (The extra draw changes only these cases: each case draws from its own split Random.)
        if (p.has_kv_len && opt.positional && *sometimes<bool>(6, false, true)) {
          p.causal = true;
          p.alignment = Alignment::bottom_right;
        }
      }
    }
    // Chunks, where claimed: mostly a few keys each (several chunks in Tk), 1 (every key its own
    // chunk), past Tk (one chunk: the rule hides nothing) and 2^63 - 1 now and then. Drawn after
    // everything else, so the draws before it are the ones every kernel got before chunks (each
    // draw takes its own split of the case's Random): no other case of a stream changed.
    if (opt.options && opt.positional && claims(&Capabilities::chunked) && *sometimes<bool>(3, false, true))
      p.chunk = *rc::gen::weightedOneOf<I>({{12, rc::gen::inRange<I>(1, s.Tk + 2)},
                                            {1, rc::gen::element(std::numeric_limits<I>::max())}});
    // The draws above skip what is not claimed where skipping saves a draw (so a kernel that
    // claims a feature gets the draws it always got); fitting to the claim table does the rest:
    // alignments, the dtype, and claims withdrawn in the drawn dtype (a bias claimed in f32 but
    // not in f16 is dropped from f16 cases, which are then judged without it).
    if (opt.claims) fit_to_claims(p, *opt.claims);
    return p;
  });
}

Case make_values(const Problem& p, ValueFamily family, std::uint64_t seed, bool with_dout, bool masked_rows) {
  Case c = make_zero_case(p, with_dout);
  const Shape& s = p.shape;
  gen::Rng rng(seed);
  const double scale = p.effective_scale();
  const double dk = static_cast<double>(s.Dk);
  auto fill = [&](std::vector<double>& v, auto draw) { for (double& x : v) x = draw(); };
  auto normal = [&] { return rng.normal(); };
  fill(c.q, normal);
  fill(c.k, normal);
  fill(c.v, normal);
  switch (family) {
    case ValueFamily::moderate: break;
    case ValueFamily::large_logits: {
      // scale * |q||k| ~ a^2 scale sqrt(Dk): aim at logits ~2e3 (the storage range permitting).
      const double a = std::min(200.0, std::sqrt(2000.0 / (scale * std::sqrt(dk))));
      for (auto* t : {&c.q, &c.k}) for (double& x : *t) x *= a;
      break;
    }
    case ValueFamily::far_negative: {
      // q > 0 and k < 0 everywhere: every logit is ~ -a^2 scale Dk; aim at -2e3.
      const double a = std::min(200.0, std::sqrt(2000.0 / (scale * dk)));
      for (double& x : c.q) x = a * (0.75 + 0.25 * std::abs(x));
      for (double& x : c.k) x = -a * (0.75 + 0.25 * std::abs(x));
      break;
    }
    case ValueFamily::near_ties: {
      // One base key per KV head, each key a few storage ulps away from it; large queries turn
      // the tiny key differences into logit differences of order 1.
      for (I b = 0; b < s.B; ++b)
        for (I h = 0; h < s.Hkv; ++h)
          for (I d = 0; d < s.Dk; ++d) {
            const double base = round_to(p.dtype, c.k[c.ki(b, h, 0, d)]);
            for (I j = 0; j < s.Tk; ++j)
              c.k[c.ki(b, h, j, d)] = base + ulp(p.dtype, base) * static_cast<double>(rng.uniform_int(-3, 3));
          }
      const double a = std::min(1e4, 1.0 / (scale * std::sqrt(dk) * unit_roundoff(p.dtype) * 4));
      for (double& x : c.q) x *= std::min(a, max_finite(p.dtype) / 8);
      break;
    }
    case ValueFamily::one_hot: {
      for (double& x : c.q) x = 1 + 0.1 * x;
      for (double& x : c.k) x *= 0.1;
      for (I b = 0; b < s.B; ++b)
        for (I h = 0; h < s.Hkv; ++h) {
          const I j = rng.uniform_int(0, s.Tk - 1);
          for (I d = 0; d < s.Dk; ++d) c.k[c.ki(b, h, j, d)] = 40.0 / (scale * dk);
        }
      break;
    }
    case ValueFamily::subnormals: {
      const double tiny = min_normal(p.dtype);
      for (auto* t : {&c.q, &c.k, &c.v})
        for (double& x : *t)
          if (rng.bernoulli(0.5)) x = tiny * rng.uniform(-1, 1);
      break;
    }
    case ValueFamily::f16_top:
      for (double& x : c.v) x = (x < 0 ? -1 : 1) * rng.uniform(6e4, 65504);
      break;
  }
  if (with_dout) fill(c.dout, normal);
  // kv_len, mask and bias: mostly ordinary, sometimes the edges (0 and Tk), sometimes empty rows.
  const double empty_row = masked_rows ? 0.3 : 0.05;
  if (p.has_kv_len && p.varlen_sequences == 0)
    for (auto& n : c.kv_len) {
      const double r = rng.uniform();
      n = r < empty_row ? 0 : r < 0.3 ? s.Tk : rng.uniform_int(0, s.Tk);
    }
  if (p.has_mask) {
    // Each plane (per batch entry, per head) its own density and empty rows.
    const I plane_size = s.Tq * s.Tk, planes = mask_elements(p) / plane_size;
    for (I pl = 0; pl < planes; ++pl) {
      const double density = rng.uniform(0.2, 1.0);
      for (I i = 0; i < s.Tq; ++i) {
        const bool empty = rng.bernoulli(empty_row);
        for (I j = 0; j < s.Tk; ++j) c.mask[static_cast<std::size_t>(pl * plane_size + i * s.Tk + j)] = !empty && rng.bernoulli(density);
      }
      // A plane equal to the first would hide a kernel that reads the first plane for all.
      const auto first = c.mask.begin(), mine = first + pl * plane_size;
      if (pl > 0 && std::equal(mine, mine + plane_size, first)) {
        const auto n = static_cast<std::size_t>(pl * plane_size + rng.uniform_int(0, plane_size - 1));
        c.mask[n] = !c.mask[n];
      }
    }
  }
  if (p.has_bias)
    for (double& x : c.bias) x = rng.bernoulli(0.05) ? -kInf : rng.normal();
  // Sinks of either sign and of the logits' size, now and then one that dominates the row.
  for (double& x : c.sinks) x = 2 * rng.normal() + (rng.bernoulli(0.2) ? 8 : 0);
  // ALiBi: mostly the standard geometric slopes 2^(-8 (h+1) / Hq), sometimes random ones.
  const bool geometric = rng.bernoulli(0.7);
  for (std::size_t h = 0; h < c.alibi.size(); ++h)
    c.alibi[h] = geometric ? std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(s.Hq)) : rng.uniform(0, 1);
  // Packed sequences: the queries and the keys cut apart (so len_q != len_k in most sequences),
  // and a cut repeated now and then: a sequence with no queries, no keys, or neither.
  const auto cut = [&](std::vector<I>& cu, I total) {
    if (cu.empty()) return;
    const std::size_t S = cu.size() - 1;
    for (std::size_t n = 1; n < S; ++n) cu[n] = rng.uniform_int(0, total);
    std::sort(cu.begin() + 1, cu.begin() + static_cast<std::ptrdiff_t>(S));
    for (std::size_t n = 1; n < S; ++n)
      if (rng.bernoulli(0.2)) cu[n] = cu[n - 1];
  };
  cut(c.cu_seqlens_q, s.Tq);
  cut(c.cu_seqlens_k, s.Tk);
  // Per-sequence key lengths (seqused_k), once the keys are cut: the same edges per sequence,
  // 0 and all of its keys, and lengths in between (where bottom-right alignment to the used keys
  // differs from alignment to the stored ones).
  if (p.has_kv_len && p.varlen_sequences > 0)
    for (std::size_t n = 0; n < c.kv_len.size(); ++n) {
      const I len = c.cu_seqlens_k[n + 1] - c.cu_seqlens_k[n];
      const double r = rng.uniform();
      c.kv_len[n] = r < empty_row ? 0 : r < 0.3 ? len : rng.uniform_int(0, len);
    }
  round_to_storage(c);
  return c;
}

rc::Gen<PropertyCase> gen_property_case(const GenOptions& opt) {
  return rc::gen::exec([opt] {
    PropertyCase pc;
    const Problem p = *gen_problem(opt);
    pc.family = *rc::gen::elementOf(opt.families);
    pc.layout = opt.layouts && (!opt.claims || opt.claims->strided) ? *rc::gen::element(Layout::bhtd, Layout::bthd, Layout::gapped) : Layout::bhtd;
    pc.seed = *rc::gen::inRange<std::uint64_t>(0, 1000000);
    pc.c = make_values(p, pc.family, pc.seed, opt.with_dout, opt.masked_rows);
    pc.c.id = case_label(pc);
    return pc;
  });
}

std::string case_label(const PropertyCase& pc) {
  std::ostringstream o;
  o << family_name(pc.family) << " seed=" << pc.seed << ' ' << layout_name(pc.layout) << " | "
    << describe(pc.c.problem);
  return o.str();
}

void showValue(const PropertyCase& pc, std::ostream& os) {
  os << case_label(pc) << '\n';
  const Case& c = pc.c;
  if (q_elements(c.problem.shape) + k_elements(c.problem.shape) + v_elements(c.problem.shape) > 64) {
    os << "  (tensors too large to print; make_values(problem, family, seed) recreates them)";
    return;
  }
  auto print = [&](const char* name, const std::vector<double>& v) {
    os << "  " << name << " = [";
    for (std::size_t n = 0; n < v.size(); ++n) os << (n ? ", " : "") << v[n];
    os << "]\n";
  };
  print("q", c.q);
  print("k", c.k);
  print("v", c.v);
  if (c.problem.has_bias) print("bias", c.bias);
  if (c.problem.has_mask) {
    os << "  mask = ";
    for (auto m : c.mask) os << int(m);
    os << '\n';
  }
  if (c.problem.has_kv_len) {
    os << "  kv_len =";
    for (auto n : c.kv_len) os << ' ' << n;
    os << '\n';
  }
  for (const auto& [name, cu] : {std::pair{"cu_seqlens_q", &c.cu_seqlens_q}, std::pair{"cu_seqlens_k", &c.cu_seqlens_k}}) {
    if (cu->empty()) continue;
    os << "  " << name << " =";
    for (auto n : *cu) os << ' ' << n;
    os << '\n';
  }
}

}  // namespace attnv::generators
