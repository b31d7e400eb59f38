#include "io/exchange.h"

#include <cctype>
#include <fstream>
#include <tuple>
#include <set>
#include <sstream>

#include "io/manifest.h"
#include "io/npy.h"
#include "io/tensor_files.h"
#include "problem/error.h"
#include "problem/validate.h"

namespace attnv::io {
namespace fs = std::filesystem;
namespace {

std::string case_label(std::size_t index, std::string_view id) {
  return "case " + std::to_string(index) + " (id '" + std::string(id) + "')";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& m : v) {
    if (!s.empty()) s += "; ";
    s += m;
  }
  return s;
}

std::string read_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw InputError(file.string() + ": " + (fs::exists(file, ec) ? "not a regular file" : "no such file"));
  std::ifstream f(file, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  if (!f && !f.eof()) throw InputError(file.string() + ": read error");
  return s.str();
}

std::vector<ManifestEntry> read_manifest(const fs::path& dir) {
  const fs::path file = dir / kManifestFile;
  return parse_manifest(read_text(file), file.string());
}

// Shapes of every tensor a case folder holds.
struct CaseShapes {
  ExpectedShape q, k, v, out, lse, dq, mask, kv_len;
  explicit CaseShapes(const Shape& s)
      : q{"[B,Hq,Tq,Dk]", {s.B, s.Hq, s.Tq, s.Dk}},
        k{"[B,Hkv,Tk,Dk]", {s.B, s.Hkv, s.Tk, s.Dk}},
        v{"[B,Hkv,Tk,Dv]", {s.B, s.Hkv, s.Tk, s.Dv}},
        out{"[B,Hq,Tq,Dv]", {s.B, s.Hq, s.Tq, s.Dv}},
        lse{"[B,Hq,Tq]", {s.B, s.Hq, s.Tq}},
        dq{"[B,Hq,Tq,Dk]", {s.B, s.Hq, s.Tq, s.Dk}},
        mask{"[Tq,Tk]", {s.Tq, s.Tk}},
        kv_len{"[B]", {s.B}} {}
};

// A case folder must resolve inside the exchange folder even through symlinks.
fs::path checked_case_folder(const fs::path& dir, const std::string& rel, const std::string& label) {
  const fs::path folder = dir / rel;
  std::error_code ec1, ec2;
  fs::path root = fs::weakly_canonical(dir, ec1).lexically_normal();
  const fs::path real = fs::weakly_canonical(folder, ec2).lexically_normal();
  if (!root.has_filename() && root.has_relative_path()) root = root.parent_path();  // "a/b/" -> "a/b"
  if (!ec1 && !ec2) {
    auto r = root.begin(), f = real.begin();
    for (; r != root.end() && f != real.end() && *r == *f; ++r, ++f) {}
    if (r != root.end())
      throw InputError(label + ": dir '" + rel + "' resolves to " + real.string() + ", outside " + root.string());
  }
  return folder;
}

ExchangeCase read_tensors(const fs::path& folder, const ManifestEntry& e, const std::string& label);

ExchangeCase read_one(const fs::path& dir, const ManifestEntry& e, std::size_t index) {
  const std::string label = (dir / kManifestFile).string() + ": " + case_label(index, e.id);
  const fs::path folder = checked_case_folder(dir, e.dir, label);
  try {
    return read_tensors(folder, e, label);
  } catch (const InputError& ex) {
    const std::string msg = ex.what();
    if (msg.rfind(label, 0) == 0) throw;
    // A file's own message names the file; say which case it belongs to as well.
    throw InputError(label + ": " + msg);
  }
}

ExchangeCase read_tensors(const fs::path& folder, const ManifestEntry& e, const std::string& label) {
  ExchangeCase x;
  x.dir = e.dir;
  x.meta_json = e.meta_json;
  Case& c = x.c;
  c.problem = e.problem;
  c.id = e.id;
  const Problem& p = c.problem;
  const CaseShapes s(p.shape);
  c.q = read_storage_tensor(folder / "q.npy", p.dtype, s.q);
  c.k = read_storage_tensor(folder / "k.npy", p.dtype, s.k);
  c.v = read_storage_tensor(folder / "v.npy", p.dtype, s.v);
  // An optional file must be present exactly when the manifest says so: a mask left behind and
  // silently ignored would verify a different problem than the one meant.
  auto optional_file = [&](const char* file, bool wanted, const char* key) {
    std::error_code ec;
    const bool there = fs::exists(folder / file, ec);
    if (wanted && !there) throw InputError(label + ": \"" + key + "\" is true but " + (folder / file).string() + " is missing");
    if (!wanted && there)
      throw InputError(label + ": " + (folder / file).string() + " exists but \"" + key +
                       "\" is false; set it to true or remove the file");
    return wanted;
  };
  if (optional_file("mask.npy", p.has_mask, "mask")) c.mask = read_mask_tensor(folder / "mask.npy", s.mask);
  if (optional_file("bias.npy", p.has_bias, "bias")) c.bias = read_storage_tensor(folder / "bias.npy", p.dtype, s.mask);
  if (optional_file("kv_len.npy", p.has_kv_len, "kv_len")) c.kv_len = read_length_tensor(folder / "kv_len.npy", s.kv_len);
  if (optional_file("dout.npy", e.has_dout, "dout")) c.dout = read_storage_tensor(folder / "dout.npy", p.dtype, s.out);
  if (auto errs = check_case(c); !errs.empty()) throw InputError(label + ": invalid case: " + join(errs));
  return x;
}

void check_prefix(std::string_view prefix) {
  for (unsigned char ch : prefix)
    if (!(std::isalnum(ch) || ch == '_' || ch == '-' || ch == '.'))
      throw InputError("result prefix '" + std::string(prefix) + "' may only contain [A-Za-z0-9_.-]");
}

const char* const kInputFiles[] = {"q.npy", "k.npy", "v.npy", "mask.npy", "bias.npy", "kv_len.npy", "dout.npy"};

void write_case_files(const fs::path& folder, const Case& c) {
  const Problem& p = c.problem;
  const CaseShapes s(p.shape);
  fs::create_directories(folder);
  // Remove every other .npy first: results of an earlier run belong to earlier inputs.
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() == ".npy" && entry.is_regular_file()) fs::remove(entry.path());
  write_npy_storage(folder / "q.npy", s.q.dims, p.dtype, c.q);
  write_npy_storage(folder / "k.npy", s.k.dims, p.dtype, c.k);
  write_npy_storage(folder / "v.npy", s.v.dims, p.dtype, c.v);
  if (p.has_mask) write_npy_bool(folder / "mask.npy", s.mask.dims, c.mask);
  if (p.has_bias) write_npy_storage(folder / "bias.npy", s.mask.dims, p.dtype, c.bias);
  if (p.has_kv_len) write_npy_int64(folder / "kv_len.npy", s.kv_len.dims, c.kv_len);
  if (c.has_dout()) write_npy_storage(folder / "dout.npy", s.out.dims, p.dtype, c.dout);
}

}  // namespace

std::vector<ExchangeCase> read_exchange_cases(const fs::path& dir) {
  const std::vector<ManifestEntry> entries = read_manifest(dir);
  std::vector<ExchangeCase> cases;
  cases.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) cases.push_back(read_one(dir, entries[i], i));
  return cases;
}

std::vector<Case> read_exchange(const fs::path& dir) {
  std::vector<Case> cases;
  for (ExchangeCase& x : read_exchange_cases(dir)) cases.push_back(std::move(x.c));
  return cases;
}

void write_exchange(const fs::path& dir, const std::vector<ExchangeCase>& cases) {
  std::vector<ManifestEntry> entries;
  std::set<std::string> ids, dirs;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ExchangeCase& x = cases[i];
    const std::string label = "write_exchange: " + case_label(i, x.c.id);
    if (x.c.id.empty()) throw InputError(label + ": the id is empty; every case needs a unique id");
    if (!ids.insert(x.c.id).second) throw InputError(label + ": the id is used by an earlier case");
    if (auto errs = check_case(x.c); !errs.empty()) throw InputError(label + ": invalid case: " + join(errs));
    ManifestEntry e{x.c.id, x.dir.empty() ? case_folder_name(i, x.c.id) : x.dir, x.c.problem, x.c.has_dout(), x.meta_json};
    if (auto why = unsafe_dir_reason(e.dir); !why.empty()) throw InputError(label + ": dir '" + e.dir + "' is unsafe: " + why);
    if (!dirs.insert(e.dir).second) throw InputError(label + ": dir '" + e.dir + "' is used by an earlier case");
    entries.push_back(std::move(e));
  }
  const std::string manifest = render_manifest(entries);  // fails on bad meta before any file is written
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir.string() + ": cannot create the exchange folder: " + ec.message());
  try {
    for (std::size_t i = 0; i < cases.size(); ++i)
      write_case_files(checked_case_folder(dir, entries[i].dir, "write_exchange: " + case_label(i, entries[i].id)),
                       cases[i].c);
  } catch (const fs::filesystem_error& ex) {
    throw InputError(std::string("write_exchange: ") + ex.what());
  }
  // The manifest goes last, so a reader never finds one that names files not yet written.
  write_file_atomic(dir / kManifestFile, std::span(reinterpret_cast<const unsigned char*>(manifest.data()), manifest.size()));
}

void write_exchange(const fs::path& dir, const std::vector<Case>& cases) {
  std::vector<ExchangeCase> xs;
  xs.reserve(cases.size());
  for (const Case& c : cases) xs.push_back({c, {}, {}});
  write_exchange(dir, xs);
}

fs::path case_dir(const fs::path& dir, const Case& c) {
  for (const ManifestEntry& e : read_manifest(dir))
    if (e.id == c.id) return dir / e.dir;
  throw InputError((dir / kManifestFile).string() + ": no case has the id '" + c.id + "'");
}

fs::path case_dir(const fs::path& dir, const ExchangeCase& c) {
  if (c.dir.empty()) return case_dir(dir, c.c);
  if (auto why = unsafe_dir_reason(c.dir); !why.empty()) throw InputError("dir '" + c.dir + "' is unsafe: " + why);
  return dir / c.dir;
}

void write_outputs(const fs::path& case_folder, std::string_view prefix, const Case& c, const Outputs& o, DType dtype) {
  check_prefix(prefix);
  if (auto errs = check_problem(c.problem); !errs.empty()) throw InputError("write_outputs: invalid problem: " + join(errs));
  const CaseShapes s(c.problem.shape);
  const DType lse_dtype = mantissa_bits(dtype) < mantissa_bits(DType::f32) ? DType::f32 : dtype;
  const std::string pre(prefix);
  const std::tuple<const char*, const std::vector<double>*, const ExpectedShape*, DType> files[] = {
      {"out", &o.out, &s.out, dtype}, {"lse", &o.lse, &s.lse, lse_dtype}, {"dq", &o.dq, &s.dq, dtype},
      {"dk", &o.dk, &s.k, dtype},     {"dv", &o.dv, &s.v, dtype}};
  for (const auto& [name, values, shape, t] : files) {
    if (values->empty()) continue;
    const fs::path file = case_folder / (pre + name + ".npy");
    std::int64_t want = 1;
    for (std::int64_t d : shape->dims) want *= d;  // check_problem ruled out overflow
    if (values->size() != static_cast<std::size_t>(want))
      throw InputError(file.string() + ": " + std::to_string(values->size()) + " values for shape " + shape->names +
                       " = " + format_shape(shape->dims));
    write_npy_storage(file, shape->dims, t, *values);
  }
}

Outputs read_outputs(const fs::path& case_folder, std::string_view prefix, const Case& c) {
  check_prefix(prefix);
  if (auto errs = check_problem(c.problem); !errs.empty()) throw InputError("read_outputs: invalid problem: " + join(errs));
  const CaseShapes s(c.problem.shape);
  const bool bf16 = c.problem.dtype == DType::bf16;
  const std::string pre(prefix);
  Outputs o;
  const std::tuple<const char*, std::vector<double>*, const ExpectedShape*> files[] = {
      {"out", &o.out, &s.out}, {"lse", &o.lse, &s.lse}, {"dq", &o.dq, &s.dq}, {"dk", &o.dk, &s.k}, {"dv", &o.dv, &s.v}};
  for (const auto& [name, values, shape] : files) {
    const fs::path file = case_folder / (pre + name + ".npy");
    std::error_code ec;
    if (fs::exists(file, ec)) *values = read_result_tensor(file, *shape, bf16);
  }
  return o;
}

}  // namespace attnv::io
