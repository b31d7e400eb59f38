// read_declaration: the parent believes nothing in the worker's Hello it has not checked.
#include "declaration.h"

#include <gtest/gtest.h>

#include <cstring>

#include "problem/error.h"

namespace attnv::plugin {
namespace {

wire::Hello good_hello() {
  wire::Hello h;
  std::snprintf(h.name, sizeof h.name, "%s", "flash_cpu");
  std::snprintf(h.version, sizeof h.version, "%s", "1.2");
  h.dtypes = ATTNV_DTYPE_BIT(ATTNV_F32) | ATTNV_DTYPE_BIT(ATTNV_BF16);
  h.caps = ATTNV_CAP_GQA | ATTNV_CAP_LSE | ATTNV_CAP_DECODE;
  h.abi_version = 2;
  h.has_supports = 1;
  h.has_precision = 1;
  // f32 as a version-1 plugin fills it (struct_size 0, no stages: whatever lies there is not
  // read); bf16 with the stages (ggml-like: P.V accumulated in bf16).
  h.precision[ATTNV_F32] = attnv_precision{ATTNV_F32, ATTNV_F32, ATTNV_F32, 0, 0, 2.0, 77, 77, 77, 77, 77};
  h.precision[ATTNV_BF16] = attnv_precision{ATTNV_F32, ATTNV_BF16, ATTNV_BF16, sizeof(attnv_precision), 64, 2.0,
                                            ATTNV_STAGE_AS_ACCUM, ATTNV_STAGE_AS_ACCUM, ATTNV_STAGE_AS_ACCUM,
                                            ATTNV_BF16, 0};
  return h;
}

std::string error_of(const wire::Hello& h) {
  try {
    (void)read_declaration(h, "plugin /x/k.so");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The paged KV cache needs decode, in the Hello as in the plugin's struct.
TEST(Declaration, PagedKvNeedsDecode) {
  wire::Hello h = good_hello();
  h.caps |= ATTNV_CAP_PAGED_KV;
  EXPECT_TRUE(read_declaration(h, "plugin /x/k.so").caps.paged_kv);
  h.caps &= ~ATTNV_CAP_DECODE;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: declares ATTNV_CAP_PAGED_KV without ATTNV_CAP_DECODE (a paged KV cache is a "
                         "decode call's)");
}

TEST(Declaration, ReadsAWellFormedHello) {
  const Declaration d = read_declaration(good_hello(), "plugin /x/k.so");
  EXPECT_EQ(d.name, "flash_cpu");
  EXPECT_EQ(d.version, "1.2");
  EXPECT_TRUE(d.caps.gqa);
  EXPECT_TRUE(d.caps.lse);
  EXPECT_FALSE(d.caps.backward);
  EXPECT_TRUE(d.decode);
  EXPECT_EQ(d.abi_version, 2u);
  EXPECT_TRUE(d.has_supports);
  EXPECT_EQ(d.caps.dtypes, (std::vector<DType>{DType::f32, DType::bf16}));
  EXPECT_EQ(d.precision[ATTNV_BF16].p_dtype, DType::bf16);
  EXPECT_EQ(d.precision[ATTNV_BF16].block, 64);
  // f64 is not declared: the natural model, whatever the Hello holds for it.
  EXPECT_EQ(d.precision[ATTNV_F64].accum, PrecisionModel::natural(DType::f64).accum);
  EXPECT_EQ(d.precision[ATTNV_F32].accum, DType::f32);
  EXPECT_FALSE(d.precision[ATTNV_F32].staged());
  EXPECT_FALSE(d.precision[ATTNV_F32].flush_subnormals);  // 77 lies there, past a version 1 struct: not read
  EXPECT_EQ(d.precision[ATTNV_BF16].pv, DType::bf16);
  EXPECT_EQ(d.precision[ATTNV_BF16].dot, std::nullopt);
}

TEST(Declaration, RefusesAStageThatIsNotADtype) {
  wire::Hello h = good_hello();
  h.precision[ATTNV_BF16].softmax = 9;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: precision model for bf16 has softmax = 9, not a dtype (ATTNV_F64/F32/F16/BF16)");
}

TEST(Declaration, RefusesTextWithoutItsTerminator) {
  wire::Hello h = good_hello();
  std::memset(h.name, 'a', sizeof h.name);
  EXPECT_EQ(error_of(h), "plugin /x/k.so: the worker sent a name that is not NUL-terminated within 256 bytes");
  h = good_hello();
  std::memset(h.version, 'v', sizeof h.version);
  EXPECT_EQ(error_of(h), "plugin /x/k.so: the worker sent a version that is not NUL-terminated within 256 bytes");
  std::memset(h.text, 'x', sizeof h.text);
  EXPECT_EQ(received_text(h.text).size(), sizeof h.text);
}

TEST(Declaration, RefusesWhatTheWorkerShouldHaveRefused) {
  wire::Hello h = good_hello();
  h.magic = 0;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: the worker's hello has a bad magic number");
  h = good_hello();
  h.name[0] = '\0';
  EXPECT_EQ(error_of(h), "plugin /x/k.so: name '' is empty or has spaces");
  h = good_hello();
  h.caps |= 1u << 30;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: unknown capability bits 0x40000000");
  h = good_hello();
  h.dtypes = 0;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: declares no dtype");
  h = good_hello();
  h.dtypes |= ATTNV_DTYPE_BIT(ATTNV_U8);
  EXPECT_NE(error_of(h).find("not storage dtypes"), std::string::npos);
  h = good_hello();
  h.abi_version = 7;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: the worker sent ABI version 7 (1 or 2)");
  h = good_hello();
  h.abi_version = 1;  // a version 1 struct has no supports()
  EXPECT_EQ(error_of(h), "plugin /x/k.so: the worker sent supports() for an ABI version 1 plugin");
  h.has_supports = 0;
  EXPECT_EQ(error_of(h), "");
  h = good_hello();
  h.precision_rc[ATTNV_BF16] = 3;
  EXPECT_EQ(error_of(h), "plugin /x/k.so: precision(bf16) returned 3 for a dtype it declares");
  h = good_hello();
  h.precision[ATTNV_BF16].exp_ulps = -1;
  EXPECT_NE(error_of(h), "");
  // A broken model for a dtype the plugin does not declare is never read.
  h = good_hello();
  h.precision[ATTNV_F16].block = -5;
  EXPECT_EQ(error_of(h), "");
}

}  // namespace
}  // namespace attnv::plugin
