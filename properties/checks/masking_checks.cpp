// Properties of hidden keys and fully masked rows: what a hidden key holds must not change any
// output bit (SPEC), and a row with no visible key gives O = 0, LSE = -inf, never NaN.
#include <cmath>
#include <limits>
#include <sstream>

#include "gen/rng.h"
#include "properties/checks/checks.h"
#include "properties/checks/runs.h"
#include "problem/visibility.h"

namespace attnv::checks {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Which key rows and bias entries get changed, and which output rows must not notice.
struct HiddenSet {
  std::vector<std::vector<bool>> keys;  // [b][j]: K and V rows of key j (every KV head) changed
  std::vector<bool> bias;               // [i * Tk + j]: bias entry changed
  std::vector<bool> rows_out;           // per out element: its row sees no changed key
  std::vector<bool> rows_lse;           // per lse element
  std::int64_t changed = 0, guarded_rows = 0;
};

// The keys hidden from one query row per batch (i0 drawn from the seed) in every head: with
// causal masks that is every key after p_i0, with kv_len every padded key, with a mask the row's
// hidden columns (in every head: a K/V row is shared by the query heads of its group). Bias
// entries are changed where no row that reads them sees the key, unless they are -inf
// (changing a -inf bias would unhide the key).
HiddenSet choose_hidden(const Case& c, std::uint64_t seed) {
  const Shape& s = c.problem.shape;
  gen::Rng rng(seed);
  HiddenSet h;
  h.keys.assign(static_cast<std::size_t>(s.B), std::vector<bool>(static_cast<std::size_t>(s.Tk), false));
  for (std::int64_t b = 0; b < s.B; ++b) {
    const std::int64_t i0 = rng.uniform_int(0, s.Tq - 1);
    for (std::int64_t j = 0; j < s.Tk; ++j) {
      bool hidden = true;
      for (std::int64_t hq = 0; hq < s.Hq && hidden; ++hq) hidden = !visible(c, b, hq, i0, j);
      if (hidden) { h.keys[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)] = true; ++h.changed; }
    }
  }
  if (c.problem.has_bias) {
    // A bias element is read by every (b, h) its plane broadcasts to.
    std::vector<bool> seen(c.bias.size(), false);
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t hq = 0; hq < s.Hq; ++hq)
        for (std::int64_t i = 0; i < s.Tq; ++i)
          for (std::int64_t j = 0; j < s.Tk; ++j)
            if (visible(c, b, hq, i, j)) seen[c.bi(b, hq, i, j)] = true;
    h.bias.assign(c.bias.size(), false);
    for (std::size_t n = 0; n < c.bias.size(); ++n)
      if (c.bias[n] != -kInf && !seen[n]) { h.bias[n] = true; ++h.changed; }
  }
  h.rows_out.assign(static_cast<std::size_t>(out_elements(s)), false);
  h.rows_lse.assign(static_cast<std::size_t>(lse_elements(s)), false);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t hq = 0; hq < s.Hq; ++hq)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        bool sees_changed = false;
        for (std::int64_t j = 0; j < s.Tk && !sees_changed; ++j)
          sees_changed = h.keys[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)] && visible(c, b, hq, i, j);
        if (sees_changed) continue;
        ++h.guarded_rows;
        h.rows_lse[c.li(b, hq, i)] = true;
        for (std::int64_t d = 0; d < s.Dv; ++d) h.rows_out[c.oi(b, hq, i, d)] = true;
      }
  return h;
}

// The case with the chosen K/V rows and bias entries replaced by what `k_value`, `v_value`,
// `bias_value` return.
template <class KF, class VF, class BF>
Case replaced(const Case& c, const HiddenSet& h, KF k_value, VF v_value, BF bias_value) {
  Case r = c;
  const Shape& s = c.problem.shape;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t j = 0; j < s.Tk; ++j) {
      if (!h.keys[static_cast<std::size_t>(b)][static_cast<std::size_t>(j)]) continue;
      for (std::int64_t hk = 0; hk < s.Hkv; ++hk) {
        for (std::int64_t d = 0; d < s.Dk; ++d) r.k[r.ki(b, hk, j, d)] = round_to(c.problem.dtype, k_value());
        for (std::int64_t d = 0; d < s.Dv; ++d) r.v[r.vi(b, hk, j, d)] = round_to(c.problem.dtype, v_value());
      }
    }
  for (std::size_t n = 0; n < h.bias.size(); ++n)
    if (h.bias[n]) r.bias[n] = round_to(c.problem.dtype, bias_value());
  return r;
}

PropertyResult compare_guarded(const char* name, const Case& c, const Case& changed, const HiddenSet& h,
                               const Outputs& before, const Outputs& after, const char* what) {
  // +0 and -0 are one value here: a kernel multiplying a hidden key's zero weight by its V (every
  // GEMM does) gives a zero output the sign of that V (docs/semantics.md, "Hidden positions").
  std::string d = detail::bitwise_difference(changed, "out", before.out, after.out, &h.rows_out, ZeroSign::same);
  if (d.empty()) d = detail::bitwise_difference(changed, "lse", before.lse, after.lse, &h.rows_lse, ZeroSign::same);
  if (d.empty())
    return PropertyResult::pass(name, c.id, std::to_string(h.changed) + " hidden rows/entries changed, " +
                                                std::to_string(h.guarded_rows) + " rows guarded")
        .with_exercised(h.changed);
  return PropertyResult::fail(name, c.id, std::string("an output row that sees no changed key changed when ") + what, d);
}

// Runs the case and its changed twin and compares the guarded rows. A difference is a leak only
// if the kernel repeats itself: when a second run of the unchanged case differs from the first,
// the cause is run-to-run nondeterminism (R13's finding), and this check judged nothing.
PropertyResult judge_guarded(Kernel& k, Layout layout, const char* name, const Case& c, const Case& changed,
                             const HiddenSet& h, const char* what) {
  const Outputs before = detail::run(k, c, layout).out;
  const Outputs after = detail::run(k, changed, layout).out;
  PropertyResult r = compare_guarded(name, c, changed, h, before, after, what);
  if (r.ok) return r;
  // Two more runs, so that a kernel following the parity of a call counter shows on both.
  const auto same = [&](const Outputs& x) {
    return detail::bitwise_difference(c, "out", before.out, x.out).empty() &&
           detail::bitwise_difference(c, "lse", before.lse, x.lse).empty();
  };
  const Outputs again1 = detail::run(k, c, layout).out;
  const Outputs again2 = detail::run(k, c, layout).out;
  if (!same(again1) || !same(again2))
    return PropertyResult::not_exercised(name, c.id, "two runs of the unchanged case differ (nondeterminism, R13's "
                                                     "to judge), so no change can be laid to the hidden keys");
  return r;
}

}  // namespace

PropertyResult check_no_leakage(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  const char* name = "no_leakage";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const HiddenSet h = choose_hidden(c, seed);
  if (h.changed == 0) return PropertyResult::not_exercised(name, c.id, "no hidden key");
  gen::Rng rng(seed ^ 0x5eedull);
  // Large values: a leaked key would dominate its row. Kept finite in every storage dtype.
  const double big = std::min(1e3, max_finite(c.problem.dtype) / 8);
  auto draw = [&] { return std::max(-big, std::min(big, big * rng.normal() / 2)); };
  const Case changed = replaced(c, h, draw, draw, draw);
  return judge_guarded(k, layout, name, c, changed, h, "hidden K, V and bias were replaced by other finite values");
}

PropertyResult check_hidden_nonfinite(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  const char* name = "hidden_nonfinite";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const HiddenSet h = choose_hidden(c, seed);
  if (h.changed == 0) return PropertyResult::not_exercised(name, c.id, "no hidden key");
  bool flip = false;
  const Case changed = replaced(c, h, [] { return kNaN; }, [&] { flip = !flip; return flip ? kInf : -kInf; },
                                [] { return kNaN; });
  return judge_guarded(k, layout, name, c, changed, h, "hidden K and bias were set to NaN and hidden V to +-inf");
}

PropertyResult check_fully_masked_rows(Kernel& k, const Case& c, Layout layout) {
  const char* name = "fully_masked_rows";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  const Outputs got = detail::run(k, c, layout).out;
  std::int64_t masked = 0;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t i = 0; i < s.Tq; ++i) {
      for (std::int64_t h = 0; h < s.Hq; ++h) {
        const bool empty = !detail::row_sees_any(c, b, h, i);
        masked += empty;
        const double L = got.lse.empty() ? (empty ? -kInf : 0.0) : got.lse[c.li(b, h, i)];  // no LSE claimed
        std::ostringstream w;
        if (std::isnan(L) || (empty && L != -kInf)) {
          w << detail::element_name(c, "lse", c.li(b, h, i)) << " = " << L;
          return PropertyResult::fail(name, c.id, std::isnan(L) ? "LSE is NaN" : "a row with no visible key has LSE != -inf", w.str())
              .with_kind(std::isnan(L) ? FailKind::non_finite : FailKind::outside_bound);
        }
        for (std::int64_t d = 0; d < s.Dv; ++d) {
          const double o = got.out[c.oi(b, h, i, d)];
          if (std::isnan(o) || (empty && o != 0)) {
            w << detail::element_name(c, "out", c.oi(b, h, i, d)) << " = " << o;
            return PropertyResult::fail(name, c.id, std::isnan(o) ? "an output is NaN" : "a row with no visible key has O != 0", w.str())
                .with_kind(std::isnan(o) ? FailKind::non_finite : FailKind::outside_bound);
          }
        }
      }
    }
  // NaN in a row with keys is R1's to judge; R7 is about rows without any.
  if (masked == 0) return PropertyResult::not_exercised(name, c.id, "no fully masked row");
  return PropertyResult::pass(name, c.id, std::to_string(masked) + " fully masked rows").with_exercised(masked);
}

}  // namespace attnv::checks
