#pragma once
// A mask or bias with its own batch or head extent, [B|1, Hq|1, Tq, Tk] (docs/semantics.md,
// "Masks and biases"); [Tq, Tk] ones need only the mask or bias claim. Off in the file route's
// default claims: a program written for [Tq, Tk] files claims less. The extents mean something
// only with the mask or bias (check_problem refuses them alone); describe() shows them as
// "mask[B,Hq]", so their options have no word.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kMaskBiasBroadcastClaims[] = {
    {.key = "mask_bias_per_batch_head", .label = "per-batch/per-head mask and bias",
     .member = &Capabilities::mask_bias_per_batch_head, .abi_bit = ATTNV_CAP_MASK_BIAS_PER_BATCH_HEAD,
     .used_by = [](const Problem& p) -> std::string_view {
       return (p.has_mask && p.mask_dims.any()) || (p.has_bias && p.bias_dims.any()) ? "per-batch or per-head mask/bias" : "";
     },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.mask_dims = p.bias_dims = {}; },
     .doc = "Masks and biases of their own per batch entry and/or per query head, [B|1, Hq|1, Tq, Tk] (docs/semantics.md)."},
};
// One leading extent of the mask's or the bias's as an option, set only with its tensor.
template <bool Problem::*has, Leading Problem::*dims, bool Leading::*side>
constexpr ProblemOption extent_option(std::string_view key, std::int32_t attnv_problem::*field, std::string_view doc) {
  return {.key = key, .kind = ProblemOption::Kind::flag,
          .get = [](const Problem& p) -> std::int64_t { return p.*has && (p.*dims).*side; },
          .set = [](Problem& p, std::int64_t v) { (p.*dims).*side = v != 0; }, .in_manifest = true, .abi_flag = field,
          .doc = doc};
}
inline constexpr ProblemOption kMaskBiasBroadcastOptions[] = {
    extent_option<&Problem::has_mask, &Problem::mask_dims, &Leading::batch>(
        "mask_batch", &attnv_problem::mask_batch,
        "mask.npy has its own plane per batch entry: [B, Hq|1, Tq, Tk] instead of [Tq, Tk]. Only with \"mask\": true."),
    extent_option<&Problem::has_mask, &Problem::mask_dims, &Leading::heads>(
        "mask_heads", &attnv_problem::mask_heads,
        "mask.npy has its own plane per query head: [B|1, Hq, Tq, Tk]. Only with \"mask\": true."),
    extent_option<&Problem::has_bias, &Problem::bias_dims, &Leading::batch>(
        "bias_batch", &attnv_problem::bias_batch,
        "bias.npy has its own plane per batch entry: [B, Hq|1, Tq, Tk]. Only with \"bias\": true."),
    extent_option<&Problem::has_bias, &Problem::bias_dims, &Leading::heads>(
        "bias_heads", &attnv_problem::bias_heads,
        "bias.npy has its own plane per query head: [B|1, Hq, Tq, Tk]. Only with \"bias\": true."),
};
inline constexpr Feature kMaskBiasBroadcast{
    .name = "mask_bias_broadcast", .claims = kMaskBiasBroadcastClaims, .options = kMaskBiasBroadcastOptions};

}  // namespace attnv::features
