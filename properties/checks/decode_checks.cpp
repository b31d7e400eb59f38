// R21: decode with a KV cache equals prefill (SPEC "Incremental decoding"). The drawn case is a
// prompt of T = Tk tokens (judge/decode.h: its K and V; query t is the case's query t mod Tq);
// the kernel decodes it through Kernel::decode, after every call judged by judge::judge_decode
// (the cache bitwise, the inputs untouched, O and LSE within the bound of the equivalent
// forward), in three plans:
//   run A: prefill T - m tokens in one call on an empty cache, then m tokens one by one;
//   run B: chunked prefill from an empty cache, ceil(T / 3) tokens per call;
//   run C, when the kernel claims paged_kv: a paged cache with one more sequence sharing
//   sequence 0's prefix, every other page byte checked untouched.
#include "judge/decode.h"
#include "properties/checks/checks.h"
#include "properties/checks/recording.h"

namespace attnv::checks {

PropertyResult check_decode_equals_prefill(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  static constexpr const char* kName = "decode_equals_prefill";
  const std::int64_t T = c.problem.shape.Tk;
  const Capabilities caps = k.capabilities();
  if (!caps.decode) return PropertyResult::not_claimed(kName, c.id, "decode");
  const judge::DecodePlan a = judge::prefill_then_tokens(T, seed);
  if (auto why = caps.unsupported(judge::decode_problem(c, a)); !why.empty())
    return PropertyResult::not_claimed(kName, c.id, why);
  std::vector<judge::DecodePlan> plans{a, judge::chunked_prefill(T)};
  // Run C: a paged cache, when claimed (and not withdrawn in this dtype).
  const judge::DecodePlan paged = judge::paged_shared_prefix(T, seed);
  if (caps.paged_kv && caps.unsupported(judge::decode_problem(c, paged)).empty()) plans.push_back(paged);

  judge::DecodeObserver observer;
  observer.on_call = [](const Case& fwd, Layout l, const Outputs& got) { detail::record_run(fwd, l, false, got, /*decode=*/true); };
  observer.on_exact = [](const Case& fwd, const Outputs& exact, const bound::Bounds& b) { detail::record_exact(fwd, exact, b); };
  PropertyResult result = PropertyResult::pass(kName, c.id);
  result.worst_ratio = 0;
  for (const judge::DecodePlan& plan : plans) {
    const judge::DecodeJudgement j = judge::judge_decode(k, c, layout, plan, observer);
    result.hist += j.hist;
    result.tightness += j.tightness;
    result.worst_ratio = std::max(result.worst_ratio, j.worst_ratio);
    if (j.failed) {
      result.ok = false;
      result.status = Status::fail;
      result.kind = *j.failed;
      result.message = j.message;
      result.worst = j.worst;
      return result;
    }
  }
  return result;
}

}  // namespace attnv::checks
