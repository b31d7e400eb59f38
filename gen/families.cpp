#include "gen/families.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gen/rng.h"
#include "problem/validate.h"

namespace attnv::gen {

std::string_view family_name(Family f) {
  switch (f) {
    case Family::random: return "random";
    case Family::large_logits: return "large_logits";
    case Family::near_ties: return "near_ties";
    case Family::long_rows: return "long_rows";
    case Family::cancelling_values: return "cancelling_values";
    case Family::offset_values: return "offset_values";
    case Family::one_hot: return "one_hot";
    case Family::heavy_tails: return "heavy_tails";
    case Family::fully_masked: return "fully_masked";
    case Family::all_negative: return "all_negative";
  }
  return "?";
}

std::vector<Family> all_families() {
  return {Family::random,        Family::large_logits, Family::near_ties,   Family::long_rows,
          Family::cancelling_values, Family::offset_values, Family::one_hot, Family::heavy_tails,
          Family::fully_masked,  Family::all_negative};
}

namespace {

// Log-uniform integer in [lo, hi]: short and long rows alike, and every length near tile sizes.
std::int64_t log_uniform(Rng& r, std::int64_t lo, std::int64_t hi) {
  const double x = std::exp(r.uniform(std::log(double(lo)), std::log(double(hi) + 1)));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(x), lo, hi);
}

Shape draw_shape(Rng& r, Family f, Size size) {
  Shape s;
  const bool small = size == Size::small, large = size == Size::large;
  s.B = r.uniform_int(1, large ? 1 : 2);
  s.Hkv = r.uniform_int(1, 2);
  s.Hq = s.Hkv * r.uniform_int(1, small ? 3 : 2);
  const std::int64_t dmax = small ? 8 : large ? 128 : 64;
  s.Dk = log_uniform(r, 1, dmax);
  s.Dv = r.bernoulli(0.7) ? s.Dk : log_uniform(r, 1, dmax);
  s.Tq = log_uniform(r, 1, small ? 6 : large ? 4 : 8);
  s.Tk = log_uniform(r, 1, small ? 48 : large ? 8192 : 2048);
  if (f == Family::long_rows) {  // >= 4096 keys whatever the size; keep the rest small
    s.Tk = r.uniform_int(4096, 5000);
    s.Tq = r.uniform_int(1, 2);
    s.B = 1;
    s.Hq = s.Hkv = 1;
    if (!large) s.Dk = s.Dv = log_uniform(r, 1, small ? 4 : 32);
  }
  if (large && r.bernoulli(0.5)) s.Dk = s.Dv = 128;
  return s;
}

void draw_options(Rng& r, Problem& p, const FamilyOptions& opt, Family f) {
  if (r.bernoulli(0.3)) p.scale = r.uniform(0.05, 2.0);
  if (!opt.allow_masks) return;
  const Shape& s = p.shape;
  const bool masks_ok = f != Family::one_hot;  // one_hot needs its chosen key visible
  if (r.bernoulli(0.2) && f != Family::large_logits && f != Family::all_negative)
    p.softcap = r.uniform(5.0, 50.0);
  if (!masks_ok) return;
  p.alignment = r.bernoulli(0.5) ? Alignment::top_left : Alignment::bottom_right;
  p.causal = r.bernoulli(0.3);
  if (r.bernoulli(0.2)) {
    p.window.left = r.bernoulli(0.8) ? r.uniform_int(0, s.Tk) : -1;
    p.window.right = r.bernoulli(0.6) ? r.uniform_int(0, s.Tk) : -1;
  }
  p.has_mask = r.bernoulli(0.2);
  p.has_bias = r.bernoulli(0.2);
  p.has_kv_len = r.bernoulli(0.3);
}

void fill_normal(Rng& r, std::vector<double>& v, double sigma, double mean = 0) {
  for (double& x : v) x = mean + sigma * r.normal();
}

// Clamp so that storage never overflows to inf by accident; the families want finite inputs.
double safe_limit(DType t) { return t == DType::f16 ? 6e4 : 1e30; }

void fill_masks(Rng& r, Case& c, bool force_empty_rows) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  if (p.has_mask) {
    const double keep = r.uniform(0.3, 0.95);
    for (auto& m : c.mask) m = r.bernoulli(keep) ? 1 : 0;
    if (force_empty_rows || r.bernoulli(0.2)) {  // an all-false row, in every plane the mask has
      const auto i = r.uniform_int(0, s.Tq - 1);
      for (std::size_t n = 0; n < c.mask.size(); ++n)
        if ((static_cast<std::int64_t>(n) / s.Tk) % s.Tq == i) c.mask[n] = 0;
    }
  }
  if (p.has_bias) {
    const double sigma = r.uniform(0.1, 4.0);
    for (auto& b : c.bias) b = r.bernoulli(0.05) ? -HUGE_VAL : sigma * r.normal();
    if (force_empty_rows) {
      const auto i = r.uniform_int(0, s.Tq - 1);
      for (std::size_t n = 0; n < c.bias.size(); ++n)
        if ((static_cast<std::int64_t>(n) / s.Tk) % s.Tq == i) c.bias[n] = -HUGE_VAL;
    }
  }
  if (p.has_kv_len) {
    for (auto& L : c.kv_len) L = r.bernoulli(0.15) ? 0 : r.uniform_int(1, s.Tk);
    if (force_empty_rows) c.kv_len[static_cast<std::size_t>(r.uniform_int(0, s.B - 1))] = 0;
  }
}

void fill_values(Rng& r, Case& c, Family f) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const DType t = p.dtype;
  const double scale = p.effective_scale();
  // Per-element magnitude a that gives logits of size ~L: scale * Dk * a^2 ~ L for aligned
  // vectors, scale * sqrt(Dk) * a^2 for random ones.
  auto magnitude_for_logit = [&](double L) { return std::sqrt(L / (scale * std::sqrt(double(s.Dk)))); };
  switch (f) {
    case Family::random:
    case Family::long_rows:
    case Family::fully_masked:
      fill_normal(r, c.q, 1.0);
      fill_normal(r, c.k, 1.0);
      fill_normal(r, c.v, 1.0);
      break;
    case Family::large_logits: {
      const double L = t == DType::f16 ? r.uniform(100, 2000) : r.uniform(500, 3000);
      const double a = magnitude_for_logit(L);
      fill_normal(r, c.q, a);
      fill_normal(r, c.k, a);
      fill_normal(r, c.v, 1.0);
      break;
    }
    case Family::near_ties: {
      // Every key is one base vector nudged by a few units of the storage roundoff, so the
      // scores differ by O(u * |s|): the softmax must resolve differences near the noise floor.
      fill_normal(r, c.q, 1.0);
      std::vector<double> base(static_cast<std::size_t>(s.Dk));
      fill_normal(r, base, 2.0);
      const double u = unit_roundoff(t);
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t h = 0; h < s.Hkv; ++h)
          for (std::int64_t j = 0; j < s.Tk; ++j)
            for (std::int64_t d = 0; d < s.Dk; ++d)
              c.k[c.ki(b, h, j, d)] = base[static_cast<std::size_t>(d)] * (1 + 4 * u * r.uniform_int(-3, 3));
      fill_normal(r, c.v, 1.0);
      break;
    }
    case Family::cancelling_values: {
      // Keys come in identical pairs (equal weights) whose values are opposite up to a small
      // residue, so O is a tiny difference of large terms.
      fill_normal(r, c.q, 1.0);
      fill_normal(r, c.k, 1.0);
      const double big = t == DType::f16 ? 100 : 1000;
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t h = 0; h < s.Hkv; ++h)
          for (std::int64_t j = 0; j + 1 < s.Tk; j += 2) {
            for (std::int64_t d = 0; d < s.Dk; ++d) c.k[c.ki(b, h, j + 1, d)] = c.k[c.ki(b, h, j, d)];
            for (std::int64_t d = 0; d < s.Dv; ++d) {
              const double x = round_to(t, big * r.normal());
              c.v[c.vi(b, h, j, d)] = x;
              c.v[c.vi(b, h, j + 1, d)] = -x + (r.bernoulli(0.5) ? 0.0 : r.normal());
            }
          }
      break;
    }
    case Family::offset_values: {
      fill_normal(r, c.q, 1.0);
      fill_normal(r, c.k, 1.0);
      const double offset = t == DType::f16 ? 100 : 1000;
      fill_normal(r, c.v, t == DType::bf16 ? 10.0 : 1.0, offset);
      break;
    }
    case Family::one_hot: {
      // One chosen key per (b, kv head) aligned with the queries, far ahead of the rest.
      fill_normal(r, c.q, 1.0);
      fill_normal(r, c.k, 0.3);
      fill_normal(r, c.v, 1.0);
      const double gap = r.uniform(30, 200);
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t h = 0; h < s.Hkv; ++h) {
          const std::int64_t j = r.uniform_int(0, s.Tk - 1);
          const std::int64_t G = p.group();
          for (std::int64_t d = 0; d < s.Dk; ++d) {
            double qsum = 0;  // mean direction of the group's queries
            for (std::int64_t g = 0; g < G; ++g)
              for (std::int64_t i = 0; i < s.Tq; ++i) qsum += c.q[c.qi(b, h * G + g, i, d)];
            c.k[c.ki(b, h, j, d)] = qsum >= 0 ? 1.0 : -1.0;
          }
          for (std::int64_t g = 0; g < G; ++g)
            for (std::int64_t i = 0; i < s.Tq; ++i)
              for (std::int64_t d = 0; d < s.Dk; ++d) {
                double& q = c.q[c.qi(b, h * G + g, i, d)];
                q = std::copysign(gap / (scale * double(s.Dk)), c.k[c.ki(b, h, j, d)]);
              }
        }
      break;
    }
    case Family::heavy_tails: {
      const double lim = t == DType::f16 ? 200 : 1e4;
      for (auto* vec : {&c.q, &c.k, &c.v})
        for (double& x : *vec) x = std::clamp(r.heavy_tail(2), -lim, lim);
      break;
    }
    case Family::all_negative: {
      // q positive, k negative: every logit near -L, far below zero.
      const double L = r.uniform(200, 2000);
      const double a = std::sqrt(L / (scale * double(s.Dk)));
      for (double& x : c.q) x = a * r.uniform(0.5, 1.5);
      for (double& x : c.k) x = -a * r.uniform(0.5, 1.5);
      fill_normal(r, c.v, 1.0);
      break;
    }
  }
  const double lim = safe_limit(t);
  for (auto* vec : {&c.q, &c.k, &c.v})
    for (double& x : *vec) x = std::clamp(x, -lim, lim);
}

}  // namespace

Case make_case(Family f, std::uint64_t seed, const FamilyOptions& opt) {
  // Mix the family into the seed so (family, seed) pairs name distinct cases.
  Rng r(seed * 0x100000001b3ull + static_cast<std::uint64_t>(f) * 0x9e3779b97f4a7c15ull +
        static_cast<std::uint64_t>(opt.dtype) * 0x632be59bd9b4e019ull + static_cast<std::uint64_t>(opt.size));
  Problem p;
  p.dtype = opt.dtype;
  p.shape = draw_shape(r, f, opt.size);
  draw_options(r, p, opt, f);
  if (f == Family::fully_masked) {
    // At least one of the ways a row ends up with no visible key.
    switch (r.uniform_int(0, 3)) {
      case 0: p.has_kv_len = true; break;
      case 1: p.has_mask = true; break;
      case 2: p.has_bias = true; break;
      default:
        p.causal = true;
        p.alignment = Alignment::bottom_right;
        p.has_kv_len = true;
        p.shape.Tq = std::max<std::int64_t>(p.shape.Tq, 3);
        break;
    }
  }
  Case c = make_zero_case(p, opt.with_dout);
  c.id = std::string(family_name(f)) + "/" + std::string(dtype_name(opt.dtype)) + "/" + std::to_string(seed);
  fill_values(r, c, f);
  fill_masks(r, c, f == Family::fully_masked);
  if (f == Family::fully_masked && p.causal && p.has_kv_len)
    for (auto& L : c.kv_len) L = std::min<std::int64_t>(L, p.shape.Tq - 1);  // Tq > kv_len
  if (opt.with_dout) fill_normal(r, c.dout, 1.0);
  round_to_storage(c);
  require_valid(c);
  return c;
}

}  // namespace attnv::gen
