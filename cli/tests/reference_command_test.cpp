// End to end: `attnv reference` on exchange folders written by the io library; its ref_*.npy
// must be the fast reference's doubles bit for bit and its bound_*.npy the bound library's.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <unistd.h>
#include <sys/wait.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/tests/run_attnv.h"
#include "gen/families.h"
#include "io/exchange.h"
#include "io/npy.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::fresh_dir;
using testing::run_attnv;

std::vector<Case> sample_cases() {
  std::vector<Case> cases;
  cases.push_back(gen::make_case(gen::Family::random, 3, {DType::f16, gen::Size::small, true}));
  cases.push_back(gen::make_case(gen::Family::fully_masked, 4, {DType::bf16, gen::Size::small, false}));
  // No masks: every row of this one has visible keys (the bad-input test relies on it).
  cases.push_back(gen::make_case(gen::Family::large_logits, 5, {DType::f32, gen::Size::small, true, false}));
  return cases;
}

void expect_bitwise(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t e = 0; e < got.size(); ++e)
    if (!(got[e] == want[e] || (std::isnan(got[e]) && std::isnan(want[e]))))
      FAIL() << what << "[" << e << "]: " << got[e] << " != " << want[e];
}

TEST(ReferenceCommand, WritesTheFastReferenceAndTheBoundIntoEachCase) {
  const fs::path dir = fresh_dir("inplace");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "reference.json"));
  for (const Case& c : cases) {
    const fs::path folder = io::case_dir(dir, c);
    const Outputs ref = io::read_outputs(folder, "ref_", c);
    const Outputs bnd = io::read_outputs(folder, "bound_", c);
    const Outputs exact = c.has_dout() ? reference::fast_backward(c) : reference::fast_forward(c);
    const PrecisionModel m = PrecisionModel::natural(c.problem.dtype);
    const bound::Bounds b = c.has_dout() ? bound::backward_bound(c, exact, m) : bound::forward_bound(c, exact, m);
    expect_bitwise(ref.out, exact.out, c.id + " ref_out");
    expect_bitwise(ref.lse, exact.lse, c.id + " ref_lse");
    expect_bitwise(ref.dq, exact.dq, c.id + " ref_dq");
    expect_bitwise(ref.dk, exact.dk, c.id + " ref_dk");
    expect_bitwise(ref.dv, exact.dv, c.id + " ref_dv");
    expect_bitwise(bnd.out, b.out, c.id + " bound_out");
    expect_bitwise(bnd.dk, b.dk, c.id + " bound_dk");
  }
  fs::remove_all(dir);
}

TEST(ReferenceCommand, OutFolderIsACompleteExchangeAndTheInputIsUntouched) {
  const fs::path dir = fresh_dir("in"), out = fresh_dir("out");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  const CommandResult r = run_attnv("reference --in " + dir.string() + " --out " + out.string() +
                              " --block 64 --p-dtype f16 --threads 1", dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "reference.json"));
  EXPECT_FALSE(fs::exists(io::case_dir(dir, cases[0]) / "ref_out.npy"));
  const std::vector<Case> copied = io::read_exchange(out);
  ASSERT_EQ(copied.size(), cases.size());
  // The model flags change the bound: P rounded to f16 before P.V loosens it.
  const Outputs exact = reference::fast_backward(cases[2]);
  PrecisionModel m = PrecisionModel::natural(DType::f32, 64);
  m.p_dtype = DType::f16;
  expect_bitwise(io::read_outputs(io::case_dir(out, cases[2]), "bound_", cases[2]).out,
                 bound::backward_bound(cases[2], exact, m).out, "bound_out with flags");
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST(ReferenceCommand, BadInputExitsTwoAndWritesNothing) {
  const fs::path dir = fresh_dir("bad");
  std::vector<Case> cases = sample_cases();
  // A NaN in a visible query is only found while computing the third case: nothing may be
  // written for the first one either.
  cases[2].q[0] = std::nan("");
  io::write_exchange(dir, cases);
  CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("non-finite q[b=0,h=0,t=0,d=0] = nan"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(io::case_dir(dir, cases[0]) / "ref_out.npy"));
  EXPECT_FALSE(fs::exists(dir / "reference.json"));
  // A tensor file of the wrong shape: named in the message.
  fs::remove_all(dir);
  io::write_exchange(dir, sample_cases());
  fs::copy_file(io::case_dir(dir, cases[1]) / "q.npy", io::case_dir(dir, cases[0]) / "q.npy",
                fs::copy_options::overwrite_existing);
  r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("q.npy"), std::string::npos) << r.output;
  r = run_attnv("reference --in " + (dir / "missing").string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

// ---- what the reference guarantees per element: decided_*.npy and radius_*.npy ----

const char* const kResultNames[] = {"out", "lse", "dq", "dk", "dv"};

std::vector<double> Outputs::*field_of(const std::string& name) {
  if (name == "out") return &Outputs::out;
  if (name == "lse") return &Outputs::lse;
  if (name == "dq") return &Outputs::dq;
  if (name == "dk") return &Outputs::dk;
  return &Outputs::dv;
}

nlohmann::json read_summary(const fs::path& dir) { return nlohmann::json::parse(testing::read_text(dir / "reference.json")); }

// decided_<name>.npy and radius_<name>.npy of a case hold exactly the fast reference's record,
// as '|b1' and '<f8' files shaped like ref_<name>.npy; tensors the case has not are absent.
void expect_accuracy_files(const fs::path& folder, const Case& c, const reference::FastAccuracy& acc) {
  const Outputs radius = io::read_outputs(folder, "radius_", c);
  for (const std::string name : kResultNames) {
    SCOPED_TRACE(c.id + " " + name);
    const std::vector<double>& want = acc.resolved.*field_of(name);
    const fs::path decided_file = folder / ("decided_" + name + ".npy");
    if (want.empty()) {
      EXPECT_FALSE(fs::exists(decided_file));
      EXPECT_FALSE(fs::exists(folder / ("radius_" + name + ".npy")));
      continue;
    }
    const io::NpyArray decided = io::read_npy(decided_file);
    EXPECT_EQ(decided.type, io::NpyType::b1);
    EXPECT_EQ(decided.shape, io::read_npy(folder / ("ref_" + name + ".npy")).shape);
    ASSERT_EQ(decided.ints.size(), want.size());
    for (std::size_t e = 0; e < want.size(); ++e) EXPECT_EQ(static_cast<double>(decided.ints[e]), want[e]) << e;
    EXPECT_EQ(io::read_npy(folder / ("radius_" + name + ".npy")).type, io::NpyType::f64);
    expect_bitwise(radius.*field_of(name), acc.radius.*field_of(name), "radius_" + name);
  }
}

std::int64_t count_undecided(const std::vector<double>& resolved) {
  return static_cast<std::int64_t>(std::count(resolved.begin(), resolved.end(), 0.0));
}

TEST(ReferenceAccuracy, ForwardCaseWhereEveryElementIsDecided) {
  const fs::path dir = fresh_dir("decided");
  const Case c = gen::make_case(gen::Family::random, 3, {DType::f32, gen::Size::small, false, false});
  reference::FastAccuracy acc;
  reference::fast_forward(c, {}, nullptr, &acc);
  ASSERT_EQ(count_undecided(acc.resolved.out) + count_undecided(acc.resolved.lse), 0) << "the premise of this test";
  io::write_exchange(dir, std::vector<Case>{c});
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path folder = io::case_dir(dir, c);
  expect_accuracy_files(folder, c, acc);
  const Shape& s = c.problem.shape;
  EXPECT_EQ(io::read_npy(folder / "decided_out.npy").shape, (std::vector<std::int64_t>{s.B, s.Hq, s.Tq, s.Dv}));
  EXPECT_EQ(io::read_npy(folder / "decided_lse.npy").shape, (std::vector<std::int64_t>{s.B, s.Hq, s.Tq}));
  for (const char* name : {"decided_out.npy", "decided_lse.npy"}) {
    const io::NpyArray d = io::read_npy(folder / name);
    EXPECT_EQ(std::count(d.ints.begin(), d.ints.end(), 1), static_cast<std::ptrdiff_t>(d.ints.size())) << name;
  }
  const nlohmann::json entry = read_summary(dir)["cases"][0];
  const std::int64_t elements = out_elements(s) + lse_elements(s);
  EXPECT_EQ(entry["elements"], elements);
  EXPECT_EQ(entry["decided"], elements);
  EXPECT_EQ(entry["undecided"], 0);
  EXPECT_EQ(entry["tensors"]["out"]["decided"], out_elements(s));
  EXPECT_FALSE(entry["tensors"].contains("dq"));
  EXPECT_TRUE(testing::has(r.output, "0 undecided")) << r.output;
  fs::remove_all(dir);
}

// One query and two identical keys: P = (1/2, 1/2) exactly, so out = (v_0 + v_1) / 2. With
// v_0 = 1 and v_1 = 1 + 2^-52 that is 1 + 2^-53, exactly halfway between two doubles: no error
// radius > 0 can decide its rounding. A backward case, so decided_dq/dk/dv are written too.
Case tie_case() {
  Problem p;
  p.shape = {1, 1, 1, 1, 2, 2, 2};
  p.dtype = DType::f64;
  Case c = make_zero_case(p, true);
  c.id = "tie/out";
  c.q = {0.1, 0.3};
  c.k = {0.7, -0.2, 0.7, -0.2};
  c.v = {1.0, 1.0, 1.0 + 0x1p-52, 1.0 + 0x1p-52};
  c.dout = {0.7, 0.11};
  return c;
}

TEST(ReferenceAccuracy, UndecidedElementIsMarkedAndWithinItsRadius) {
  const fs::path dir = fresh_dir("undecided");
  const Case c = tie_case();
  reference::FastAccuracy acc;
  reference::fast_backward(c, {}, nullptr, &acc);
  ASSERT_EQ(count_undecided(acc.resolved.out), 2) << "the premise of this test: the fast reference cannot decide a tie";
  io::write_exchange(dir, std::vector<Case>{c});
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path folder = io::case_dir(dir, c);
  expect_accuracy_files(folder, c, acc);
  EXPECT_EQ(io::read_npy(folder / "decided_dq.npy").shape, (std::vector<std::int64_t>{1, 1, 1, 2}));
  EXPECT_EQ(io::read_npy(folder / "decided_dk.npy").shape, (std::vector<std::int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(io::read_npy(folder / "decided_dv.npy").shape, (std::vector<std::int64_t>{1, 1, 2, 2}));
  // The documented guarantee against the known exact value 1 + 2^-53: the returned double is
  // one of its two neighbours, within radius + half an ulp of it.
  const io::NpyArray decided = io::read_npy(folder / "decided_out.npy");
  const std::vector<double> ref_out = io::read_outputs(folder, "ref_", c).out;
  const std::vector<double> radius = io::read_outputs(folder, "radius_", c).out;
  for (std::size_t e = 0; e < ref_out.size(); ++e) {
    EXPECT_EQ(decided.ints[e], 0) << e;
    EXPECT_GT(radius[e], 0.0) << e;
    ASSERT_TRUE(ref_out[e] == 1.0 || ref_out[e] == 1.0 + 0x1p-52) << ref_out[e];
    const double half_ulp = (std::nextafter(ref_out[e], INFINITY) - ref_out[e]) / 2;
    EXPECT_LE(0x1p-53, radius[e] + half_ulp) << e;  // |ref - exact| = 2^-53
  }
  const nlohmann::json entry = read_summary(dir)["cases"][0];
  std::int64_t undecided = 0;
  for (const std::string name : kResultNames) undecided += count_undecided(acc.resolved.*field_of(name));
  EXPECT_EQ(entry["undecided"], undecided);
  EXPECT_EQ(entry["unresolved"], undecided);
  EXPECT_EQ(entry["decided"].get<std::int64_t>() + undecided, entry["elements"].get<std::int64_t>());
  EXPECT_EQ(entry["tensors"]["out"]["undecided"], 2);
  EXPECT_EQ(entry["tensors"]["dq"]["elements"], 2);
  EXPECT_TRUE(entry["backward"].get<bool>());
  EXPECT_TRUE(testing::has(r.output, std::to_string(undecided) + " undecided")) << r.output;
  fs::remove_all(dir);
}

// ---- bad input: exit 2, a message naming what and where, nothing written ----

void expect_nothing_written(const fs::path& dir) {
  EXPECT_FALSE(fs::exists(dir / "reference.json"));
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    for (const char* prefix : {"ref_", "bound_", "radius_", "decided_"})
      EXPECT_NE(name.rfind(prefix, 0), 0u) << e.path();
  }
}

// Sets a key of one case of DIR's manifest to `raw` JSON text, which may be a number no JSON
// library would write (18446744073709551616).
void set_in_manifest(const fs::path& dir, std::size_t index, const std::string& key, const std::string& raw) {
  nlohmann::ordered_json m = nlohmann::ordered_json::parse(testing::read_text(dir / "manifest.json"));
  m["cases"][index][key] = "@@raw@@";
  std::string text = m.dump(2);
  text.replace(text.find("\"@@raw@@\""), 9, raw);
  std::ofstream(dir / "manifest.json", std::ios::binary | std::ios::trunc) << text;
}

TEST(ReferenceBadInput, InIsAFileNotAFolder) {
  const fs::path dir = fresh_dir("in_file");
  std::ofstream(dir / "plain.txt") << "x";
  const CommandResult r = run_attnv("reference --in " + (dir / "plain.txt").string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "--in " + (dir / "plain.txt").string() + ": is not a folder")) << r.output;
  fs::remove_all(dir);
}

TEST(ReferenceBadInput, CaseDirIsAFileNotAFolder) {
  const fs::path dir = fresh_dir("dir_file");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  const fs::path folder = io::case_dir(dir, cases[1]);
  fs::remove_all(folder);
  std::ofstream(folder) << "x";
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "case 1 (id '" + cases[1].id + "')")) << r.output;
  EXPECT_TRUE(testing::has(r.output, folder.filename().string() + " is not a folder")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

TEST(ReferenceBadInput, UnreadableManifestSaysPermissionDenied) {
  const fs::path dir = fresh_dir("perm");
  io::write_exchange(dir, sample_cases());
  fs::permissions(dir / "manifest.json", fs::perms::none);
  if (std::ifstream(dir / "manifest.json").is_open()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "running as root: a mode 000 file is still readable";
  }
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "manifest.json: cannot open for reading: Permission denied")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

TEST(ReferenceBadInput, ShapeBeyond64BitsIsOutOfRange) {
  const fs::path dir = fresh_dir("range");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  set_in_manifest(dir, 0, "Tk", "18446744073709551616");
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "case 0 (id '" + cases[0].id + "'): key 'Tk': out of range")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

// A Dv of 2^40 in the manifest (v and out would take terabytes): refused from the manifest,
// naming the case, the tensor and its bytes, before anything is read or allocated.
TEST(ReferenceBadInput, OversizedTensorIsRefusedWithItsSizeInBytes) {
  const fs::path dir = fresh_dir("huge");
  const std::vector<Case> cases = sample_cases();
  io::write_exchange(dir, cases);
  set_in_manifest(dir, 2, "Dv", "1099511627776");
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "case 2 (id '" + cases[2].id + "'): v [B,Hkv,Tk,Dv]")) << r.output;
  EXPECT_TRUE(testing::has(r.output, "bytes as f64), more than the limit of 2147483648 elements per tensor")) << r.output;
  EXPECT_FALSE(testing::has(r.output, "bad_alloc")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

TEST(ReferenceBadInput, ManifestAboveTheSizeLimit) {
  const fs::path dir = fresh_dir("big_manifest");
  io::write_exchange(dir, sample_cases());
  fs::resize_file(dir / "manifest.json", std::uintmax_t{64} << 20 | 1);  // sparse, past the 64 MiB limit
  const CommandResult r = run_attnv("reference --in " + dir.string(), dir);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(testing::has(r.output, "manifest.json: 67108865 bytes, more than the limit of 67108864 bytes")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

// An allocation that fails while the reference is computed names the case and the bytes its
// results take. The address space is limited with ulimit -v below the 1 GiB the output needs;
// the inputs are 24,577 doubles. Not under sanitizers, whose shadow memory needs the space.
TEST(ReferenceBadInput, OutOfMemoryNamesTheCaseAndItsBytes) {
  if (testing::kSanitized) GTEST_SKIP() << "sanitizer shadow memory needs the address space a limit would take";
  const fs::path dir = fresh_dir("oom");
  Problem p;
  p.shape = {1, 1, 1, 16384, 1, 1, 8192};  // out: 2^27 elements = 1 GiB per f64 array
  p.dtype = DType::f64;
  Case c = make_zero_case(p);
  c.id = "big/out";
  io::write_exchange(dir, std::vector<Case>{c});
  const CommandResult r = run_attnv("reference --threads 1 --in " + dir.string(), dir, 600 * 1024);
  EXPECT_EQ(r.status, 2) << r.output;
  const std::int64_t elements = out_elements(p.shape) + lse_elements(p.shape);
  EXPECT_TRUE(testing::has(r.output, "case 0 (id 'big/out'): out of memory computing the reference: its results take " +
                                         std::to_string(elements * 32) + " bytes"))
      << r.output;
  EXPECT_FALSE(testing::has(r.output, "bad_alloc")) << r.output;
  expect_nothing_written(dir);
  fs::remove_all(dir);
}

// Control characters in ids and paths never reach the terminal: not in the per-case line, not in
// the summary lines, not in an error message.
bool has_control_characters(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return (u < 0x20 && u != '\n') || u == 0x7F;
  });
}

TEST(ReferenceTerminal, ControlCharactersInIdsAndPathsAreNotPrinted) {
  const fs::path root = fresh_dir("ctrl");
  const fs::path dir = root / "ex\x1b[31m";
  Case c = gen::make_case(gen::Family::random, 3, {DType::f32, gen::Size::small, false, false});
  c.id = std::string("evil\x1b]0;pwn\x07\r\x1b[2J") + '\0' + "end";
  io::write_exchange(dir, std::vector<Case>{c});
  CommandResult r = run_attnv("reference --in '" + dir.string() + "'", root);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(has_control_characters(r.output)) << r.output;
  EXPECT_TRUE(testing::has(r.output, "evil?]0;pwn???[2J?end")) << r.output;
  EXPECT_TRUE(testing::has(r.output, "ex?[31m")) << r.output;
  // The same id in an error message (a NaN in a visible query).
  c.q[0] = std::nan("");
  io::write_exchange(dir, std::vector<Case>{c});
  r = run_attnv("reference --in '" + dir.string() + "'", root);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(has_control_characters(r.output)) << r.output;
  EXPECT_TRUE(testing::has(r.output, "evil?]0;pwn")) << r.output;
  fs::remove_all(root);
}

}  // namespace
}  // namespace attnv
