// manifest.json parsing is strict and every message names the case (index and id) and the key.
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "io/manifest.h"
#include "io/manifest_schema.h"
#include "io/npy.h"
#include "io/tests/test_util.h"
#include "problem/features/registry.h"

namespace attnv::io {
namespace {

using test::throws_input_error;

const std::string kCase0 =
    R"({"id": "a/1", "dir": "c0", "dtype": "f16", "B": 1, "Hq": 4, "Hkv": 2, "Tq": 3, "Tk": 5, "Dk": 8, "Dv": 4,
        "scale": null, "softcap": null, "causal": true, "alignment": "bottom_right", "window": [2, -1],
        "mask": false, "bias": true, "kv_len": true, "dout": false})";

std::string manifest_with(const std::string& case_json, const std::string& extra_top = "") {
  return R"({"format": "attnv-exchange", "version": 1, )" + extra_top + R"("cases": [)" + kCase0 + ", " + case_json + "]}";
}

// kCase0 as case 1 with `from` replaced by `to` (the id becomes "b/2" and the dir "c1").
std::string edited(const std::string& from, const std::string& to) {
  std::string c = std::regex_replace(kCase0, std::regex("\"a/1\""), "\"b/2\"");
  c = std::regex_replace(c, std::regex("\"c0\""), "\"c1\"");
  const auto at = c.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) c.replace(at, from.size(), to);
  return manifest_with(c);
}

testing::AssertionResult rejects(const std::string& text, std::initializer_list<std::string> parts) {
  return throws_input_error([&] { parse_manifest(text, "m/manifest.json"); }, parts);
}

TEST(Manifest, ParsesEveryField) {
  const auto entries = parse_manifest(edited(R"("scale": null)", R"("scale": 0.125)"), "m/manifest.json");
  ASSERT_EQ(entries.size(), 2u);
  const ManifestEntry& e = entries[1];
  EXPECT_EQ(e.id, "b/2");
  EXPECT_EQ(e.dir, "c1");
  EXPECT_EQ(e.problem.dtype, DType::f16);
  EXPECT_EQ(e.problem.shape, (Shape{1, 4, 2, 3, 5, 8, 4}));
  EXPECT_EQ(e.problem.scale, 0.125);
  EXPECT_FALSE(e.problem.softcap.has_value());
  EXPECT_TRUE(e.problem.causal);
  EXPECT_EQ(e.problem.alignment, Alignment::bottom_right);
  EXPECT_EQ(e.problem.window, (Window{2, -1}));
  EXPECT_FALSE(e.problem.has_mask);
  EXPECT_TRUE(e.problem.has_bias);
  EXPECT_TRUE(e.problem.has_kv_len);
  EXPECT_FALSE(e.has_dout);
  EXPECT_TRUE(e.meta_json.empty());
}

TEST(Manifest, RenderThenParseIsTheIdentity) {
  auto entries = parse_manifest(edited(R"("softcap": null)", R"("softcap": 0.1, "meta": {"z": [1, {"y": null}], "a": "x"})"),
                                "m");
  entries[0].problem.scale = 1.0 / 3.0;  // needs all 17 digits to round-trip
  const auto again = parse_manifest(render_manifest(entries), "m");
  ASSERT_EQ(again.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(again[i].id, entries[i].id);
    EXPECT_EQ(again[i].dir, entries[i].dir);
    EXPECT_EQ(again[i].problem, entries[i].problem);
    EXPECT_EQ(again[i].has_dout, entries[i].has_dout);
    EXPECT_EQ(again[i].meta_json, entries[i].meta_json);
  }
  EXPECT_EQ(again[1].meta_json, R"({"a":"x","z":[1,{"y":null}]})");
}

TEST(Manifest, TopLevel) {
  EXPECT_TRUE(rejects("{", {"m/manifest.json: not valid JSON"}));
  EXPECT_TRUE(rejects("[]", {"the top level must be an object"}));
  EXPECT_TRUE(rejects(R"({"format": "attnv-exchange", "version": 1})", {"'cases' is missing"}));
  EXPECT_TRUE(rejects(R"({"format": "other", "version": 1, "cases": []})", {"\"format\" must be \"attnv-exchange\""}));
  EXPECT_TRUE(rejects(R"({"format": "attnv-exchange", "version": 2, "cases": []})", {"unsupported \"version\" 2"}));
  EXPECT_TRUE(rejects(R"({"format": "attnv-exchange", "version": "1", "cases": []})", {"unsupported \"version\" \"1\""}));
  EXPECT_TRUE(rejects(R"({"format": "attnv-exchange", "version": 1, "cases": {}})", {"\"cases\" must be an array"}));
  EXPECT_TRUE(rejects(manifest_with(kCase0, R"("extra": 1, )"), {"unknown top-level key 'extra'"}));
  EXPECT_TRUE(rejects(R"({"format": "attnv-exchange", "version": 1, "version": 1, "cases": []})", {"'version' appears twice"}));
  EXPECT_EQ(parse_manifest(R"({"format": "attnv-exchange", "version": 1, "meta": {"tool": "x"}, "cases": []})", "m").size(), 0u);
  // nlohmann alone would stop at a NUL byte and accept whatever follows it.
  const std::string valid = R"({"format": "attnv-exchange", "version": 1, "cases": []})";
  EXPECT_TRUE(rejects(valid + std::string(1, '\0') + "junk", {"not valid JSON: a NUL byte at offset 55"}));
}

TEST(Manifest, CaseKeysNameTheCaseAndTheKey) {
  EXPECT_TRUE(rejects(edited(R"("causal": true)", R"("casual": true)"), {"case 1 (id 'b/2')", "key 'casual': unknown key"}));
  EXPECT_TRUE(rejects(edited(R"("causal": true, )", ""), {"case 1 (id 'b/2')", "key 'causal': missing"}));
  EXPECT_TRUE(rejects(edited(R"("Tq": 3)", R"("Tq": "3")"), {"case 1 (id 'b/2')", "key 'Tq': expected an integer, got a string"}));
  EXPECT_TRUE(rejects(edited(R"("Tq": 3)", R"("Tq": 3.0)"), {"key 'Tq': expected an integer, got a number"}));
  EXPECT_TRUE(rejects(edited(R"("Tq": 3)", R"("Tq": 18446744073709551615)"), {"key 'Tq': out of range"}));
  EXPECT_TRUE(rejects(edited(R"("causal": true)", R"("causal": 1)"), {"key 'causal': expected true or false"}));
  EXPECT_TRUE(rejects(edited(R"("scale": null)", R"("scale": "0.5")"), {"key 'scale': expected null or a number"}));
  EXPECT_TRUE(rejects(edited(R"("dtype": "f16")", R"("dtype": "float16")"), {"key 'dtype': 'float16' is not one of"}));
  EXPECT_TRUE(rejects(edited(R"("alignment": "bottom_right")", R"("alignment": "bottom-right")"), {"key 'alignment'"}));
  EXPECT_TRUE(rejects(edited(R"("window": [2, -1])", R"("window": [2])"), {"key 'window': expected [left, right]"}));
  EXPECT_TRUE(rejects(edited(R"("window": [2, -1])", R"("window": [2, null])"), {"key 'window'"}));
  EXPECT_TRUE(rejects(edited(R"("dout": false)", R"("dout": false, "meta": 3)"), {"key 'meta': expected an object"}));
  EXPECT_TRUE(rejects(edited(R"("id": "b/2")", R"("id": "")"), {"case 1", "key 'id': must not be empty"}));
  EXPECT_TRUE(rejects(edited(R"("id": "b/2")", R"("id": 7)"), {"case 1: key 'id': expected a string, got an integer"}));
  EXPECT_TRUE(rejects(edited(R"("B": 1)", R"("B": 1, "B": 2)"), {"'B' appears twice"}));
  EXPECT_TRUE(rejects(manifest_with("3"), {"case 1: expected an object, got an integer"}));
}

// Integers beyond 64 bits are out of range, whatever JSON type nlohmann gives them (unsigned up
// to 2^64 - 1, a double beyond); a fraction or 3.0 is still the wrong type.
TEST(Manifest, IntegersBeyond64BitsAreOutOfRange) {
  for (const char* big : {"9223372036854775808", "18446744073709551616", "-9223372036854775809", "1e19",
                          "123456789012345678901234567890"}) {
    EXPECT_TRUE(rejects(edited(R"("Tk": 5)", std::string(R"("Tk": )") + big), {"case 1 (id 'b/2')", "key 'Tk': out of range"}))
        << big;
    EXPECT_TRUE(rejects(edited(R"("window": [2, -1])", std::string(R"("window": [2, )") + big + "]"),
                        {"key 'window': right side out of range"}))
        << big;
  }
  EXPECT_TRUE(rejects(edited(R"("window": [2, -1])", R"("window": [18446744073709551616, 0])"),
                      {"key 'window': left side out of range"}));
  EXPECT_TRUE(rejects(edited(R"("B": 1)", R"("B": 9.2e18)"), {"key 'B': expected an integer, got a number"}));
  EXPECT_TRUE(rejects(edited(R"("B": 1)", R"("B": 2.5)"), {"key 'B': expected an integer, got a number"}));
  EXPECT_EQ(parse_manifest(edited(R"("window": [2, -1])", R"("window": [9223372036854775807, -1])"), "m")[1].problem.window.left,
            9223372036854775807);
}

// No tensor of a case may exceed kMaxTensorElements, checked from the shapes alone: small
// inputs can imply a huge output, and nothing should be allocated before the refusal.
TEST(Manifest, TensorsAboveTheElementLimitAreRefused) {
  static_assert(kMaxTensorElements == std::int64_t{1} << 31);
  // q = B*Hq*Tq*Dk = 1*4*2^27*4 = 2^31, out = 1*4*2^27*4 = 2^31: exactly at the limit.
  std::string at_limit = edited(R"("Tq": 3)", R"("Tq": 134217728)");
  at_limit.replace(at_limit.rfind(R"("Dk": 8)"), 7, R"("Dk": 4)");
  EXPECT_EQ(parse_manifest(at_limit, "m").size(), 2u);
  std::string over = at_limit;
  over.replace(over.rfind(R"("Dk": 4)"), 7, R"("Dk": 5)");
  EXPECT_TRUE(rejects(over, {"case 1 (id 'b/2')", "q [B,Hq,Tq,Dk] = (1, 4, 134217728, 5) has 2684354560 elements",
                             "21474836480 bytes as f64", "limit of 2147483648 elements per tensor"}));
  // Inputs of a few MB, an output of 2^42 elements (32 TiB).
  std::string huge_out = edited(R"("Tq": 3)", R"("Tq": 1048576)");
  huge_out.replace(huge_out.rfind(R"("Dv": 4)"), 7, R"("Dv": 1048576)");
  huge_out.replace(huge_out.rfind(R"("Dk": 8)"), 7, R"("Dk": 1)");
  huge_out.replace(huge_out.rfind(R"("bias": true)"), 12, R"("bias": false)");
  EXPECT_TRUE(rejects(huge_out, {"out [B,Hq,Tq,Dv] = (1, 4, 1048576, 1048576) has 4398046511104 elements",
                                 "35184372088832 bytes"}));
  // The [Tq,Tk] tensor counts only when the case has a mask or a bias.
  std::string wide_bias = edited(R"("Tq": 3)", R"("Tq": 65536)");
  wide_bias.replace(wide_bias.rfind(R"("Tk": 5)"), 7, R"("Tk": 65536)");
  wide_bias.replace(wide_bias.rfind(R"("Dk": 8)"), 7, R"("Dk": 1)");
  wide_bias.replace(wide_bias.rfind(R"("Dv": 4)"), 7, R"("Dv": 1)");
  EXPECT_TRUE(rejects(wide_bias, {"bias [Tq,Tk] = (65536, 65536) has 4294967296 elements"}));
  wide_bias.replace(wide_bias.rfind(R"("bias": true)"), 12, R"("bias": false)");
  EXPECT_EQ(parse_manifest(wide_bias, "m").size(), 2u);
}

TEST(Manifest, ControlCharactersInIdsAndKeysAreNotEchoed) {
  EXPECT_TRUE(rejects(edited(R"("causal": true)", R"("cau\u001b[2Jsal": true)"), {"key 'cau?[2Jsal': unknown key"}));
  EXPECT_TRUE(rejects(edited(R"("id": "b/2", "dir": "c1")", R"("id": "b\r\u0007", "dir": "../x")"),
                      {"case 1 (id 'b?" "?')", "key 'dir'"}));
}

TEST(Manifest, MaskAndBiasExtentsAreOptionalBooleans) {
  auto entries = parse_manifest(edited(R"("bias": true)", R"("bias": true, "bias_heads": true, "bias_batch": false)"), "m");
  EXPECT_EQ(entries[1].problem.bias_dims, (Leading{false, true}));
  EXPECT_EQ(entries[0].problem.bias_dims, Leading{});  // left out: [Tq, Tk]
  const std::string text = render_manifest(entries);
  EXPECT_NE(text.find("\"bias_heads\": true"), std::string::npos);
  EXPECT_EQ(text.find("bias_batch"), std::string::npos);  // written only when true
  EXPECT_EQ(parse_manifest(text, "m")[1].problem, entries[1].problem);
  EXPECT_TRUE(rejects(edited(R"("bias": true)", R"("bias": true, "bias_heads": 1)"), {"case 1 (id 'b/2')", "bias_heads"}));
  EXPECT_TRUE(rejects(edited(R"("mask": false)", R"("mask": false, "mask_batch": true)"),
                      {"case 1 (id 'b/2')", "mask_dims gives the mask per-batch or per-head extents, but the problem has no mask"}));
}

// Each later option (problem/features/) is a key a manifest may leave out, written only
// when set; one that a case folder cannot hold (page_size) is refused as an unknown key.
TEST(Manifest, LaterOptionsAreKeysWrittenOnlyWhenSet) {
  int in_manifest = 0;
  for (const ProblemOption& o : kProblemOptions) {
    ManifestEntry e{"a", "c0", {}, false, ""};
    e.problem.has_mask = e.problem.has_bias = true;  // the extents are written only with their tensor
    const std::string key = std::string(1, '"').append(o.key).append(1, '"');
    EXPECT_EQ(render_manifest({e}).find(key), std::string::npos) << o.key;
    o.set(e.problem, 3);
    ASSERT_NE(o.get(e.problem), 0) << o.key;
    const std::string text = render_manifest({e});
    if (!o.in_manifest) {
      EXPECT_EQ(text.find(key), std::string::npos) << o.key;
      EXPECT_TRUE(rejects(edited(R"("dout": false)", R"("dout": false, )" + key + ": 4"), {"case 1 (id 'b/2')", "unknown key"}));
      continue;
    }
    ++in_manifest;
    const std::string value = o.kind == ProblemOption::Kind::flag ? "true" : "3";
    EXPECT_NE(text.find(key + ": " + value), std::string::npos) << text;
  }
  EXPECT_EQ(in_manifest + 1, static_cast<int>(optional_case_keys().size()));  // and "meta"
}

// The schema (`attnv schema manifest`) says what the reader reads: the same required keys, and no
// key it does not know. (That it accepts what render_manifest writes, every option set, is
// checked with the real validator in report/tests/report_test.cpp.)
TEST(Manifest, TheSchemaNamesTheKeysTheReaderReads) {
  const nlohmann::json schema = nlohmann::json::parse(manifest_schema());
  const nlohmann::json& c = schema.at("$defs").at("case");
  const std::vector<std::string> required = c.at("required").get<std::vector<std::string>>();
  EXPECT_EQ(required, required_case_keys());
  std::set<std::string> expected(required.begin(), required.end());
  for (const std::string& k : optional_case_keys()) expected.insert(k);
  std::set<std::string> in_schema;
  for (const auto& [key, value] : c.at("properties").items()) in_schema.insert(key);
  EXPECT_EQ(in_schema, expected);
}

// Each later option's key comes from its feature row, typed by its kind and described by its doc;
// a template that writes one itself is refused (a key is written in one place).
TEST(Manifest, TheSchemaTakesEachLaterOptionFromItsRow) {
  const nlohmann::json keys = nlohmann::json::parse(manifest_schema()).at("$defs").at("case").at("properties");
  for (const ProblemOption& o : kProblemOptions) {
    if (!o.in_manifest) {
      EXPECT_FALSE(keys.contains(std::string(o.key))) << o.key;
      continue;
    }
    const nlohmann::json& k = keys.at(std::string(o.key));
    EXPECT_EQ(k.at("type"), o.kind == ProblemOption::Kind::flag ? "boolean" : "integer") << o.key;
    EXPECT_EQ(k.at("description").get<std::string>().rfind(std::string(o.doc) + " Optional; absent means ", 0), 0u) << o.key;
  }
  const std::string base = R"({"$defs": {"case": {"properties": {"id": {}}}}})";
  EXPECT_NO_THROW(manifest_schema(base, kProblemOptions));
  const std::string naming_sinks = R"({"$defs": {"case": {"properties": {"id": {}, "sinks": {}}}}})";
  EXPECT_THROW(manifest_schema(naming_sinks, kProblemOptions), std::logic_error);
}

TEST(Manifest, ProblemChecksNameTheCase) {
  EXPECT_TRUE(rejects(edited(R"("Hkv": 2)", R"("Hkv": 3)"), {"case 1 (id 'b/2')", "Hq (4) must be a multiple of Hkv (3)"}));
  EXPECT_TRUE(rejects(edited(R"("Tk": 5)", R"("Tk": 0)"), {"case 1 (id 'b/2')", "Tk must be >= 1"}));
  EXPECT_TRUE(rejects(edited(R"("scale": null)", R"("scale": -1)"), {"scale must be finite and > 0"}));
  EXPECT_TRUE(rejects(edited(R"("window": [2, -1])", R"("window": [-5, -1])"), {"window sides"}));
  EXPECT_TRUE(rejects(edited(R"("B": 1)", R"("B": 4611686018427387904)"), {"overflows 64 bits"}));
}

TEST(Manifest, UniqueIdsAndDirs) {
  EXPECT_TRUE(rejects(manifest_with(kCase0), {"cases 0 and 1 have the same id 'a/1'"}));
  EXPECT_TRUE(rejects(edited(R"("dir": "c1")", R"("dir": "c0")"), {"cases 0 and 1 have the same dir 'c0'"}));
}

TEST(Manifest, UnsafeDirsAreRejected) {
  const std::pair<std::string, std::string> bad[] = {
      {"../x", "'..'"}, {"a/../../x", "'..'"}, {"..", "'..'"}, {"/etc", "absolute"}, {"", "empty"},
      {"a//b", "empty path segment"}, {"./a", "'.'"}, {"a/", "empty path segment"}, {"a\\\\..\\\\b", "backslash"},
      {"a\\u0000b", "control character"}};
  for (const auto& [dir, why] : bad)
    EXPECT_TRUE(rejects(edited(R"("dir": "c1")", "\"dir\": \"" + dir + "\""), {"case 1 (id 'b/2')", "key 'dir'", why})) << dir;
  EXPECT_EQ(parse_manifest(edited(R"("dir": "c1")", R"("dir": "sub/c1")"), "m")[1].dir, "sub/c1");
  EXPECT_EQ(parse_manifest(edited(R"("dir": "c1")", R"("dir": "..c1.")"), "m")[1].dir, "..c1.");
}

TEST(Manifest, FolderNamesFromIdsAreSafe) {
  EXPECT_EQ(case_folder_name(7, "near_ties/17"), "0007_near_ties_17");
  EXPECT_EQ(case_folder_name(3, "../../etc"), "0003_.._.._etc");
  EXPECT_EQ(case_folder_name(12345, ""), "12345");
  EXPECT_EQ(case_folder_name(0, "a b\\c\n"), "0000_a_b_c_");
  for (const char* id : {"../../etc", "/abs", "..", ".", "a/../b", "x\\y", ""})
    EXPECT_EQ(unsafe_dir_reason(case_folder_name(1, id)), "") << id;
  EXPECT_LE(case_folder_name(1, std::string(1000, 'a')).size(), 90u);
}

}  // namespace
}  // namespace attnv::io
