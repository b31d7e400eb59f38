// The feature registry (problem/features/): the lists computed from it keep the order the
// certificate and the call hash depend on, and its consistency check rejects incomplete rows.
#include "problem/features/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace attnv {
namespace {

template <class Rows>
std::vector<std::string> names(const Rows& rows, std::string_view (*name)(const typename Rows::value_type&)) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.emplace_back(name(r));
  return out;
}

// The certificate prints claims in kClaims' order and the call hash takes the inputs in
// kHeadInputs' and kIndexInputs' order: a feature appended keeps them; one inserted or reordered
// changes every certificate and every exported case's hash. The rows as of issue 40 must stay the
// lists' first rows, in this order; later features append behind them.
template <class Rows, class Name>
::testing::AssertionResult starts_with(const Rows& rows, Name name, const std::vector<std::string>& first) {
  const std::vector<std::string> have = names(rows, name);
  if (have.size() >= first.size() && std::equal(first.begin(), first.end(), have.begin()))
    return ::testing::AssertionSuccess();
  std::string got;
  for (const std::string& n : have) got += " " + n;
  return ::testing::AssertionFailure() << "the rows are now:" << got;
}

TEST(Registry, ListsKeepTheOrderCertificatesAndHashesDependOn) {
  EXPECT_TRUE(starts_with(kClaims, [](const ClaimInfo& c) { return c.key; },
                          {"gqa", "causal_top_left", "causal_bottom_right", "window", "mask", "bias", "kv_len", "softcap",
                           "custom_scale", "lse", "backward", "decode", "strided", "hidden_nonfinite", "sinks",
                           "mask_bias_per_batch_head", "alibi", "paged_kv", "varlen", "varlen_kv_len"}));
  EXPECT_TRUE(starts_with(kHeadInputs, [](const HeadInput& h) { return h.name; }, {"sinks", "alibi"}));
  EXPECT_TRUE(starts_with(kIndexInputs, [](const IndexInput& x) { return x.name; }, {"kv_len", "cu_seqlens_q", "cu_seqlens_k"}));
  EXPECT_TRUE(starts_with(kProblemOptions, [](const ProblemOption& o) { return o.key; },
                          {"sinks", "mask_batch", "mask_heads", "bias_batch", "bias_heads", "alibi", "page_size",
                           "varlen_sequences"}));
  // A row inserted before the end would pass the prefixes only if it came after them all.
  EXPECT_FALSE(starts_with(kHeadInputs, [](const HeadInput& h) { return h.name; }, {"alibi", "sinks"}));
}

// Each feature is one file with a name of its own and something to claim: a feature without a
// claim could never be NOT CLAIMED, and a kernel could not say it lacks it.
TEST(Registry, EveryFeatureHasItsOwnNameAndAClaim) {
  for (std::size_t i = 0; i < std::size(features::kFeatures); ++i) {
    const Feature& f = features::kFeatures[i];
    EXPECT_FALSE(f.claims.empty()) << f.name;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(features::kFeatures[j].name, f.name);
  }
}

// The consistency check (a static_assert in registry.h) on planted rows, judged at compile time:
// this file does not build if the check accepts any of them.
constexpr std::string_view used(const Problem&) { return ""; }
constexpr void drop(Problem&, const Capabilities&) {}
constexpr ClaimInfo kClaimA{.key = "a", .member = &Capabilities::gqa, .abi_bit = 1u << 0, .used_by = used, .drop = drop};
constexpr ClaimInfo kClaimB{.key = "b", .member = &Capabilities::mask, .abi_bit = 1u << 1, .used_by = used, .drop = drop};
constexpr ProblemOption kFlag{.key = "f", .kind = ProblemOption::Kind::flag, .abi_flag = &attnv_problem::has_sinks};
constexpr ProblemOption kCount{.key = "c", .kind = ProblemOption::Kind::count, .abi_count = &attnv_problem::page_size};

consteval bool accepts(std::initializer_list<ClaimInfo> c, std::initializer_list<ProblemOption> o = {},
                       std::initializer_list<HeadInput> h = {}, std::initializer_list<IndexInput> x = {}) {
  return features::rows_are_consistent({c.begin(), c.size()}, {o.begin(), o.size()}, {h.begin(), h.size()},
                                       {x.begin(), x.size()});
}
static_assert(accepts({kClaimA, kClaimB}, {kFlag, kCount}));
static_assert(!accepts({kClaimA, ClaimInfo{kClaimA.key, "", kClaimB.member, 1u << 2, used, "", false, false, drop}}),
              "a claim key used twice");
static_assert(!accepts({kClaimA, ClaimInfo{"b", "", kClaimB.member, 1u << 0, used, "", false, false, drop}}),
              "an ABI bit used twice");
static_assert(!accepts({}, {ProblemOption{"f", ProblemOption::Kind::flag, nullptr, nullptr, "", false, nullptr,
                                          &attnv_problem::page_size}}),
              "a flag travelling in an int64 field");
static_assert(!accepts({}, {ProblemOption{"c", ProblemOption::Kind::count, nullptr, nullptr, "", false, nullptr, nullptr}}),
              "an option with no ABI field");
constexpr ProblemOption in_manifest(ProblemOption o, std::string_view doc) {
  o.in_manifest = true;
  o.doc = doc;
  return o;
}
static_assert(accepts({}, {in_manifest(kFlag, "f.npy is present")}));
static_assert(!accepts({}, {in_manifest(kFlag, "")}), "a manifest key without its schema description");
static_assert(!accepts({}, {}, {HeadInput{.name = "h", .abi_view = &attnv_views::sinks}}),
              "a per-head input without its decode view field");
static_assert(!accepts({}, {}, {}, {IndexInput{.name = "x"}}), "an index array without its ABI field");

// A claim a problem can use has its drop (fit_to_claims needs it); a claim about the call has
// neither. Checked here, not in the static_assert (registry.h says why).
bool drops_where_used(const ClaimInfo& c) { return (c.used_by == nullptr) == (c.drop == nullptr); }

TEST(Registry, EveryProblemClaimHasItsDrop) {
  for (const ClaimInfo& c : kClaims) EXPECT_TRUE(drops_where_used(c)) << c.key;
  EXPECT_FALSE(drops_where_used(ClaimInfo{"a", "", kClaimA.member, 1u << 0, used, "", false, false, nullptr}));
  EXPECT_FALSE(drops_where_used(ClaimInfo{"a", "", kClaimA.member, 1u << 0, nullptr, "", false, false, drop}));
}

}  // namespace
}  // namespace attnv
