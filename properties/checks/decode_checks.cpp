// R21: decode with a KV cache equals prefill (SPEC "Incremental decoding"). The drawn case is a
// prompt of T = Tk tokens (its K and V; query t is the case's query t mod Tq); the kernel
// decodes it twice through Kernel::decode into a cache of capacity T + 2:
//   run A: prefill T - m tokens in one call on an empty cache, then m tokens one by one;
//   run B: chunked prefill from an empty cache, ceil(T / 3) tokens per call;
//   run C, when the kernel claims paged_kv: a paged cache (paged_run below), every other page
//   byte checked untouched.
// After every call: (a) the cache holds exactly the prompt's K and V at positions < cache_len + n
// (bitwise) and its initial fill beyond; q, k_new, v_new are unchanged; (b) the call's O and LSE
// are within the bound of the equivalent forward (k = the cache, kv_len = cache_len + n,
// bottom-right causal: exactly the full prefill's rows cache_len .. cache_len + n - 1), judged
// by ref::fast_forward and bound::forward_bound under the kernel's declared model.
#include <cstring>
#include <limits>
#include <sstream>

#include "problem/error.h"
#include "problem/kernel_fault.h"
#include "problem/validate.h"
#include "properties/checks/checks.h"
#include "properties/checks/paged_cache.h"
#include "properties/checks/recording.h"
#include "properties/checks/runs.h"
#include "reference/fast/fast.h"

namespace attnv::props {
namespace {

using I = std::int64_t;
constexpr const char* kName = "decode_equals_prefill";
// The cache's initial fill: any values would do; these are exact in every dtype and unlike the
// drawn values, so a stale or shifted append shows.
constexpr double kKFill = 3.0, kVFill = -5.0;

struct Prompt {
  Problem p;  // B, Hq, Hkv, Dk, Dv, dtype, scale, softcap, window of the decode calls
  I T = 0;
  std::vector<double> q, k, v;  // dense [B, H, T, D]
  std::vector<double> sinks;    // [Hq] when p.has_sinks
  std::vector<double> alibi;    // [Hq] when p.has_alibi
  double qv(I b, I h, I t, I d) const { return q[static_cast<std::size_t>(((b * p.shape.Hq + h) * T + t) * p.shape.Dk + d)]; }
  double kv(const std::vector<double>& x, I b, I h, I t, I d, I D) const {
    return x[static_cast<std::size_t>(((b * p.shape.Hkv + h) * T + t) * D + d)];
  }
};

Prompt prompt_of(const Case& c) {
  Prompt pr;
  pr.p = c.problem;
  pr.T = c.problem.shape.Tk;
  pr.p.causal = true;
  pr.p.alignment = Alignment::bottom_right;
  pr.p.has_mask = pr.p.has_bias = pr.p.has_kv_len = false;
  pr.p.mask_dims = pr.p.bias_dims = Leading{};
  const Shape& s = c.problem.shape;
  pr.q.resize(static_cast<std::size_t>(s.B * s.Hq * pr.T * s.Dk));
  for (I b = 0; b < s.B; ++b)
    for (I h = 0; h < s.Hq; ++h)
      for (I t = 0; t < pr.T; ++t)
        for (I d = 0; d < s.Dk; ++d)
          pr.q[static_cast<std::size_t>(((b * s.Hq + h) * pr.T + t) * s.Dk + d)] = c.q[c.qi(b, h, t % s.Tq, d)];
  pr.k = c.k;
  pr.v = c.v;
  pr.sinks = c.sinks;
  pr.alibi = c.alibi;
  return pr;
}

// The problem of a decode call of n tokens into a cache of `capacity` (paged when page_size > 0).
Problem decode_problem(const Prompt& pr, I n, I capacity, I page_size = 0) {
  Problem p = pr.p;
  p.shape.Tq = n;
  p.shape.Tk = capacity;
  p.page_size = page_size;
  return p;
}

// The prompt with one more sequence, B, that shares sequence 0's first `prefix` tokens (its
// queries, keys and values) and then goes its own way: sequence 0's later tokens in reverse
// order, so that reading the wrong sequence's pages changes the answer.
Prompt with_shared_prefix(const Prompt& pr, I prefix) {
  Prompt x = pr;
  const Shape& s = pr.p.shape;
  x.p.shape.B = s.B + 1;
  auto source = [&](I t) { return t < prefix ? t : prefix + (pr.T - 1 - t); };
  for (I h = 0; h < s.Hq; ++h)
    for (I t = 0; t < pr.T; ++t)
      for (I d = 0; d < s.Dk; ++d) x.q.push_back(pr.qv(0, h, source(t), d));
  for (I h = 0; h < s.Hkv; ++h)
    for (I t = 0; t < pr.T; ++t)
      for (I d = 0; d < s.Dk; ++d) x.k.push_back(pr.kv(pr.k, 0, h, source(t), d, s.Dk));
  for (I h = 0; h < s.Hkv; ++h)
    for (I t = 0; t < pr.T; ++t)
      for (I d = 0; d < s.Dv; ++d) x.v.push_back(pr.kv(pr.v, 0, h, source(t), d, s.Dv));
  return x;
}

// The forward the call must equal: k = the cache (filled up to c0 + n), kv_len = c0 + n.
Case equivalent_forward(const Prompt& pr, I c0, I n, I capacity) {
  Problem p = decode_problem(pr, n, capacity);
  p.has_kv_len = true;
  Case c = make_zero_case(p, false);
  c.sinks = pr.sinks;
  c.alibi = pr.alibi;
  const Shape& s = p.shape;
  for (I b = 0; b < s.B; ++b) {
    c.kv_len[static_cast<std::size_t>(b)] = c0 + n;
    for (I h = 0; h < s.Hq; ++h)
      for (I i = 0; i < n; ++i)
        for (I d = 0; d < s.Dk; ++d) c.q[c.qi(b, h, i, d)] = pr.qv(b, h, c0 + i, d);
    for (I h = 0; h < s.Hkv; ++h)
      for (I j = 0; j < c0 + n; ++j) {
        for (I d = 0; d < s.Dk; ++d) c.k[c.ki(b, h, j, d)] = pr.kv(pr.k, b, h, j, d, s.Dk);
        for (I d = 0; d < s.Dv; ++d) c.v[c.vi(b, h, j, d)] = pr.kv(pr.v, b, h, j, d, s.Dv);
      }
  }
  return c;
}

// The prompt's K (which = 0) and V (1) values, as PagedCache reads them; pr must outlive it.
PagedCache::Values prompt_values(const Prompt& pr) {
  return [&pr](int which, I b, I h, I j, I d) {
    return which == 0 ? pr.kv(pr.k, b, h, j, d, pr.p.shape.Dk) : pr.kv(pr.v, b, h, j, d, pr.p.shape.Dv);
  };
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class DecodeRun {
 public:
  // A contiguous cache of capacity T + 2, empty; or, with `paged`, that paged cache (capacity
  // and page size from `paged_problem`), every sequence already holding its first `start` tokens.
  DecodeRun(Kernel& k, const Prompt& pr, Layout layout, std::string label, PagedCache* paged = nullptr,
            const Problem* paged_problem = nullptr, I start = 0)
      : k_(k), pr_(pr), layout_(layout), label_(std::move(label)),
        capacity_(paged_problem ? paged_problem->shape.Tk : pr.T + 2),
        page_size_(paged_problem ? paged_problem->page_size : 0), paged_(paged), cache_case_(make_cache_case()),
        cache_(cache_case_, layout, false), cache_len_(static_cast<std::size_t>(pr.p.shape.B), start) {}

  // One decode call of n tokens; "" or what went wrong. Folds the comparison into `result`.
  std::string step(I n, PropertyResult& result) {
    const I c0 = cache_len_[0];
    const Shape& s = pr_.p.shape;
    Problem sp = decode_problem(pr_, n, n);  // the step's own tensors: q, k_new, v_new, out, lse
    Case step_case = make_zero_case(sp, false);
    step_case.sinks = pr_.sinks;
    step_case.alibi = pr_.alibi;
    for (I b = 0; b < s.B; ++b) {
      for (I h = 0; h < s.Hq; ++h)
        for (I i = 0; i < n; ++i)
          for (I d = 0; d < s.Dk; ++d) step_case.q[step_case.qi(b, h, i, d)] = pr_.qv(b, h, c0 + i, d);
      for (I h = 0; h < s.Hkv; ++h)
        for (I i = 0; i < n; ++i) {
          for (I d = 0; d < s.Dk; ++d) step_case.k[step_case.ki(b, h, i, d)] = pr_.kv(pr_.k, b, h, c0 + i, d, s.Dk);
          for (I d = 0; d < s.Dv; ++d) step_case.v[step_case.vi(b, h, i, d)] = pr_.kv(pr_.v, b, h, c0 + i, d, s.Dv);
        }
    }
    CaseBuffers sb(step_case, layout_, false);
    const bool lse = k_.capabilities().lse;
    if (!lse) sb.views().lse = TensorRef{};
    sb.poison_outputs();  // an element the decode skips must not pass for a zero (docs/semantics.md)
    DecodeViews dv;
    dv.q = sb.views().q;
    dv.k_new = sb.views().k;
    dv.v_new = sb.views().v;
    dv.k_cache = paged_ ? paged_->k() : cache_.views().k;
    dv.v_cache = paged_ ? paged_->v() : cache_.views().v;
    dv.cache_len = cache_len_.data();
    if (paged_) dv.block_table = paged_->table();
    dv.out = sb.views().out;
    if (lse) dv.lse = sb.views().lse;
    dv.sinks = sb.views().sinks;
    dv.alibi = sb.views().alibi;
    const Problem p = decode_problem(pr_, n, capacity_, page_size_);
    if (auto e = check_decode_views(p, dv); !e.empty()) throw InputError("invalid decode views: " + e[0]);
    std::ostringstream where;
    where << label_ << ", call with cache_len " << c0 << " and n = " << n;
    if (paged_) where << " (page_size " << page_size_ << ", shared pages: " << paged_->shared_pages() << ")";
    try {
      detail::kernel_call([&] { k_.decode(p, dv); });
    } catch (const KernelDeclined&) {
      throw;  // not a failure: the judge reports the case NOT SUPPORTED
    } catch (const KernelFault& e) {
      throw KernelFault(e.kind(), where.str() + ": " + e.what());  // the kernel's failure, with the call it was
    }
    for (std::int64_t& c : cache_len_) c += n;
    const Case fwd = equivalent_forward(pr_, c0, n, capacity_);
    Outputs got = sb.outputs();
    detail::record_run(fwd, layout_, false, got, /*decode=*/true);
    if (!sb.inputs_unchanged()) {
      result.kind = FailKind::input_written;
      return where.str() + ": q, k_new or v_new was written";
    }
    if (const CaseBuffers::Unwritten u = sb.unwritten_outputs(); u.count > 0) {
      result.kind = FailKind::missing_output;
      return where.str() + ": " + u.message();
    }
    const std::string d = paged_ ? paged_->difference(cache_len_, prompt_values(pr_)) : cache_difference();
    if (!d.empty()) return where.str() + ": the cache " + d;
    // (b) the outputs against the equivalent forward's reference and bound.
    const Outputs exact = ref::fast_forward(fwd);
    const PrecisionModel m = detail::kernel_precision(k_, p);
    const bound::Bounds bounds = bound::forward_bound(fwd, exact, m);
    detail::record_exact(fwd, exact, bounds);
    if (!lse) {
      got.lse = exact.lse;
      for (double& x : got.lse) x = round_to(lse_dtype(p.dtype), x);
    }
    const bound::Comparison cmp = bound::compare(got, exact, bounds, m.out);
    for (const auto& t : cmp.tensors) result.hist += t.hist;
    result.worst_ratio = std::max(result.worst_ratio, cmp.worst_ratio());
    if (!cmp.ok()) {
      for (const auto& t : cmp.tensors) {
        if (t.ok() || t.worst_index < 0) continue;
        std::ostringstream w;
        w.precision(17);
        w << detail::element_name(fwd, t.name, static_cast<std::size_t>(t.worst_index)) << " = " << t.worst_out
          << ", exact " << t.worst_exact << ", bound " << t.worst_bound << " (" << t.worst_ratio << "x the allowance)";
        result.worst = w.str();
        break;
      }
      return where.str() + ": outputs differ from the prefill's rows: " + cmp.summary();
    }
    return "";
  }

 private:
  Case make_cache_case() const {
    Problem p = decode_problem(pr_, 1, capacity_);
    Case c = make_zero_case(p, false);
    std::fill(c.k.begin(), c.k.end(), kKFill);
    std::fill(c.v.begin(), c.v.end(), kVFill);
    return c;
  }

  // "" when positions < cache_len hold the prompt and the others their fill, bit for bit.
  std::string cache_difference() const {
    const Shape& s = pr_.p.shape;
    for (int which = 0; which < 2; ++which) {
      const TensorRef& t = which == 0 ? cache_.views().k : cache_.views().v;
      const I D = which == 0 ? s.Dk : s.Dv;
      for (I b = 0; b < s.B; ++b)
        for (I h = 0; h < s.Hkv; ++h)
          for (I j = 0; j < capacity_; ++j)
            for (I d = 0; d < D; ++d) {
              const bool filled = j < cache_len_[static_cast<std::size_t>(b)];
              const double want = filled ? pr_.kv(which == 0 ? pr_.k : pr_.v, b, h, j, d, D) : (which == 0 ? kKFill : kVFill);
              const double got = load(t, {b, h, j, d});
              if (!same_bits(got, want)) {
                std::ostringstream o;
                o.precision(17);
                o << (which == 0 ? "k_cache" : "v_cache") << "[b=" << b << ",h=" << h << ",j=" << j << ",d=" << d
                  << "] = " << got << ", expected " << want
                  << (filled ? " (the appended token's value)" : " (untouched: past cache_len + n)");
                return o.str();
              }
            }
    }
    return "";
  }

  Kernel& k_;
  const Prompt& pr_;
  Layout layout_;
  std::string label_;
  I capacity_;
  I page_size_;
  PagedCache* paged_;
  Case cache_case_;
  CaseBuffers cache_;
  std::vector<std::int64_t> cache_len_;
};

// Run C, for kernels that claim paged_kv: the prompt plus one more sequence sharing sequence 0's
// prefix (with_shared_prefix), decoded into a paged cache (paged_cache.h): pages in a shuffled
// order, the prefix's whole pages filled before the first call and shared by the two sequences,
// then the rest in one chunk and single tokens, so that last pages are partly filled. The page
// size comes from the seed among those at most half the prompt (so that a whole page can be
// shared); pages of 1 (never partly filled) only when no other fits and sharing still can
// (T = 3, 4), else 2 (T <= 2: no page shared).
std::string paged_run(Kernel& k, const Prompt& pr, Layout layout, std::uint64_t seed, PropertyResult& result) {
  static constexpr I kPageSizes[] = {2, 3, 4, 5, 8, 16};
  const I T = pr.T;
  std::uint64_t fitting = 0;
  for (I size : kPageSizes) fitting += size <= (T - 1) / 2 ? 1 : 0;
  const I ps = fitting > 0 ? kPageSizes[(seed / 5) % fitting] : T >= 3 ? 1 : 2;
  const I prefix = (T - 1) / 2 / ps * ps;  // whole pages, and at least one token left to decode
  const Prompt x = with_shared_prefix(pr, prefix);
  const Problem pp = decode_problem(x, 1, (T + 2 + ps - 1) / ps * ps, ps);
  // Unfilled slots hold NaN only for a kernel that claims hidden NaN stays hidden (R6's rule).
  const bool nan = k.capabilities().hidden_nonfinite;
  const double no = std::numeric_limits<double>::quiet_NaN();
  PagedCache cache(pp, prefix / ps, seed, nan ? no : kKFill, nan ? no : kVFill);
  cache.prefill(std::vector<I>(static_cast<std::size_t>(pp.shape.B), prefix), prompt_values(x));
  DecodeRun run(k, x, layout, "run C (paged cache, one more sequence sharing sequence 0's prefix)", &cache, &pp,
                prefix);
  const I rest = T - prefix;
  std::vector<I> steps(static_cast<std::size_t>(std::min<I>(rest, 2)), 1);
  if (rest > 2) steps.insert(steps.begin(), rest - 2);
  for (I n : steps)
    if (std::string e = run.step(n, result); !e.empty()) return e;
  return "";
}

}  // namespace

PropertyResult check_decode_equals_prefill(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  const Prompt pr = prompt_of(c);
  const Capabilities caps = k.capabilities();
  if (!caps.decode) return PropertyResult::not_claimed(kName, c.id, "decode");
  if (auto why = caps.unsupported(decode_problem(pr, 1, pr.T + 2)); !why.empty())
    return PropertyResult::not_claimed(kName, c.id, why);
  PropertyResult result = PropertyResult::pass(kName, c.id);
  result.worst_ratio = 0;
  const I T = pr.T;
  // Run A: prefill T - m, then m single-token steps (m in 1..4 from the seed).
  {
    DecodeRun run(k, pr, layout, "run A (prefill, then one token per call)");
    const I m = 1 + static_cast<I>(seed % static_cast<std::uint64_t>(std::min<I>(T, 4)));
    std::vector<I> steps;
    if (T - m > 0) steps.push_back(T - m);
    for (I i = 0; i < m; ++i) steps.push_back(1);
    for (I n : steps)
      if (std::string e = run.step(n, result); !e.empty()) {
        result.ok = false;
        result.message = e;
        return result;
      }
  }
  // Run B: chunked prefill from an empty cache.
  {
    DecodeRun run(k, pr, layout, "run B (chunks of ceil(T/3) tokens)");
    const I chunk = (T + 2) / 3;
    for (I c0 = 0; c0 < T; c0 += chunk)
      if (std::string e = run.step(std::min(chunk, T - c0), result); !e.empty()) {
        result.ok = false;
        result.message = e;
        return result;
      }
  }
  // Run C: a paged cache, when claimed (and not withdrawn in this dtype).
  Problem paged = decode_problem(pr, 1, T + 2, 1);
  paged.shape.B += 1;
  if (caps.paged_kv && caps.unsupported(paged).empty())
    if (std::string e = paged_run(k, pr, layout, seed, result); !e.empty()) {
      result.ok = false;
      result.message = e;
    }
  return result;
}

}  // namespace attnv::props
