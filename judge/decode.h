#pragma once
// The judge of Kernel::decode (docs/semantics.md, "Incremental decoding"): a case's keys and
// values are a prompt of T = Tk tokens (query t is the case's query t mod Tq; causal,
// bottom-right; no mask, bias or kv_len, which do not follow a growing cache), fed to the kernel
// through decode calls as a plan says. After every call: the cache holds exactly the prompt's K
// and V at positions < cache_len + n (bitwise) and its initial fill beyond; q, k_new, v_new are
// unchanged; every output was written; and O and LSE are within the bound of the equivalent
// forward (k = the cache, kv_len = cache_len + n, bottom-right causal: exactly the full
// prefill's rows cache_len .. cache_len + n - 1), judged by the fast reference under the
// kernel's declared model. R21 (properties/checks/decode_checks.cpp) runs three plans on every
// case; attnv fuzz runs the one its genome names; a fuzz reproducer records its plan, so
// `attnv repro` makes the same calls again.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "judge/kernel_call.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/fail_kind.h"
#include "problem/kernel.h"
#include "reference/bound/bound.h"

namespace attnv::judge {

// How a prompt of T tokens is fed to Kernel::decode.
struct DecodePlan {
  std::vector<std::int64_t> steps;  // tokens per call, in order; they add up to T - prefix
  // 0: a contiguous cache of capacity T + 2, empty at the start. > 0: a paged cache of pages of
  // this many tokens (judge/paged_cache.h), with one more sequence than the case that shares
  // sequence 0's first `prefix` tokens (whole pages, filled before the first call, as a prefix
  // cache leaves them) and then goes its own way.
  std::int64_t page_size = 0;
  std::int64_t prefix = 0;
  std::uint64_t seed = 0;  // the order of the pages
  std::string label;       // for people: "run A (prefill, then one token per call)"
};

// R21's plans. A: prefill T - m tokens in one call, then m one by one (m in 1..4, from the
// seed). B: chunked prefill, ceil(T / 3) tokens per call. C: paged, the shared prefix as long as
// whole pages of a size from the seed allow (at most half the prompt), then the rest in one
// chunk and single tokens, so that last pages are partly filled.
DecodePlan prefill_then_tokens(std::int64_t T, std::uint64_t seed);
DecodePlan chunked_prefill(std::int64_t T);
DecodePlan paged_shared_prefix(std::int64_t T, std::uint64_t seed);
// Every token in its own call, from an empty contiguous cache.
DecodePlan token_by_token(std::int64_t T);
// "calls of 5, 1, 1 tokens" (+ ", paged: pages of 4, a shared prefix of 4 tokens").
std::string plan_line(const DecodePlan& plan);
// Empty when the plan fits a prompt of T tokens (steps >= 1 adding up to T - prefix; a page
// size, prefix and seed only together); else what is wrong (a reproducer's plan is read from a file).
std::string check_plan(const DecodePlan& plan, std::int64_t T);

// The problem of the plan's decode calls (Tq = 1), for the kernel's claims (unsupported()).
Problem decode_problem(const Case& c, const DecodePlan& plan);

// Told every decode call as its equivalent forward (the conformance suite keeps them as evidence).
struct DecodeObserver {
  std::function<void(const Case& forward, Layout, const Outputs& got)> on_call;
  std::function<void(const Case& forward, const Outputs& exact, const bound::Bounds&)> on_exact;
};

struct DecodeJudgement {
  std::optional<FailKind> failed;  // empty: every call passed
  std::string message;             // which call, and what was wrong
  std::string worst;               // the worst element of a comparison that failed
  Case call;                       // the failing call as its equivalent forward (when one failed)
  Outputs got;                     // what that call wrote
  std::int64_t calls = 0;          // decode calls made
  bound::RatioHistogram hist;      // error / threshold ratios of every compared element
  bound::TightnessHistogram tightness;  // allowance / |exact| of every judged element
  double worst_ratio = 0;
  std::int64_t exercised = 0;      // output elements judged under a finite bound, uninformative ones not
  std::int64_t uninformative = 0;  // (judge::Judgement's counts, summed over the calls)
  bool ok() const { return !failed; }
};

// Runs the plan on the case's prompt in `layout` and judges every call. Throws KernelDeclined
// when the kernel's supports() declines a call (nothing to judge), KernelFault when a call
// failed (crash, hang, refusal: its message names the call), InputError when the plan does not
// fit the case (check_plan) or the reference declines a call's forward, HarnessError when attnv
// made invalid views (its own defect).
// `fp`: floating-point exceptions raised inside a decode call fail it (fp_exception), as
// judge_call's forward calls do.
DecodeJudgement judge_decode(Kernel& k, const Case& c, Layout layout, const DecodePlan& plan,
                             const DecodeObserver& observer = {}, FpCheck fp = FpCheck::off);

}  // namespace attnv::judge
