#include "judge/decode.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>

#include "judge/judge.h"
#include "judge/kernel_call.h"
#include "judge/paged_cache.h"
#include "problem/element_name.h"
#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/kernel_fault.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"

namespace attnv::judge {
namespace {

using I = std::int64_t;
// The contiguous cache's initial fill: any values would do; these are exact in every dtype and
// unlike the drawn values, so a stale or shifted append shows.
constexpr double kKFill = 3.0, kVFill = -5.0;

struct Prompt {
  Problem p;  // B, Hq, Hkv, Dk, Dv, dtype, scale, softcap, window of the decode calls
  I T = 0;
  std::vector<double> q, k, v;  // dense [B, H, T, D]
  std::vector<std::vector<double>> heads;  // one per row of kHeadInputs: [Hq] when the problem has it
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
  for (const HeadInput& in : kHeadInputs) pr.heads.push_back(c.*in.values);
  return pr;
}

// The prompt's per-head inputs (sinks, ALiBi slopes, ...) into a case of one of its calls.
void put_heads(const Prompt& pr, Case& c) {
  for (std::size_t r = 0; r < std::size(kHeadInputs); ++r) c.*kHeadInputs[r].values = pr.heads[r];
}

// The problem of a decode call of n tokens into a cache of `capacity` (paged when page_size > 0).
Problem call_problem(const Prompt& pr, I n, I capacity, I page_size = 0) {
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
  Problem p = call_problem(pr, n, capacity);
  p.has_kv_len = true;
  Case c = make_zero_case(p, false);
  put_heads(pr, c);
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
  DecodeRun(Kernel& k, const Prompt& pr, Layout layout, std::string label, const DecodeObserver& observer,
            FpCheck fp, PagedCache* paged = nullptr, const Problem* paged_problem = nullptr, I start = 0)
      : k_(k), pr_(pr), layout_(layout), label_(std::move(label)), observer_(observer), fp_(fp),
        capacity_(paged_problem ? paged_problem->shape.Tk : pr.T + 2),
        page_size_(paged_problem ? paged_problem->page_size : 0), paged_(paged), cache_case_(make_cache_case()),
        cache_(cache_case_, layout, false), cache_len_(static_cast<std::size_t>(pr.p.shape.B), start) {}

  // One decode call of n tokens; false when it failed (what went wrong is in `j`).
  bool step(I n, DecodeJudgement& j) {
    const I c0 = cache_len_[0];
    const Shape& s = pr_.p.shape;
    Problem sp = call_problem(pr_, n, n);  // the step's own tensors: q, k_new, v_new, out, lse
    Case step_case = make_zero_case(sp, false);
    put_heads(pr_, step_case);
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
    for (const HeadInput& in : kHeadInputs) dv.*in.decode_view = sb.views().*in.view;
    const Problem p = call_problem(pr_, n, capacity_, page_size_);
    if (auto e = check_decode_views(p, dv); !e.empty()) throw HarnessError("attnv made invalid decode views: " + e[0]);
    std::ostringstream where;
    where << label_ << ", call with cache_len " << c0 << " and n = " << n;
    if (paged_) where << " (page_size " << page_size_ << ", shared pages: " << paged_->shared_pages() << ")";
    std::string fp_raised;
    try {
      FpWatch watch(fp_);
      kernel_call([&] { k_.decode(p, dv); });
      fp_raised = watch.raised();
    } catch (const KernelDeclined&) {
      throw;  // not a failure: the caller reports the case not supported
    } catch (const KernelFault& e) {
      throw KernelFault(e.kind(), where.str() + ": " + e.what());  // the kernel's failure, with the call it was
    }
    ++j.calls;
    for (std::int64_t& c : cache_len_) c += n;
    const Case fwd = equivalent_forward(pr_, c0, n, capacity_);
    Outputs got = sb.outputs();
    if (observer_.on_call) observer_.on_call(fwd, layout_, got);
    const auto fail = [&](FailKind kind, const std::string& what) {
      j.failed = kind;
      j.message = where.str() + ": " + what;
      j.call = fwd;
      j.got = got;
      return false;
    };
    if (!fp_raised.empty()) return fail(FailKind::fp_exception, fp_raised + " raised inside the kernel");
    if (!sb.inputs_unchanged()) return fail(FailKind::input_written, "q, k_new or v_new was written");
    if (const CaseBuffers::Unwritten u = sb.unwritten_outputs(); u.count > 0)
      return fail(FailKind::missing_output, u.message());
    const std::string d = paged_ ? paged_->difference(cache_len_, prompt_values(pr_)) : cache_difference();
    if (!d.empty()) return fail(FailKind::outside_bound, "the cache " + d);
    // The outputs against the equivalent forward's reference and bound.
    reference::FastAccuracy accuracy;
    const Outputs exact = reference::fast_forward(fwd, {}, nullptr, &accuracy);
    const PrecisionModel m = kernel_precision(k_, p);
    bound::Bounds bounds = bound::forward_bound(fwd, exact, m);
    widen_unresolved(bounds, accuracy);
    if (observer_.on_exact) observer_.on_exact(fwd, exact, bounds);
    if (!lse) {
      got.lse = exact.lse;
      for (double& x : got.lse) x = round_to(lse_dtype(p.dtype), x);
    }
    const Judgement cj = judge_outputs(fwd, got, Reference{exact, bounds, m.out});
    for (const auto& t : cj.comparison.tensors) j.hist += t.hist;
    j.tightness += cj.comparison.tightness();
    j.worst_ratio = std::max(j.worst_ratio, cj.comparison.worst_ratio());
    j.exercised += cj.exercised;
    j.uninformative += cj.uninformative;
    if (cj.ok()) return true;
    j.worst = cj.worst;
    return fail(*cj.failed, "outputs differ from the prefill's rows: " + cj.message);
  }

 private:
  Case make_cache_case() const {
    Problem p = call_problem(pr_, 1, capacity_);
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
  const DecodeObserver& observer_;
  FpCheck fp_;
  I capacity_;
  I page_size_;
  PagedCache* paged_;
  Case cache_case_;
  CaseBuffers cache_;
  std::vector<std::int64_t> cache_len_;
};

std::string joined(const std::vector<I>& steps) {
  std::string s;
  for (std::size_t i = 0; i < steps.size(); ++i) s += (i ? ", " : "") + std::to_string(steps[i]);
  return s;
}

}  // namespace

DecodePlan prefill_then_tokens(I T, std::uint64_t seed) {
  DecodePlan plan;
  plan.label = "run A (prefill, then one token per call)";
  const I m = 1 + static_cast<I>(seed % static_cast<std::uint64_t>(std::min<I>(T, 4)));
  if (T - m > 0) plan.steps.push_back(T - m);
  for (I i = 0; i < m; ++i) plan.steps.push_back(1);
  return plan;
}

DecodePlan chunked_prefill(I T) {
  DecodePlan plan;
  plan.label = "run B (chunks of ceil(T/3) tokens)";
  const I chunk = (T + 2) / 3;
  for (I c0 = 0; c0 < T; c0 += chunk) plan.steps.push_back(std::min(chunk, T - c0));
  return plan;
}

// The page size comes from the seed among those at most half the prompt (so that a whole page
// can be shared); pages of 1 (never partly filled) only when no other fits and sharing still can
// (T = 3, 4), else 2 (T <= 2: no page shared).
DecodePlan paged_shared_prefix(I T, std::uint64_t seed) {
  static constexpr I kPageSizes[] = {2, 3, 4, 5, 8, 16};
  std::uint64_t fitting = 0;
  for (I size : kPageSizes) fitting += size <= (T - 1) / 2 ? 1 : 0;
  DecodePlan plan;
  plan.label = "run C (paged cache, one more sequence sharing sequence 0's prefix)";
  plan.page_size = fitting > 0 ? kPageSizes[(seed / 5) % fitting] : T >= 3 ? 1 : 2;
  plan.prefix = (T - 1) / 2 / plan.page_size * plan.page_size;  // whole pages, and at least one token left
  plan.seed = seed;
  const I rest = T - plan.prefix;
  plan.steps.assign(static_cast<std::size_t>(std::min<I>(rest, 2)), 1);
  if (rest > 2) plan.steps.insert(plan.steps.begin(), rest - 2);
  return plan;
}

DecodePlan token_by_token(I T) {
  DecodePlan plan;
  plan.label = "one token per call";
  plan.steps.assign(static_cast<std::size_t>(T), 1);
  return plan;
}

std::string plan_line(const DecodePlan& plan) {
  std::string s = "calls of " + joined(plan.steps) + " tokens";
  if (plan.page_size > 0)
    s += ", paged: pages of " + std::to_string(plan.page_size) + ", a shared prefix of " + std::to_string(plan.prefix) +
         " tokens, page order seed " + std::to_string(plan.seed);
  return s;
}

std::string check_plan(const DecodePlan& plan, I T) {
  if (plan.steps.empty()) return "no decode call";
  I sum = plan.prefix;
  for (I n : plan.steps) {
    if (n < 1 || n > T) return "a call of " + std::to_string(n) + " tokens (each call takes 1 to T = " + std::to_string(T) + ")";
    sum += n;
  }
  if (sum != T)
    return "the calls (" + joined(plan.steps) + ") and the prefix (" + std::to_string(plan.prefix) +
           ") add up to " + std::to_string(sum) + " tokens, not the prompt's " + std::to_string(T);
  if (plan.page_size < 0 || plan.page_size > T + 2) return "page size " + std::to_string(plan.page_size) + " (0 to T + 2)";
  if (plan.page_size == 0 && plan.prefix != 0) return "a shared prefix without pages";
  if (plan.page_size > 0 && plan.prefix % plan.page_size != 0)
    return "a shared prefix of " + std::to_string(plan.prefix) + " tokens is not whole pages of " + std::to_string(plan.page_size);
  return "";
}

Problem decode_problem(const Case& c, const DecodePlan& plan) {
  const Prompt pr = prompt_of(c);
  Problem p = call_problem(pr, 1, pr.T + 2, plan.page_size);
  if (plan.page_size > 0) p.shape.B += 1;
  return p;
}

DecodeJudgement judge_decode(Kernel& k, const Case& c, Layout layout, const DecodePlan& plan,
                             const DecodeObserver& observer, FpCheck fp) {
  if (const std::string e = check_plan(plan, c.problem.shape.Tk); !e.empty()) throw InputError("decode plan: " + e);
  const Prompt pr = prompt_of(c);
  DecodeJudgement j;
  if (plan.page_size == 0) {
    DecodeRun run(k, pr, layout, plan.label, observer, fp);
    for (I n : plan.steps)
      if (!run.step(n, j)) return j;
    return j;
  }
  const I T = pr.T, ps = plan.page_size;
  const Prompt x = with_shared_prefix(pr, plan.prefix);
  const Problem pp = call_problem(x, 1, (T + 2 + ps - 1) / ps * ps, ps);
  // Unfilled slots hold NaN only for a kernel that claims hidden NaN stays hidden (R6's rule).
  const bool nan = k.capabilities().hidden_nonfinite;
  const double no = std::numeric_limits<double>::quiet_NaN();
  PagedCache cache(pp, plan.prefix / ps, plan.seed, nan ? no : kKFill, nan ? no : kVFill);
  cache.prefill(std::vector<I>(static_cast<std::size_t>(pp.shape.B), plan.prefix), prompt_values(x));
  DecodeRun run(k, x, layout, plan.label, observer, fp, &cache, &pp, plan.prefix);
  for (I n : plan.steps)
    if (!run.step(n, j)) return j;
  return j;
}

}  // namespace attnv::judge
