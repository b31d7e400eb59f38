// The ABI conversions round-trip, and bad declarations get their messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <set>
#include <string>

#include "abi_convert.h"
#include "shared_region.h"
#include "attnv_mutant_plugins.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/validate.h"
#include "kernels/mutants.h"

namespace attnv::plugin {
namespace {

TEST(AbiConvert, ProblemRoundTrips) {
  Problem p;
  p.shape = {2, 8, 2, 5, 7, 16, 32};
  p.dtype = DType::bf16;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.window = {3, -1};
  p.has_mask = p.has_bias = p.has_kv_len = true;
  p.softcap = 30.0;
  EXPECT_EQ(problem_from_abi(problem_to_abi(p)), p);  // default scale stays unset
  p.scale = 0.3;
  EXPECT_EQ(problem_from_abi(problem_to_abi(p)), p);
  EXPECT_EQ(problem_to_abi(p).scale, 0.3);
}

// A feature's input travels in the slot of its name, after the call's own slots, one slot each.
consteval bool every_input_has_a_slot_of_its_own() {
  for (int s = 0; s < wire::kSlots; ++s)
    if (wire::slot_named(wire::kTensorNames[s]) != s) return false;  // a name twice
  for (const HeadInput& h : kHeadInputs)
    if (wire::slot_named(h.name) < wire::kCallSlots) return false;
  for (const IndexInput& x : kIndexInputs)
    if (wire::slot_named(x.name) < wire::kCallSlots) return false;
  return true;
}
static_assert(every_input_has_a_slot_of_its_own());
static_assert(wire::slot_named("no_such_input") == wire::kSlots);

// Each later option (problem/features/) travels in its own appended field and only there:
// set alone, it changes no byte of attnv_problem outside that field; it comes back as it went;
// and a sender whose struct ends before the field leaves it unset.
TEST(AbiConvert, EveryLaterOptionTravelsInItsOwnFieldOnly) {
  Problem base;
  base.shape = {2, 4, 2, 3, 5, 8, 8};
  base.has_mask = base.has_bias = true;  // the extents travel only with their tensor
  const attnv_problem plain = problem_to_abi(base);
  for (const ProblemOption& o : kProblemOptions) {
    Problem p = base;
    o.set(p, 3);
    attnv_problem a = problem_to_abi(p);
    const auto* first = reinterpret_cast<const unsigned char*>(&a);
    const auto* field = o.abi_flag ? reinterpret_cast<const unsigned char*>(&(a.*o.abi_flag))
                                   : reinterpret_cast<const unsigned char*>(&(a.*o.abi_count));
    const std::size_t at = static_cast<std::size_t>(field - first);
    const std::size_t size = o.abi_flag ? sizeof(std::int32_t) : sizeof(std::int64_t);
    for (std::size_t b = 0; b < sizeof a; ++b) {
      if (b >= at && b < at + size) continue;
      EXPECT_EQ(first[b], reinterpret_cast<const unsigned char*>(&plain)[b]) << o.key << " changed byte " << b;
    }
    EXPECT_EQ(problem_from_abi(a), p) << o.key;
    a.struct_size = static_cast<std::uint32_t>(at);  // a sender that knows nothing of it
    EXPECT_EQ(o.get(problem_from_abi(a)), 0) << o.key;
  }
}

// Sinks are appended fields: read only when the sender's struct_size covers them, so a sender
// whose struct ends before them (a v1 problem, struct_size 0) never says "sinks".
TEST(AbiConvert, SinksCrossTheAbiOnlyWhereStructSizeCoversThem) {
  Problem p;
  p.shape = {1, 4, 2, 3, 3, 8, 8};
  p.has_sinks = true;
  attnv_problem a = problem_to_abi(p);
  EXPECT_EQ(a.has_sinks, 1);
  EXPECT_EQ(problem_from_abi(a), p);
  a.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, has_sinks));
  EXPECT_FALSE(problem_from_abi(a).has_sinks);
  a.struct_size = 0;
  EXPECT_FALSE(problem_from_abi(a).has_sinks);

  float sinks[4] = {}, dsinks[4] = {};
  KernelViews v;
  v.sinks.data = sinks;
  v.dsinks.data = dsinks;
  for (TensorRef* t : {&v.sinks, &v.dsinks}) {
    t->rank = 1;
    t->shape = {4, 0, 0, 0};
    t->stride = {1, 0, 0, 0};
  }
  attnv_views av = views_to_abi(v);
  EXPECT_EQ(av.sinks.data, sinks);
  EXPECT_EQ(av.dsinks.rank, 1);
  const KernelViews back = views_from_abi(av, DType::f32);
  EXPECT_EQ(back.sinks.data, sinks);
  EXPECT_EQ(back.dsinks.data, dsinks);
  EXPECT_EQ(back.dsinks.shape[0], 4);
  av.struct_size = static_cast<std::uint32_t>(offsetof(attnv_views, sinks));
  EXPECT_FALSE(views_from_abi(av, DType::f32).sinks.present());
  EXPECT_EQ(ATTNV_CAP_SINKS, 1u << 14);
  EXPECT_TRUE(caps_from_abi(ATTNV_CAP_SINKS, ATTNV_DTYPE_BIT(ATTNV_F32)).sinks);
}

// ALiBi's flag and slopes are appended like the sinks: a sender whose struct ends before them
// (one built before ALiBi crossed the ABI) never says "ALiBi".
TEST(AbiConvert, AlibiCrossesTheAbiOnlyWhereStructSizeCoversIt) {
  Problem p;
  p.shape = {1, 4, 2, 3, 3, 8, 8};
  p.alignment = Alignment::bottom_right;
  p.has_alibi = true;
  attnv_problem a = problem_to_abi(p);
  EXPECT_EQ(a.has_alibi, 1);
  EXPECT_EQ(problem_from_abi(a), p);
  a.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, has_alibi));
  EXPECT_FALSE(problem_from_abi(a).has_alibi);

  float slopes[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
  KernelViews v;
  v.alibi.data = slopes;
  v.alibi.rank = 1;
  v.alibi.shape = {4, 0, 0, 0};
  v.alibi.stride = {1, 0, 0, 0};
  attnv_views av = views_to_abi(v);
  EXPECT_EQ(av.alibi.data, slopes);
  EXPECT_EQ(views_from_abi(av, DType::f32).alibi.data, slopes);
  EXPECT_EQ(views_from_abi(av, DType::f32).alibi.shape[0], 4);
  av.struct_size = static_cast<std::uint32_t>(offsetof(attnv_views, alibi));
  EXPECT_FALSE(views_from_abi(av, DType::f32).alibi.present());
  EXPECT_EQ(ATTNV_CAP_ALIBI, 1u << 16);
  EXPECT_TRUE(caps_from_abi(ATTNV_CAP_ALIBI, ATTNV_DTYPE_BIT(ATTNV_F32)).alibi);

  // Decode carries the slopes in its own views, and through the worker's forward slots.
  DecodeViews dv;
  dv.alibi = v.alibi;
  attnv_decode_views ad = decode_views_to_abi(dv);
  EXPECT_EQ(ad.alibi.data, slopes);
  EXPECT_EQ(decode_from_slots(decode_in_slots(ad, problem_to_abi(p))).alibi.data, slopes);
  EXPECT_EQ(decode_views_from_abi(ad, DType::f32).alibi.shape[0], 4);
  ad.struct_size = static_cast<std::uint32_t>(offsetof(attnv_decode_views, alibi));
  EXPECT_FALSE(decode_views_from_abi(ad, DType::f32).alibi.present());
}

// The paged KV cache: page_size in the problem and the block table in the decode views, each an
// appended field read only where struct_size covers it. In the worker's slots the table rides
// in dout as a [B, Tk / page_size] tensor of 8-byte elements, and comes back as the same pointer.
TEST(AbiConvert, PagedCacheCrossesTheAbiOnlyWhereStructSizeCoversIt) {
  Problem p;
  p.shape = {2, 4, 2, 1, 12, 8, 8};
  p.page_size = 4;
  attnv_problem a = problem_to_abi(p);
  EXPECT_EQ(a.page_size, 4);
  EXPECT_EQ(problem_from_abi(a), p);
  a.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, page_size));
  EXPECT_EQ(problem_from_abi(a).page_size, 0);  // a sender without the field: contiguous caches
  a.struct_size = 0;
  EXPECT_EQ(problem_from_abi(a).page_size, 0);

  const std::int64_t table[2 * 3] = {5, 0, 3, 1, 4, 2};
  DecodeViews v;
  v.block_table = table;
  attnv_decode_views d = decode_views_to_abi(v);
  EXPECT_EQ(d.block_table, table);
  EXPECT_EQ(decode_views_from_abi(d, DType::f32).block_table, table);
  d.struct_size = static_cast<std::uint32_t>(offsetof(attnv_decode_views, block_table));
  EXPECT_EQ(decode_views_from_abi(d, DType::f32).block_table, nullptr);
  d.struct_size = sizeof(attnv_decode_views);

  const attnv_views slots = decode_in_slots(d, problem_to_abi(p));
  EXPECT_EQ(slots.dout.data, static_cast<const void*>(table));
  EXPECT_EQ(slots.dout.rank, 2);
  EXPECT_EQ(element_bytes(slots.dout), 8);
  EXPECT_EQ(slots.dout.shape[0], 2);
  EXPECT_EQ(slots.dout.shape[1], 3);
  EXPECT_EQ(slots.dout.stride[0], 3);
  EXPECT_EQ(slots.dout.stride[1], 1);
  EXPECT_EQ(decode_from_slots(slots).block_table, table);
  // A contiguous cache has no table on either side, whatever pointer the views hold.
  p.page_size = 0;
  EXPECT_EQ(decode_in_slots(d, problem_to_abi(p)).dout.data, nullptr);
  EXPECT_EQ(decode_from_slots(decode_in_slots(d, problem_to_abi(p))).block_table, nullptr);

  EXPECT_EQ(ATTNV_CAP_PAGED_KV, 1u << 18);
  const Capabilities c = caps_from_abi(ATTNV_CAP_PAGED_KV | ATTNV_CAP_DECODE, ATTNV_DTYPE_BIT(ATTNV_F32));
  EXPECT_TRUE(c.paged_kv);
  EXPECT_EQ(caps_to_abi(c), ATTNV_CAP_PAGED_KV | ATTNV_CAP_DECODE);
  EXPECT_FALSE(caps_from_abi(ATTNV_CAP_DECODE, ATTNV_DTYPE_BIT(ATTNV_F32)).paged_kv);
}

// Packed sequences: the count in attnv_problem, the bounds as plain int64 pointers in
// attnv_views, both ways (the export adapter reads them with views_from_abi).
TEST(AbiConvert, VarlenBoundsRoundTrip) {
  Problem p;
  p.shape = {1, 4, 2, 3, 5, 8, 8};
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.varlen_sequences = 2;
  const attnv_problem a = problem_to_abi(p);
  EXPECT_EQ(a.varlen_sequences, 2);
  EXPECT_EQ(problem_from_abi(a), p);

  Case c = make_zero_case(p);
  c.cu_seqlens_q = {0, 2, 3};
  c.cu_seqlens_k = {0, 1, 5};
  CaseBuffers buf(c, Layout::bhtd, false);
  const attnv_views av = views_to_abi(buf.views());
  EXPECT_EQ(av.cu_seqlens_q, buf.views().cu_seqlens_q);
  EXPECT_EQ(av.cu_seqlens_k, buf.views().cu_seqlens_k);
  const KernelViews kv = views_from_abi(av, p.dtype);
  EXPECT_TRUE(check_views(p, kv).empty());
  EXPECT_EQ(case_from_views(p, kv).cu_seqlens_q, c.cu_seqlens_q);
  EXPECT_EQ(case_from_views(p, kv).cu_seqlens_k, c.cu_seqlens_k);
  EXPECT_EQ(ATTNV_CAP_VARLEN, 1u << 17);
  EXPECT_TRUE(caps_from_abi(ATTNV_CAP_VARLEN, ATTNV_DTYPE_BIT(ATTNV_F32)).varlen);
  EXPECT_EQ(caps_to_abi(caps_from_abi(ATTNV_CAP_VARLEN, ATTNV_DTYPE_BIT(ATTNV_F32))), ATTNV_CAP_VARLEN);
}

// Per-sequence key lengths: the bit both ways, and kv_len's views and worker count [S], not [B].
TEST(AbiConvert, PerSequenceKeyLengthsTravelAsSEntries) {
  EXPECT_EQ(ATTNV_CAP_VARLEN_KV_LEN, 1u << 19);
  const Capabilities caps = caps_from_abi(ATTNV_CAP_VARLEN_KV_LEN, ATTNV_DTYPE_BIT(ATTNV_F32));
  EXPECT_TRUE(caps.varlen_kv_len);
  EXPECT_EQ(caps_to_abi(caps), ATTNV_CAP_VARLEN_KV_LEN);
  Problem p;
  p.shape = {1, 2, 1, 3, 5, 4, 4};
  p.varlen_sequences = 3;
  p.has_kv_len = true;
  Case c = make_zero_case(p);
  c.cu_seqlens_q = {0, 1, 1, 3};
  c.cu_seqlens_k = {0, 2, 2, 5};
  c.kv_len = {1, 0, 3};
  ASSERT_TRUE(check_case(c).empty()) << check_case(c)[0];
  CaseBuffers buf(c, Layout::bhtd, false);
  const attnv_views av = views_to_abi(buf.views());
  const attnv_problem ap = problem_to_abi(p);
  EXPECT_EQ(av.kv_len, buf.views().kv_len);
  EXPECT_EQ(plan_call(av, ap, wire::Op::forward).t[wire::kKvLenSlot].shape[0], 3);  // the worker maps S entries
  attnv_problem unpacked = ap;
  unpacked.varlen_sequences = 0;
  EXPECT_EQ(plan_call(av, unpacked, wire::Op::forward).t[wire::kKvLenSlot].shape[0], 1);  // [B] otherwise
  const KernelViews kv = views_from_abi(av, p.dtype);
  EXPECT_TRUE(check_views(p, kv).empty());
  EXPECT_EQ(case_from_views(p, kv).kv_len, c.kv_len);
}

TEST(AbiConvert, MaskAndBiasExtentsRoundTripAndOlderProblemsAreTqTk) {
  Problem p;
  p.shape = {3, 4, 2, 5, 7, 8, 8};
  p.has_mask = p.has_bias = true;
  for (const Leading m : {Leading{}, Leading{true, false}, Leading{false, true}, Leading{true, true}})
    for (const Leading b : {Leading{}, Leading{true, false}, Leading{false, true}, Leading{true, true}}) {
      p.mask_dims = m;
      p.bias_dims = b;
      const attnv_problem a = problem_to_abi(p);
      EXPECT_EQ(a.mask_batch, m.batch);
      EXPECT_EQ(a.mask_heads, m.heads);
      EXPECT_EQ(a.bias_batch, b.batch);
      EXPECT_EQ(a.bias_heads, b.heads);
      EXPECT_EQ(problem_from_abi(a), p);
    }
  // An attnv built before the fields existed filled a smaller struct: whatever lies past it,
  // its masks and biases are [Tq, Tk].
  p.mask_dims = p.bias_dims = {true, true};
  attnv_problem older = problem_to_abi(p);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, mask_batch));
  const Problem back = problem_from_abi(older);
  EXPECT_EQ(back.mask_dims, Leading{});
  EXPECT_EQ(back.bias_dims, Leading{});
  // The views carry the planes as rank-4 tensors and come back as they went.
  p.mask_dims = {false, true};
  p.bias_dims = {true, false};
  Case c = make_zero_case(p);
  for (std::size_t n = 0; n < c.mask.size(); ++n) c.mask[n] = static_cast<std::uint8_t>(n % 3 != 1);
  for (std::size_t n = 0; n < c.bias.size(); ++n) c.bias[n] = static_cast<double>(n % 5) - 2;
  CaseBuffers buf(c, Layout::bthd, false);
  const attnv_views av = views_to_abi(buf.views());
  EXPECT_EQ(av.mask.rank, 4);
  EXPECT_EQ(av.mask.dtype, ATTNV_U8);
  EXPECT_EQ(av.mask.shape[0], 1);
  EXPECT_EQ(av.mask.shape[1], 4);
  EXPECT_EQ(av.bias.shape[0], 3);
  EXPECT_EQ(av.bias.shape[1], 1);
  const KernelViews kv = views_from_abi(av, p.dtype);
  EXPECT_TRUE(check_views(p, kv).empty());
  const Case round = case_from_views(p, kv);
  EXPECT_EQ(round.mask, c.mask);
  EXPECT_EQ(round.bias, c.bias);
}

TEST(AbiConvert, CapabilitiesRoundTripBitByBit) {
  for (std::uint32_t bit = 1; bit <= ATTNV_CAP_VARLEN_KV_LEN; bit <<= 1) {
    const Capabilities c = caps_from_abi(bit, ATTNV_DTYPE_BIT(ATTNV_F16));
    EXPECT_EQ(caps_to_abi(c), bit);
    EXPECT_EQ(c.dtypes, std::vector<DType>{DType::f16});
  }
  EXPECT_EQ(dtypes_to_abi({DType::f64, DType::bf16}), ATTNV_DTYPE_BIT(ATTNV_F64) | ATTNV_DTYPE_BIT(ATTNV_BF16));
}

TEST(AbiConvert, PrecisionRoundTripsAndJunkIsRejected) {
  PrecisionModel m = PrecisionModel::natural(DType::f16, 64);
  m.p_dtype = DType::f16;
  m.exp_ulps = 4;
  EXPECT_EQ(precision_from_abi(precision_to_abi(m), DType::f16, "plugin x"), m);
  attnv_precision bad = precision_to_abi(m);
  bad.accum = ATTNV_U8;
  EXPECT_THROW(precision_from_abi(bad, DType::f16, "plugin x"), InputError);
  bad = precision_to_abi(m);
  bad.exp_ulps = NAN;
  EXPECT_THROW(precision_from_abi(bad, DType::f16, "plugin x"), InputError);
}

TEST(AbiConvert, WithdrawnClaimsRoundTripAndJunkBitsAreRejected) {
  Capabilities c;
  c.dtypes = {DType::f32, DType::f16};
  c.bias = c.softcap = true;
  c.withdrawn[DType::f16] = {"bias", "softcap"};
  std::uint32_t w[4];
  withdrawn_to_abi(c, w);
  EXPECT_EQ(w[ATTNV_F16], ATTNV_CAP_BIAS | ATTNV_CAP_SOFTCAP);
  EXPECT_EQ(w[ATTNV_F32], 0u);
  Capabilities back;
  withdrawn_from_abi(w, back);
  EXPECT_EQ(back.withdrawn, c.withdrawn);
  w[ATTNV_F32] = 1u << 30;
  EXPECT_THROW(withdrawn_from_abi(w, back), InputError);
}

TEST(AbiConvert, DeclarationChecks) {
  auto fwd = [](const attnv_problem*, const attnv_views*) { return 0; };
  attnv_kernel k{ATTNV_ABI_VERSION, sizeof(attnv_kernel), "k", "1", ATTNV_DTYPE_BIT(ATTNV_F32), 0,
                 nullptr, +fwd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, {}, nullptr};
  EXPECT_TRUE(check_kernel(k, "plugin p").empty());
  attnv_kernel b = k;
  b.caps = ATTNV_CAP_BACKWARD;
  EXPECT_EQ(check_kernel(b, "plugin p"), std::vector<std::string>{"plugin p: declares ATTNV_CAP_BACKWARD but backward is NULL"});
  b = k;
  b.abi_version = 3;
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 1u);
  b = k;
  b.name = nullptr;
  b.forward = nullptr;
  b.dtypes = ATTNV_DTYPE_BIT(ATTNV_U8);
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 3u);
  b = k;
  b.caps = ATTNV_CAP_PAGED_KV;
  EXPECT_EQ(check_kernel(b, "plugin p"),
            std::vector<std::string>{"plugin p: declares ATTNV_CAP_PAGED_KV without ATTNV_CAP_DECODE (a paged KV cache is a "
                                     "decode call's)"});
  b = k;
  b.caps = ATTNV_CAP_VARLEN_KV_LEN | ATTNV_CAP_VARLEN;
  EXPECT_EQ(check_kernel(b, "plugin p"),
            std::vector<std::string>{"plugin p: declares ATTNV_CAP_VARLEN_KV_LEN without ATTNV_CAP_VARLEN and "
                                     "ATTNV_CAP_KV_LEN (per-sequence key lengths are kv_len with packed sequences)"});
  b.caps = ATTNV_CAP_VARLEN_KV_LEN | ATTNV_CAP_VARLEN | ATTNV_CAP_KV_LEN;
  EXPECT_TRUE(check_kernel(b, "plugin p").empty());
  b = k;
  b.struct_size = 8;
  EXPECT_EQ(check_kernel(b, "plugin p").size(), 1u);
  EXPECT_THROW(require_valid_kernel(nullptr, "plugin p"), InputError);
}

// The CMake list of mutant plugins is read from mutants.cpp: it must be the zoo, in order.
TEST(MutantPlugins, OnePerMutantOfTheZoo) {
  std::vector<std::string> cmake, zoo;
  for (const AttnvMutantPlugin& m : kAttnvMutantPlugins) cmake.push_back(m.name);
  for (const kernels::Mutant& m : kernels::mutant_zoo()) zoo.push_back(m.name);
  EXPECT_EQ(cmake, zoo);
}

}  // namespace
}  // namespace attnv::plugin
