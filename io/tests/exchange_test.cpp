// Whole exchange folders: round trips of every dtype and option, and every way a folder written
// by another program can be wrong.
#include <cmath>
#include <fstream>

#include "io/exchange.h"
#include "io/manifest.h"
#include "io/npy.h"
#include "io/tests/test_util.h"
#include "problem/validate.h"

namespace attnv::io {
namespace {

using test::ScratchDir;
using test::throws_input_error;
namespace fs = std::filesystem;

// A hand-built case with distinct values in every tensor (families.cpp may not exist yet).
Case sample_case(DType t, const std::string& id, bool options) {
  Problem p;
  p.shape = {2, 4, 2, 3, 5, 6, 7};
  p.dtype = t;
  if (options) {
    p.scale = 0.3;
    p.softcap = 20.0;
    p.causal = true;
    p.alignment = Alignment::bottom_right;
    p.window = {2, 0};
    p.has_mask = p.has_bias = p.has_kv_len = p.has_sinks = true;
  }
  Case c = make_zero_case(p, options);
  c.id = id;
  auto fill = [](std::vector<double>& v, double salt) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i) * 0.7 + salt) * 3.0;
  };
  fill(c.q, 0.1);
  fill(c.k, 0.2);
  fill(c.v, 0.3);
  fill(c.dout, 0.4);
  fill(c.bias, 0.5);
  fill(c.sinks, 0.6);
  if (!c.bias.empty()) c.bias[3] = -HUGE_VAL;  // a bias of -inf hides a key
  for (std::size_t i = 0; i < c.mask.size(); ++i) c.mask[i] = (i % 3) != 1;
  if (!c.kv_len.empty()) c.kv_len = {5, 2};
  round_to_storage(c);
  return c;
}

void expect_same(const Case& a, const Case& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.problem, b.problem) << describe(a.problem) << " vs " << describe(b.problem);
  EXPECT_TRUE(test::same_bits(a.q, b.q));
  EXPECT_TRUE(test::same_bits(a.k, b.k));
  EXPECT_TRUE(test::same_bits(a.v, b.v));
  EXPECT_TRUE(test::same_bits(a.bias, b.bias));
  EXPECT_TRUE(test::same_bits(a.sinks, b.sinks));
  EXPECT_TRUE(test::same_bits(a.dout, b.dout));
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.kv_len, b.kv_len);
}

TEST(Exchange, RoundTripOfEveryDtypeWithAndWithoutOptions) {
  ScratchDir dir;
  std::vector<Case> cases;
  for (DType t : kAllDTypes)
    for (bool options : {false, true})
      cases.push_back(sample_case(t, std::string(dtype_name(t)) + (options ? "/options" : "/plain"), options));
  cases[0].q[1] = std::nan("");  // NaN in q is accepted at read time (visibility decides)
  cases[0].k[2] = -HUGE_VAL;
  for (const Case& c : cases) ASSERT_TRUE(check_case(c).empty()) << c.id;
  write_exchange(dir.path(), cases);
  const std::vector<Case> back = read_exchange(dir.path());
  ASSERT_EQ(back.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].id);
    expect_same(cases[i], back[i]);
  }
  // bf16 tensors are '<f4' on disk; mask is bool, kv_len int64.
  const fs::path bf16_folder = case_dir(dir.path(), cases[7]);
  EXPECT_EQ(read_npy(bf16_folder / "q.npy").type, NpyType::f32);
  EXPECT_EQ(read_npy(bf16_folder / "mask.npy").type, NpyType::b1);
  EXPECT_EQ(read_npy(bf16_folder / "kv_len.npy").type, NpyType::i64);
  EXPECT_EQ(read_npy(case_dir(dir.path(), cases[4]) / "q.npy").type, NpyType::f16);
  // "sinks" is written only when true, so manifests of cases without sinks are unchanged.
  std::ifstream manifest(dir.path() / "manifest.json");
  const std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("\"sinks\": false"), std::string::npos);
  EXPECT_NE(text.find("\"sinks\": true"), std::string::npos);
  EXPECT_TRUE(fs::exists(case_dir(dir.path(), cases[1]) / "sinks.npy"));
  EXPECT_FALSE(fs::exists(case_dir(dir.path(), cases[0]) / "sinks.npy"));
}

// Evidence folders of packed cases: the bounds travel as cu_seqlens_q/k.npy (int64) with the
// manifest's varlen_sequences, written only when packed.
TEST(Exchange, PackedSequenceBoundsRoundTrip) {
  ScratchDir dir;
  Case packed = sample_case(DType::f32, "packed", false);
  packed.problem.shape.B = 1;
  packed.problem.varlen_sequences = 3;
  packed = make_zero_case(packed.problem);
  packed.id = "packed";
  packed.cu_seqlens_q = {0, 2, 2, 3};
  packed.cu_seqlens_k = {0, 0, 4, 5};
  ASSERT_TRUE(check_case(packed).empty());
  write_exchange(dir.path(), std::vector<Case>{packed, sample_case(DType::f32, "plain", false)});
  const std::vector<Case> back = read_exchange(dir.path());
  ASSERT_EQ(back.size(), 2u);
  expect_same(packed, back[0]);
  EXPECT_EQ(back[0].cu_seqlens_q, packed.cu_seqlens_q);
  EXPECT_EQ(back[0].cu_seqlens_k, packed.cu_seqlens_k);
  EXPECT_EQ(read_npy(case_dir(dir.path(), packed) / "cu_seqlens_k.npy").type, NpyType::i64);
  EXPECT_FALSE(fs::exists(case_dir(dir.path(), back[1]) / "cu_seqlens_q.npy"));
  EXPECT_EQ(back[1].problem.varlen_sequences, 0);
  // Bounds a program or a hand edit broke are an input error naming the array and the index
  // (the validation of in-process cases, problem/validate.cpp), never a case judged on them.
  const fs::path bounds_q = case_dir(dir.path(), packed) / "cu_seqlens_q.npy";
  const std::int64_t dims[] = {4};
  const std::pair<std::vector<std::int64_t>, std::string> bad[] = {
      {{1, 2, 2, 3}, "cu_seqlens_q[0] = 1, expected 0"},
      {{0, 2, 1, 3}, "cu_seqlens_q decreases: cu_seqlens_q[2] = 1 < cu_seqlens_q[1] = 2"},
      {{0, 1, 1, 2}, "cu_seqlens_q[3] = 2, expected Tq = 3 (the packed total)"}};
  for (const auto& [values, message] : bad) {
    write_npy_int64(bounds_q, dims, values);
    EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); }, {"invalid case", message})) << message;
  }
}

// Per-sequence key lengths: kv_len.npy holds [S] entries with packed sequences (not [B]), read
// back as written; a [B]-sized file, or a length beyond its sequence's keys, is a named error.
TEST(Exchange, PerSequenceKeyLengthsAreSEntries) {
  ScratchDir dir;
  Problem p = sample_case(DType::f32, "seqused", false).problem;
  p.shape.B = 1;
  p.varlen_sequences = 3;
  p.has_kv_len = true;
  Case c = make_zero_case(p);
  c.id = "seqused";
  c.cu_seqlens_q = {0, 2, 2, 3};
  c.cu_seqlens_k = {0, 0, 4, 5};
  c.kv_len = {0, 3, 1};
  ASSERT_TRUE(check_case(c).empty()) << check_case(c)[0];
  write_exchange(dir.path(), std::vector<Case>{c});
  const fs::path file = case_dir(dir.path(), c) / "kv_len.npy";
  EXPECT_EQ(read_npy(file).shape, std::vector<std::int64_t>{3});
  const std::vector<Case> back = read_exchange(dir.path());
  ASSERT_EQ(back.size(), 1u);
  expect_same(c, back[0]);
  EXPECT_EQ(back[0].kv_len, c.kv_len);
  const std::int64_t one[] = {1}, three[] = {3};
  write_npy_int64(file, one, std::vector<std::int64_t>{5});
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); }, {"kv_len.npy", "expected [S] = (3"}));
  write_npy_int64(file, three, std::vector<std::int64_t>{0, 5, 1});
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"invalid case", "kv_len[1] = 5 is outside [0, 4], sequence 1's keys"}));
}

TEST(Exchange, MetaAndChosenDirsArePreserved) {
  ScratchDir dir;
  std::vector<ExchangeCase> xs = {{sample_case(DType::f32, "x", false), "nested/x", R"({"note":"hi","n":[1,2]})"},
                                  {sample_case(DType::f64, "y", true), "", ""}};
  write_exchange(dir.path(), xs);
  const auto back = read_exchange_cases(dir.path());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].dir, "nested/x");
  EXPECT_EQ(back[0].meta_json, R"({"n":[1,2],"note":"hi"})");
  EXPECT_EQ(back[1].dir, "0001_y");
  EXPECT_EQ(back[1].meta_json, "");
  EXPECT_EQ(case_dir(dir.path(), back[0]), dir / "nested/x");
  EXPECT_EQ(case_dir(dir.path(), back[1].c), dir / "0001_y");
  EXPECT_TRUE(throws_input_error([&] { case_dir(dir.path(), sample_case(DType::f32, "zz", false)); }, {"no case has the id 'zz'"}));
}

TEST(Exchange, IdsCannotEscapeTheFolder) {
  ScratchDir root;
  const fs::path dir = root / "ex";
  write_exchange(dir, std::vector<Case>{sample_case(DType::f32, "../../etc", false), sample_case(DType::f32, "/abs", false)});
  EXPECT_EQ(test::file_names(root.path()), std::vector<std::string>{"ex"});
  EXPECT_EQ(test::file_names(dir), (std::vector<std::string>{"0000_.._.._etc", "0001__abs", "manifest.json"}));
  EXPECT_EQ(read_exchange(dir)[0].id, "../../etc");
  // An explicit unsafe dir is refused before anything is written.
  const std::vector<ExchangeCase> bad = {{sample_case(DType::f32, "a", false), "../outside", ""}};
  EXPECT_TRUE(throws_input_error([&] { write_exchange(root / "ex2", bad); }, {"case 0 (id 'a')", "'..'"}));
  EXPECT_FALSE(fs::exists(root / "ex2"));
  EXPECT_FALSE(fs::exists(root / "outside"));
}

// Rewrites the manifest of `dir` with `from` replaced by `to` (first occurrence).
void edit_manifest(const fs::path& dir, const std::string& from, const std::string& to) {
  std::ifstream in(dir / "manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  std::ofstream(dir / "manifest.json") << text;
}

TEST(Exchange, ManifestDirsCannotEscapeTheFolder) {
  ScratchDir root;
  const fs::path dir = root / "ex";
  write_exchange(dir, std::vector<Case>{sample_case(DType::f32, "a", false)});
  fs::create_directories(root / "outside");
  fs::copy(dir / "0000_a", root / "outside", fs::copy_options::recursive);
  edit_manifest(dir, "\"0000_a\"", "\"../outside\"");
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir); }, {"case 0 (id 'a')", "key 'dir'", "contains '..'"}));
  edit_manifest(dir, "\"../outside\"", std::string("\"") + (root / "outside").string() + "\"");
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir); }, {"absolute path"}));
  // A symlink inside the folder that points outside it is refused too.
  fs::create_directory_symlink(root / "outside", dir / "link");
  edit_manifest(dir, std::string("\"") + (root / "outside").string() + "\"", "\"link\"");
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir); }, {"case 0 (id 'a')", "resolves to", "outside"}));
}

class BrokenFolder : public testing::Test {
 protected:
  void SetUp() override {
    c_ = sample_case(DType::f16, "f16/opt", true);
    write_exchange(dir_.path(), std::vector<Case>{c_});
    folder_ = case_dir(dir_.path(), c_);
  }
  testing::AssertionResult read_fails(std::initializer_list<std::string> parts) {
    return throws_input_error([&] { read_exchange(dir_.path()); }, parts);
  }
  std::vector<std::int64_t> q_shape() const { return {2, 4, 3, 6}; }
  ScratchDir dir_;
  Case c_;
  fs::path folder_;
};

TEST_F(BrokenFolder, ShapeMismatch) {
  write_npy(folder_ / "q.npy", std::vector<std::int64_t>{2, 4, 3, 5}, NpyType::f16, std::vector<double>(120, 0.0));
  EXPECT_TRUE(read_fails({"q.npy: shape (2, 4, 3, 5), expected [B,Hq,Tq,Dk] = (2, 4, 3, 6)"}));
}

TEST_F(BrokenFolder, WiderFloatMustHoldStorageValues) {
  std::vector<double> q = c_.q;
  write_npy(folder_ / "q.npy", q_shape(), NpyType::f64, q);
  EXPECT_EQ(read_exchange(dir_.path())[0].q, c_.q);  // f64 holding f16 values is fine
  q[(1 * 4 + 2) * 3 * 6 + 2 * 6 + 3] = static_cast<double>(0.1f);
  write_npy(folder_ / "q.npy", q_shape(), NpyType::f32, q);
  EXPECT_TRUE(read_fails({"q.npy: element [1,2,2,3] = 0.10000000149011612 is not representable in f16"}));
}

TEST_F(BrokenFolder, NarrowerOrNonFloatTensorsAreRejected) {
  write_npy_int64(folder_ / "v.npy", std::vector<std::int64_t>{2, 2, 5, 7}, std::vector<std::int64_t>(140, 0));
  EXPECT_TRUE(read_fails({"v.npy: holds <i8; expected floats of the case dtype f16"}));
  write_file_atomic(folder_ / "v.npy", encode_npy_ints(std::vector<std::int64_t>{2, 2, 5, 7}, NpyType::u16,
                                                       std::vector<std::int64_t>(140, 0), "v"));
  EXPECT_TRUE(read_fails({"v.npy: holds <u2, which attnv reads only as raw bf16 bits, but the case dtype is f16"}));
}

TEST_F(BrokenFolder, MaskMustBeZeroOrOne) {
  std::vector<std::int64_t> m(15, 1);
  m[7] = 2;
  write_file_atomic(folder_ / "mask.npy", encode_npy_ints(std::vector<std::int64_t>{3, 5}, NpyType::u8, m, "m"));
  EXPECT_TRUE(read_fails({"mask.npy: element [1,2] = 2 is not 0 or 1"}));
  m[7] = 0;
  write_file_atomic(folder_ / "mask.npy", encode_npy_ints(std::vector<std::int64_t>{3, 5}, NpyType::u8, m, "m"));
  EXPECT_EQ(read_exchange(dir_.path())[0].mask[7], 0);  // u8 0/1 is accepted
  write_file_atomic(folder_ / "mask.npy", encode_npy_ints(std::vector<std::int64_t>{3, 5}, NpyType::i32, m, "m"));
  EXPECT_TRUE(read_fails({"mask.npy: holds <i4; a mask must be bool"}));
}

TEST_F(BrokenFolder, KvLen) {
  write_file_atomic(folder_ / "kv_len.npy", encode_npy_ints(std::vector<std::int64_t>{2}, NpyType::i32, std::vector<std::int64_t>{4, 1}, "k"));
  EXPECT_EQ(read_exchange(dir_.path())[0].kv_len, (std::vector<std::int64_t>{4, 1}));  // int32 is accepted
  write_npy_int64(folder_ / "kv_len.npy", std::vector<std::int64_t>{2}, std::vector<std::int64_t>{4, 6});
  EXPECT_TRUE(read_fails({"case 0 (id 'f16/opt')", "kv_len[1] = 6 is outside [0, Tk=5]"}));
  write_npy_int64(folder_ / "kv_len.npy", std::vector<std::int64_t>{3}, std::vector<std::int64_t>{4, 1, 1});
  EXPECT_TRUE(read_fails({"kv_len.npy: shape (3,), expected [B] = (2,)"}));
  write_npy(folder_ / "kv_len.npy", std::vector<std::int64_t>{2}, NpyType::f64, std::vector<double>{4, 1});
  EXPECT_TRUE(read_fails({"kv_len.npy: holds <f8; kv_len must be int32"}));
}

TEST_F(BrokenFolder, OptionalFilesMustMatchTheManifest) {
  fs::remove(folder_ / "dout.npy");
  EXPECT_TRUE(read_fails({"case 0 (id 'f16/opt')", "\"dout\" is true but", "dout.npy is missing"}));
  edit_manifest(dir_.path(), "\"dout\": true", "\"dout\": false");
  EXPECT_TRUE(read_exchange(dir_.path())[0].dout.empty());
  edit_manifest(dir_.path(), "\"mask\": true", "\"mask\": false");
  EXPECT_TRUE(read_fails({"mask.npy exists but \"mask\" is false"}));
  fs::remove(folder_ / "q.npy");
  edit_manifest(dir_.path(), "\"mask\": false", "\"mask\": true");
  EXPECT_TRUE(read_fails({"q.npy: no such file"}));
}

TEST_F(BrokenFolder, BiasMayHoldMinusInfinity) {
  const auto back = read_exchange(dir_.path());
  EXPECT_EQ(back[0].bias[3], -HUGE_VAL);
}

// mask.npy and bias.npy with their own batch and head extents: [B|1,Hq|1,Tq,Tk] files, the
// manifest's mask_batch .. bias_heads, and a file of the old [Tq,Tk] shape refused by name.
TEST(Exchange, MaskAndBiasPlanesRoundTripAndWrongShapesAreNamed) {
  ScratchDir dir;
  Case c = sample_case(DType::f32, "planes", true);
  c.problem.mask_dims = {false, true};
  c.problem.bias_dims = {true, true};
  c.mask.resize(static_cast<std::size_t>(mask_elements(c.problem)));
  c.bias.resize(static_cast<std::size_t>(bias_elements(c.problem)));
  for (std::size_t i = 0; i < c.mask.size(); ++i) c.mask[i] = (i % 5) != 2;
  for (std::size_t i = 0; i < c.bias.size(); ++i) c.bias[i] = std::cos(static_cast<double>(i)) * 2;
  round_to_storage(c);
  ASSERT_TRUE(check_case(c).empty());
  write_exchange(dir.path(), std::vector<Case>{c});
  const std::vector<Case> back = read_exchange(dir.path());
  ASSERT_EQ(back.size(), 1u);
  expect_same(c, back[0]);
  const fs::path folder = case_dir(dir.path(), c);
  EXPECT_EQ(read_npy(folder / "mask.npy").shape, (std::vector<std::int64_t>{1, 4, 3, 5}));
  EXPECT_EQ(read_npy(folder / "bias.npy").shape, (std::vector<std::int64_t>{2, 4, 3, 5}));
  // A [Tq,Tk] mask where the manifest says one per head.
  write_file_atomic(folder / "mask.npy", encode_npy_ints(std::vector<std::int64_t>{3, 5}, NpyType::u8,
                                                         std::vector<std::int64_t>(15, 1), "m"));
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"mask.npy: shape (3, 5), expected [1,Hq,Tq,Tk] = (1, 4, 3, 5)"}));
  // Extents for a tensor the case does not have.
  edit_manifest(dir.path(), "\"mask\": true", "\"mask\": false");
  fs::remove(folder / "mask.npy");
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"mask_dims gives the mask per-batch or per-head extents, but the problem has no mask"}));
}

TEST(Exchange, WriterRefusesBadCasesBeforeWritingAnything) {
  ScratchDir root;
  Case ok = sample_case(DType::f32, "ok", false);
  Case wrong_size = sample_case(DType::f32, "short", false);
  wrong_size.q.pop_back();
  Case unrepresentable = sample_case(DType::f16, "half", false);
  unrepresentable.v[4] = 0.1;
  Case no_id = ok;
  no_id.id.clear();
  const std::pair<std::vector<Case>, std::vector<std::string>> bad[] = {
      {{ok, wrong_size}, {"case 1 (id 'short')", "q has"}},
      {{ok, unrepresentable}, {"case 1 (id 'half')", "v element 4 = 0.10000000000000001 is not representable in f16"}},
      {{ok, ok}, {"case 1 (id 'ok')", "used by an earlier case"}},
      {{no_id}, {"case 0", "the id is empty"}}};
  for (const auto& [cases, parts] : bad) {
    EXPECT_TRUE(throws_input_error([&] { write_exchange(root / "ex", cases); }, {parts[0], parts[1]}));
    EXPECT_FALSE(fs::exists(root / "ex"));
  }
  std::vector<ExchangeCase> bad_meta = {{ok, "", "[1,2]"}};
  EXPECT_TRUE(throws_input_error([&] { write_exchange(root / "ex", bad_meta); }, {"meta must be a JSON object"}));
  EXPECT_FALSE(fs::exists(root / "ex"));
}

TEST(Exchange, RewritingAFolderRemovesStaleFiles) {
  ScratchDir dir;
  const Case with = sample_case(DType::f32, "a", true);
  write_exchange(dir.path(), std::vector<Case>{with});
  const fs::path folder = case_dir(dir.path(), with);
  write_npy(folder / "out.npy", std::vector<std::int64_t>{1}, NpyType::f64, std::vector<double>{1});
  std::ofstream(folder / "notes.txt") << "kept";
  const Case without = sample_case(DType::f32, "a", false);
  write_exchange(dir.path(), std::vector<Case>{without});
  EXPECT_EQ(test::file_names(folder), (std::vector<std::string>{"k.npy", "notes.txt", "q.npy", "v.npy"}));
  expect_same(read_exchange(dir.path())[0], without);
}

TEST(Exchange, MissingManifest) {
  ScratchDir dir;
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); }, {"manifest.json: no such file"}));
}

// The size is checked before the manifest is read. The file is grown sparse (NUL bytes after
// the JSON): at the limit it is read, and the NUL bytes are what is refused; one byte over, the
// size is refused, with the limit and the size.
TEST(Exchange, ManifestSizeLimit) {
  ScratchDir dir;
  write_exchange(dir.path(), std::vector<Case>{sample_case(DType::f32, "a", false)});
  const fs::path manifest = dir / "manifest.json";
  fs::resize_file(manifest, static_cast<std::uintmax_t>(kMaxManifestBytes));
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); }, {"manifest.json: not valid JSON: a NUL byte"}));
  fs::resize_file(manifest, static_cast<std::uintmax_t>(kMaxManifestBytes) + 1);
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"manifest.json: 67108865 bytes, more than the limit of 67108864 bytes"}));
}

// A file the reader may not open: the message says so. Root reads it anyway (the test then has
// nothing to check), so it skips itself there; the code path is the same for any open failure.
TEST(Exchange, UnreadableManifestSaysPermissionDenied) {
  ScratchDir dir;
  write_exchange(dir.path(), std::vector<Case>{sample_case(DType::f32, "a", false)});
  const fs::path manifest = dir / "manifest.json";
  fs::permissions(manifest, fs::perms::none);
  if (std::ifstream(manifest).is_open()) {
    fs::permissions(manifest, fs::perms::owner_read | fs::perms::owner_write);
    GTEST_SKIP() << "running as root: a mode 000 file is still readable";
  }
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"manifest.json: cannot open for reading: Permission denied"}));
  fs::permissions(manifest, fs::perms::owner_read | fs::perms::owner_write);
}

TEST(Exchange, CaseDirMustBeAFolder) {
  ScratchDir dir;
  const Case c = sample_case(DType::f32, "a", false);
  write_exchange(dir.path(), std::vector<Case>{c});
  const fs::path folder = case_dir(dir.path(), c);
  fs::remove_all(folder);
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"case 0 (id 'a')", "dir '0000_a': ", "0000_a does not exist"}));
  std::ofstream(folder) << "not a folder";
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"case 0 (id 'a')", "dir '0000_a': ", "0000_a is not a folder"}));
}

// A .npy file larger than any tensor attnv reads is refused from its size, before it is read:
// here a sparse file of 16 GiB + 1 MiB + 1 byte that takes no disk space.
TEST(Exchange, OversizedNpyIsRefusedBeforeReading) {
  ScratchDir dir;
  const Case c = sample_case(DType::f32, "a", false);
  write_exchange(dir.path(), std::vector<Case>{c});
  const fs::path q = case_dir(dir.path(), c) / "q.npy";
  fs::resize_file(q, static_cast<std::uintmax_t>(kMaxNpyFileBytes) + 1);
  EXPECT_TRUE(throws_input_error([&] { read_exchange(dir.path()); },
                                 {"case 0 (id 'a')", "q.npy: 17180917761 bytes, more than the limit of 17180917760 bytes"}));
}

}  // namespace
}  // namespace attnv::io
