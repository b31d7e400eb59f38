#include "fuzz/numeric/numeric_signal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "problem/dtype.h"

namespace attnv::fuzz {
namespace {

// Bucket ranges, one block of the array each.
constexpr int kLseBuckets = 48;     // per sign, ~2 per octave of |lse| (exp overflows at 88.7 in f32)
constexpr int kTopBuckets = 48;     // max |out| exponent below the out dtype's max exponent
constexpr int kSubBuckets = 32;     // min nonzero |input| exponent around the smallest normal
constexpr int kRatioBuckets = 80;   // log2 of the worst error/threshold ratio, quarter octaves
constexpr int kUsageBuckets = 80;   // log2 of the worst use of the bound b itself

constexpr int kMaxLse = 0;
constexpr int kMinLse = kMaxLse + 2 * kLseBuckets;
constexpr int kTop = kMinLse + 2 * kLseBuckets;
constexpr int kSub = kTop + kTopBuckets;
constexpr int kRatio = kSub + kSubBuckets;  // out, lse and gradient blocks
constexpr int kUsage = kRatio + 3 * kRatioBuckets;
constexpr int kDecodeBuckets = 40;  // log2 of a decode's worst error/threshold ratio, quarter octaves
constexpr int kDecode = kUsage + 3 * kUsageBuckets;  // 4 kinds of plan
constexpr int kTotal = kDecode + 4 * kDecodeBuckets;

void hit(std::vector<std::uint16_t>& out, int block, int n, int bucket) {
  out.push_back(static_cast<std::uint16_t>(block + std::clamp(bucket, 0, n - 1)));
}

// A signed value on a log scale: bucket 2*log2(1 + |x|), the sign selecting one of two halves.
void hit_signed_log(std::vector<std::uint16_t>& out, int block, double x) {
  const int b = static_cast<int>(2 * std::log2(1 + std::fabs(x)));
  hit(out, block + (x < 0 ? kLseBuckets : 0), kLseBuckets, b);
}

void hit_ratio(std::vector<std::uint16_t>& out, int block, int n, double r) {
  if (!(r > 0) || !std::isfinite(r)) return;
  hit(out, block, n, static_cast<int>(std::floor(4 * std::log2(r))) + n - 8);  // 2^-18 .. 2^2
}

int slot_of(const std::string& tensor) {
  if (tensor == "out") return 0;
  if (tensor == "lse") return 1;
  return 2;  // dq, dk, dv
}

}  // namespace

const int kSignalBuckets = kTotal;

void signal_buckets(const Case& c, const Outputs& exact, const bound::Comparison& cmp,
                    std::vector<std::uint16_t>& out) {
  // Headroom of the softmax: the largest and smallest finite LSE (~ the extreme row maxima).
  double max_lse = -std::numeric_limits<double>::infinity(), min_lse = std::numeric_limits<double>::infinity();
  for (double l : exact.lse)
    if (std::isfinite(l)) {
      max_lse = std::max(max_lse, l);
      min_lse = std::min(min_lse, l);
    }
  if (std::isfinite(max_lse)) {
    hit_signed_log(out, kMaxLse, max_lse);
    hit_signed_log(out, kMinLse, min_lse);
  }
  // Headroom of the output dtype: how close max |O| comes to its largest finite value.
  const DType t = c.problem.dtype;
  double max_out = 0;
  for (double o : exact.out)
    if (std::isfinite(o)) max_out = std::max(max_out, std::fabs(o));
  if (max_out > 0) hit(out, kTop, kTopBuckets, kTopBuckets - 1 - (max_exponent(t) - std::ilogb(max_out)));
  // Depth into the subnormals of the storage dtype: smallest nonzero |value| read.
  double min_in = std::numeric_limits<double>::infinity();
  for (const auto* v : {&c.q, &c.k, &c.v})
    for (double x : *v)
      if (x != 0 && std::isfinite(x)) min_in = std::min(min_in, std::fabs(x));
  if (std::isfinite(min_in)) hit(out, kSub, kSubBuckets, kSubBuckets / 2 + (min_exponent(t) - std::ilogb(min_in)));
  // How close the kernel's error comes to what the bound allows, per tensor.
  for (const bound::TensorReport& r : cmp.tensors) {
    const int slot = slot_of(r.name);
    hit_ratio(out, kRatio + slot * kRatioBuckets, kRatioBuckets, r.worst_ratio);
    hit_ratio(out, kUsage + slot * kUsageBuckets, kUsageBuckets, r.worst_bound_usage);
  }
}

void decode_buckets(const judge::DecodePlan& plan, double worst_ratio, std::vector<std::uint16_t>& out) {
  const bool single = std::all_of(plan.steps.begin(), plan.steps.end(), [](std::int64_t n) { return n == 1; });
  const int kind = (plan.page_size > 0 ? 2 : 0) + (single ? 1 : 0);
  out.push_back(static_cast<std::uint16_t>(kDecode + kind * kDecodeBuckets));  // the kind reached at all
  hit_ratio(out, kDecode + kind * kDecodeBuckets, kDecodeBuckets, worst_ratio);
}

}  // namespace attnv::fuzz
