// ABI version 2 next to version 1: every version 1 field where a version 1 plugin reads it, the
// version and struct_size checks with the message each malformed declaration gets, a version 1
// struct read without the version 2 fields it does not have.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "abi_convert.h"
#include "abi_v1_fields.h"
#include "problem/error.h"

extern "C" {
extern const std::size_t attnv_test_v1_offsets[];
extern const char* const attnv_test_v1_names[];
extern const std::size_t attnv_test_v1_count;
extern const std::size_t attnv_test_v1_sizes[];
extern const unsigned attnv_test_v1_version;
}

namespace attnv::plugin {
namespace {

#define ATTNV_V2_OFFSET(s, f) offsetof(s, f),
constexpr std::size_t kV2Offsets[] = {ATTNV_V1_FIELDS(ATTNV_V2_OFFSET)};

TEST(AbiVersion, EveryVersion1FieldStaysWhereVersion1PluginsReadIt) {
  ASSERT_EQ(attnv_test_v1_version, 1u) << "abi_v1/attnv_plugin.h must stay the released version 1 header";
  ASSERT_EQ(attnv_test_v1_count, std::size(kV2Offsets));
  for (std::size_t i = 0; i < attnv_test_v1_count; ++i)
    EXPECT_EQ(kV2Offsets[i], attnv_test_v1_offsets[i]) << attnv_test_v1_names[i] << " moved";
  // Embedded by value in attnv's structs: never grown.
  EXPECT_EQ(sizeof(attnv_tensor), attnv_test_v1_sizes[0]);
  // The others only grew at their end, where a version 1 plugin never reads. attnv_precision is
  // written by the plugin: a version 1 plugin writes its 32 bytes with struct_size (reserved) 0,
  // and attnv reads the later fields (the stages) only when struct_size covers them.
  EXPECT_EQ(offsetof(attnv_precision, dot), attnv_test_v1_sizes[4]);
  EXPECT_EQ(offsetof(attnv_problem, struct_size), attnv_test_v1_sizes[1]);
  EXPECT_EQ(offsetof(attnv_views, struct_size), attnv_test_v1_sizes[2]);
  EXPECT_EQ(offsetof(attnv_decode_views, struct_size), attnv_test_v1_sizes[3]);
  EXPECT_EQ(kKernelV1Size, attnv_test_v1_sizes[5]);
}

int fwd(const attnv_problem*, const attnv_views*) { return 0; }
int says_yes(const attnv_problem*, int32_t, char*, uint32_t) { return 1; }
int dec(const attnv_problem*, const attnv_decode_views*) { return 0; }

attnv_kernel good_v2() {
  attnv_kernel k{};
  k.abi_version = 2;
  k.struct_size = sizeof(attnv_kernel);
  k.name = "k";
  k.version = "2";
  k.dtypes = ATTNV_DTYPE_BIT(ATTNV_F32);
  k.forward = fwd;
  k.supports = says_yes;
  return k;
}

std::string header_error(const attnv_kernel& k) { return check_kernel_header(k, "plugin p"); }

TEST(AbiVersion, VersionAndSizeChecksNameWhatIsWrong) {
  EXPECT_EQ(header_error(good_v2()), "");
  EXPECT_TRUE(check_kernel(good_v2(), "plugin p").empty());

  attnv_kernel k = good_v2();
  k.struct_size = static_cast<std::uint32_t>(kKernelV1Size);
  EXPECT_EQ(header_error(k), "plugin p: ABI version 2 with struct_size " + std::to_string(kKernelV1Size) +
                                 ", smaller than the version 2 attnv_kernel (" + std::to_string(kKernelV2BaseSize) +
                                 " bytes): set struct_size = sizeof(attnv_kernel) (this is the version 1 size: a version 1 "
                                 "struct declared as version 2?)");
  k.struct_size = 0;
  EXPECT_EQ(header_error(k), "plugin p: ABI version 2 with struct_size 0, smaller than the version 2 attnv_kernel (" +
                                 std::to_string(kKernelV2BaseSize) + " bytes): set struct_size = sizeof(attnv_kernel)");
  // A version 2 plugin built before the later fields (precision_for): accepted, and what lies
  // past its struct reads as NULL.
  k = good_v2();
  k.struct_size = static_cast<std::uint32_t>(kKernelV2BaseSize);
  k.precision_for = reinterpret_cast<int (*)(const attnv_problem*, attnv_precision*)>(&fwd);  // not the plugin's
  EXPECT_EQ(header_error(k), "");
  EXPECT_EQ(normalized_kernel(k).precision_for, nullptr);
  EXPECT_EQ(normalized_kernel(k).forward, fwd);
  k.struct_size = sizeof(attnv_kernel) + 16;
  EXPECT_EQ(header_error(k), "plugin p: ABI version 2 with struct_size " + std::to_string(sizeof(attnv_kernel) + 16) +
                                 ", larger than the version 2 attnv_kernel (" + std::to_string(sizeof(attnv_kernel)) +
                                 " bytes) this attnv reads: built against a newer attnv_plugin.h, or struct_size is not "
                                 "sizeof(attnv_kernel)");
  for (std::uint32_t v : {0u, 3u, 0xdeadbeefu}) {
    k = good_v2();
    k.abi_version = v;
    EXPECT_EQ(header_error(k), "plugin p: ABI version " + std::to_string(v) +
                                   "; this attnv reads versions 1 and 2 (set abi_version = ATTNV_ABI_VERSION from the "
                                   "attnv_plugin.h you build with)");
    // require_valid_kernel stops at the header: nothing past it is read.
    EXPECT_EQ(check_kernel(k, "plugin p").size(), 1u);
  }
}

TEST(AbiVersion, Version1StructsAreReadAsBefore) {
  attnv_kernel k = good_v2();
  k.abi_version = 1;
  k.struct_size = static_cast<std::uint32_t>(kKernelV1Size);
  EXPECT_EQ(header_error(k), "");
  // Whatever lies past a version 1 struct is not the plugin's: read as absent.
  const attnv_kernel n = normalized_kernel(k);
  EXPECT_EQ(n.supports, nullptr);
  EXPECT_EQ(n.set_option, nullptr);
  EXPECT_EQ(n.forward, fwd);
  // A version 1 struct_size larger than version 1 was accepted before, and still is.
  k.struct_size = sizeof(attnv_kernel) + 64;
  EXPECT_EQ(header_error(k), "");
  k.struct_size = 8;
  EXPECT_EQ(header_error(k), "plugin p: ABI version 1 with struct_size 8, smaller than the version 1 attnv_kernel (" +
                                 std::to_string(kKernelV1Size) + " bytes)");
}

// The precision model's stages: read only when struct_size covers them, left at
// ATTNV_STAGE_AS_ACCUM (the request attnv passes) by a plugin that does not know them, and
// carried both ways.
TEST(AbiVersion, PrecisionStagesAreReadOnlyWhenTheStructHasThem) {
  PrecisionModel m = PrecisionModel::natural(DType::f16, 32);
  m.p_dtype = DType::f16;
  m.pv = DType::f16;
  m.score = DType::f16;
  EXPECT_EQ(precision_from_abi(precision_to_abi(m), DType::f16, "plugin p"), m);
  attnv_precision v1 = precision_to_abi(m);
  v1.struct_size = 0;  // what a version 1 plugin writes into the reserved field
  EXPECT_FALSE(precision_from_abi(v1, DType::f16, "plugin p").staged());
  attnv_precision unaware = precision_request();  // a plugin that fills only the older fields
  unaware.accum = ATTNV_F32;
  unaware.p_dtype = ATTNV_F16;
  unaware.out = ATTNV_F16;
  unaware.exp_ulps = 2;
  const PrecisionModel u = precision_from_abi(unaware, DType::f16, "plugin p");
  EXPECT_FALSE(u.staged());
  EXPECT_EQ(u.p_dtype, DType::f16);
}

// flush_subnormals: carried both ways, read only when struct_size covers it (a plugin built
// before it leaves attnv's 0 there, and a struct ending before it flushes nothing), junk refused.
TEST(AbiVersion, FlushSubnormalsIsReadOnlyWhenTheStructHasIt) {
  PrecisionModel m = PrecisionModel::natural(DType::bf16);
  m.p_dtype = DType::bf16;
  m.flush_subnormals = true;
  EXPECT_EQ(precision_from_abi(precision_to_abi(m), DType::bf16, "plugin p"), m);
  EXPECT_EQ(precision_request().flush_subnormals, 0);
  attnv_precision older = precision_to_abi(m);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_precision, flush_subnormals));
  EXPECT_FALSE(precision_from_abi(older, DType::bf16, "plugin p").flush_subnormals);
  attnv_precision v1 = precision_to_abi(m);
  v1.struct_size = 0;  // a version 1 plugin
  EXPECT_FALSE(precision_from_abi(v1, DType::bf16, "plugin p").flush_subnormals);
  attnv_precision junk = precision_to_abi(m);
  junk.flush_subnormals = 2;
  EXPECT_THROW(precision_from_abi(junk, DType::bf16, "plugin p"), InputError);
}

// A sender built before packed sequences crossed the ABI (its attnv_problem and attnv_views end
// before varlen_sequences and cu_seqlens_q/_k) never says "packed", whatever lies past its struct.
TEST(AbiVersion, VarlenIsReadOnlyWhenTheStructHasIt) {
  Problem p;
  p.shape = {1, 2, 2, 4, 4, 8, 8};
  p.varlen_sequences = 2;
  attnv_problem older = problem_to_abi(p);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, varlen_sequences));
  EXPECT_EQ(problem_from_abi(older).varlen_sequences, 0);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, varlen_sequences) + sizeof(std::int64_t));
  EXPECT_EQ(problem_from_abi(older).varlen_sequences, 2);

  const std::int64_t cu[] = {0, 1, 4};
  KernelViews v;
  v.cu_seqlens_q = v.cu_seqlens_k = cu;
  attnv_views av = views_to_abi(v);
  av.struct_size = static_cast<std::uint32_t>(offsetof(attnv_views, cu_seqlens_q));
  EXPECT_EQ(views_from_abi(av, DType::f32).cu_seqlens_q, nullptr);
  EXPECT_EQ(views_from_abi(av, DType::f32).cu_seqlens_k, nullptr);
  av.struct_size = sizeof(attnv_views);
  EXPECT_EQ(views_from_abi(av, DType::f32).cu_seqlens_q, cu);
  EXPECT_EQ(views_from_abi(av, DType::f32).cu_seqlens_k, cu);
}

TEST(AbiVersion, AttnvFillsStructSizeOfWhatItPasses) {
  Problem p;
  p.shape = {1, 2, 2, 3, 4, 8, 8};
  EXPECT_EQ(problem_to_abi(p).struct_size, sizeof(attnv_problem));
  EXPECT_EQ(views_to_abi(KernelViews{}).struct_size, sizeof(attnv_views));
  EXPECT_EQ(decode_views_to_abi(DecodeViews{}).struct_size, sizeof(attnv_decode_views));
  EXPECT_EQ(decode_from_slots(attnv_views{}).struct_size, sizeof(attnv_decode_views));
  EXPECT_EQ(decode_in_slots(attnv_decode_views{}, problem_to_abi(p)).struct_size, sizeof(attnv_views));
}

// A paged cache reaches only a plugin that can know it. A sender whose structs end before
// page_size and block_table (an attnv built before them) describes contiguous caches; a
// plugin's struct_size says nothing of them, but its caps do: a plugin built against a header
// without ATTNV_CAP_PAGED_KV cannot set the bit, so attnv never draws a paged problem for it
// (Capabilities::unsupported names "paged KV cache"); one that sets it has a decode.
TEST(AbiVersion, AnOlderStructNeverCarriesAPagedCache) {
  Problem p;
  p.shape = {1, 2, 2, 1, 8, 8, 8};
  p.page_size = 4;
  attnv_problem older = problem_to_abi(p);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, page_size) + sizeof(older.page_size) - 1);
  EXPECT_EQ(problem_from_abi(older).page_size, 0);
  older.struct_size = static_cast<std::uint32_t>(offsetof(attnv_problem, page_size) + sizeof(older.page_size));
  EXPECT_EQ(problem_from_abi(older).page_size, 4);

  const std::int64_t table[2] = {1, 0};
  attnv_decode_views d{};
  d.block_table = table;
  d.struct_size = static_cast<std::uint32_t>(offsetof(attnv_decode_views, block_table));
  EXPECT_EQ(decode_views_from_abi(d, DType::f32).block_table, nullptr);
  EXPECT_EQ(decode_in_slots(d, problem_to_abi(p)).dout.data, nullptr);

  attnv_kernel k = good_v2();
  const Capabilities unaware = caps_from_abi(k.caps | ATTNV_CAP_DECODE, k.dtypes);
  EXPECT_EQ(unaware.unsupported(p), "paged KV cache");
  k.caps |= ATTNV_CAP_PAGED_KV | ATTNV_CAP_DECODE;
  k.decode = dec;
  EXPECT_TRUE(check_kernel(k, "plugin p").empty());
  EXPECT_TRUE(caps_from_abi(k.caps, k.dtypes).paged_kv);
}

}  // namespace
}  // namespace attnv::plugin
