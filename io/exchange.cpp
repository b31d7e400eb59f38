#include "io/exchange.h"

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "io/manifest.h"
#include "io/npy.h"
#include "io/tensor_files.h"
#include "io/text.h"
#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/validate.h"

namespace attnv::io {
namespace fs = std::filesystem;
namespace {

std::string case_label(std::size_t index, std::string_view id) {
  return "case " + std::to_string(index) + " (id " + single_quoted(id) + ")";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& m : v) {
    if (!s.empty()) s += "; ";
    s += m;
  }
  return s;
}



// The npy shape of a mask or bias: [Tq,Tk], or [B|1,Hq|1,Tq,Tk] with leading extents.
ExpectedShape broadcast_shape(const Shape& s, Leading d) {
  if (!d.any()) return {"[Tq,Tk]", {s.Tq, s.Tk}};
  const auto e = broadcast_extents(s, d);
  const char* names = d.batch ? (d.heads ? "[B,Hq,Tq,Tk]" : "[B,1,Tq,Tk]") : "[1,Hq,Tq,Tk]";
  return {names, {e[0], e[1], e[2], e[3]}};
}

// Shapes of every tensor a case folder holds.
struct CaseShapes {
  ExpectedShape q, k, v, out, lse, dq, mask, bias, sinks;
  explicit CaseShapes(const Problem& p) : CaseShapes(p.shape) {
    mask = broadcast_shape(p.shape, p.mask_dims);
    bias = broadcast_shape(p.shape, p.bias_dims);
  }
  explicit CaseShapes(const Shape& s)
      : q{"[B,Hq,Tq,Dk]", {s.B, s.Hq, s.Tq, s.Dk}},
        k{"[B,Hkv,Tk,Dk]", {s.B, s.Hkv, s.Tk, s.Dk}},
        v{"[B,Hkv,Tk,Dv]", {s.B, s.Hkv, s.Tk, s.Dv}},
        out{"[B,Hq,Tq,Dv]", {s.B, s.Hq, s.Tq, s.Dv}},
        lse{"[B,Hq,Tq]", {s.B, s.Hq, s.Tq}},
        dq{"[B,Hq,Tq,Dk]", {s.B, s.Hq, s.Tq, s.Dk}},
        mask{"[Tq,Tk]", {s.Tq, s.Tk}},
        bias{"[Tq,Tk]", {s.Tq, s.Tk}},
        sinks{"[Hq]", {s.Hq}} {}
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

// The case folder must be a folder: without this, a file named like it shows up only as
// "q.npy: no such file", which hides the real mistake.
void require_folder(const fs::path& folder, const std::string& rel, const std::string& label) {
  std::error_code ec;
  const auto st = fs::status(folder, ec);
  const std::string where = label + ": dir " + single_quoted(rel) + ": " + printable(folder.string());
  if (st.type() == fs::file_type::not_found) throw InputError(where + " does not exist");
  if (ec) throw InputError(where + ": cannot access it: " + ec.message());
  if (st.type() != fs::file_type::directory) throw InputError(where + " is not a folder");
}

// Bytes the case's input tensors take once read (8 per element), for an out-of-memory message.
// The manifest's per-tensor limit keeps each term, and so the sum, far from overflowing.
std::int64_t case_bytes(const ManifestEntry& e) {
  const Problem& p = e.problem;
  const CaseShapes s(p);
  auto bytes = [](const ExpectedShape& t) {
    std::int64_t m = 8;
    for (std::int64_t d : t.dims) m *= d;
    return m;
  };
  std::int64_t n = bytes(s.q) + bytes(s.k) + bytes(s.v);
  if (p.has_mask) n += bytes(s.mask);
  if (p.has_bias) n += bytes(s.bias);
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) n += bytes(s.sinks);  // [Hq], as the sinks
  for (const IndexInput& in : kIndexInputs) n += 8 * in.count(p);
  if (e.has_dout) n += bytes(s.out);
  return n;
}

ExchangeCase read_one(const fs::path& dir, const ManifestEntry& e, std::size_t index) {
  const std::string label = (dir / kManifestFile).string() + ": " + case_label(index, e.id);
  const fs::path folder = checked_case_folder(dir, e.dir, label);
  require_folder(folder, e.dir, label);
  try {
    return read_tensors(folder, e, label);
  } catch (const InputError& ex) {
    const std::string msg = ex.what();
    if (msg.rfind(label, 0) == 0) throw;
    // A file's own message names the file; say which case it belongs to as well.
    throw InputError(label + ": " + msg);
  } catch (const std::bad_alloc&) {
    throw InputError(label + ": out of memory reading the case: its input tensors take " +
                     std::to_string(case_bytes(e)) + " bytes as 8-byte values");
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
  const CaseShapes s(p);
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
  if (optional_file("bias.npy", p.has_bias, "bias")) c.bias = read_storage_tensor(folder / "bias.npy", p.dtype, s.bias);
  for (const HeadInput& in : kHeadInputs) {
    const std::string file = std::string(in.name) + ".npy";
    if (optional_file(file.c_str(), p.*in.present, in.name.data()))
      c.*in.values = read_storage_tensor(folder / file, p.dtype, s.sinks);  // [Hq], as the sinks
  }
  for (const IndexInput& in : kIndexInputs) {
    const std::string file = std::string(in.name) + ".npy";
    if (optional_file(file.c_str(), in.present(p), in.file_key.data()))
      c.*in.values = read_length_tensor(folder / file, {in.dims(p).data(), {in.extent(p)}});
  }
  if (optional_file("dout.npy", e.has_dout, "dout")) c.dout = read_storage_tensor(folder / "dout.npy", p.dtype, s.out);
  if (auto errs = check_case(c); !errs.empty()) throw InputError(label + ": invalid case: " + join(errs));
  return x;
}

void check_prefix(std::string_view prefix) {
  for (unsigned char ch : prefix)
    if (!(std::isalnum(ch) || ch == '_' || ch == '-' || ch == '.'))
      throw InputError("result prefix '" + std::string(prefix) + "' may only contain [A-Za-z0-9_.-]");
}

void write_case_files(const fs::path& folder, const Case& c) {
  const Problem& p = c.problem;
  const CaseShapes s(p);
  fs::create_directories(folder);
  // Remove every other .npy first: results of an earlier run belong to earlier inputs.
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() == ".npy" && entry.is_regular_file()) fs::remove(entry.path());
  write_npy_storage(folder / "q.npy", s.q.dims, p.dtype, c.q);
  write_npy_storage(folder / "k.npy", s.k.dims, p.dtype, c.k);
  write_npy_storage(folder / "v.npy", s.v.dims, p.dtype, c.v);
  if (p.has_mask) write_npy_bool(folder / "mask.npy", s.mask.dims, c.mask);
  if (p.has_bias) write_npy_storage(folder / "bias.npy", s.bias.dims, p.dtype, c.bias);
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) write_npy_storage(folder / (std::string(in.name) + ".npy"), s.sinks.dims, p.dtype, c.*in.values);
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p)) {
      const std::int64_t dims[] = {in.extent(p)};
      write_npy_int64(folder / (std::string(in.name) + ".npy"), dims, c.*in.values);
    }
  if (c.has_dout()) write_npy_storage(folder / "dout.npy", s.out.dims, p.dtype, c.dout);
}

}  // namespace

std::vector<ManifestEntry> read_manifest(const fs::path& dir) {
  const fs::path file = dir / kManifestFile;
  return parse_manifest(read_text_file(file, kMaxManifestBytes,
                                      " for a manifest; split the cases over several exchange folders (docs/exchange-format.md)"),
                        file.string());
}

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
  write_text_atomic(dir / kManifestFile, manifest);
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

namespace {

// The result files, in the layout of Outputs (dsinks: a backward of a case with sinks).
struct ResultFile {
  const char* name;
  std::vector<double> Outputs::*field;
  const ExpectedShape* shape;
};

std::array<ResultFile, 6> result_files(const CaseShapes& s) {
  return {{{"out", &Outputs::out, &s.out},
           {"lse", &Outputs::lse, &s.lse},
           {"dq", &Outputs::dq, &s.dq},
           {"dk", &Outputs::dk, &s.k},
           {"dv", &Outputs::dv, &s.v},
           {"dsinks", &Outputs::dsinks, &s.sinks}}};
}

// Before writing results of a case: a safe prefix and a problem whose shapes can be trusted.
void check_result_args(std::string_view prefix, const Case& c, const char* caller) {
  check_prefix(prefix);
  if (auto errs = check_problem(c.problem); !errs.empty())
    throw InputError(std::string(caller) + ": invalid problem: " + join(errs));
}

void check_count(const fs::path& file, std::size_t count, const ExpectedShape& shape) {
  std::int64_t want = 1;
  for (std::int64_t d : shape.dims) want *= d;  // check_problem ruled out overflow
  if (count != static_cast<std::size_t>(want))
    throw InputError(file.string() + ": " + std::to_string(count) + " values for shape " + shape.names + " = " +
                     format_shape(shape.dims));
}

}  // namespace

void write_outputs(const fs::path& case_folder, std::string_view prefix, const Case& c, const Outputs& o, DType dtype) {
  check_result_args(prefix, c, "write_outputs");
  const CaseShapes s(c.problem);
  const DType lse_dtype = mantissa_bits(dtype) < mantissa_bits(DType::f32) ? DType::f32 : dtype;
  for (const ResultFile& f : result_files(s)) {
    const std::vector<double>& values = o.*f.field;
    if (values.empty()) continue;
    const fs::path file = case_folder / (std::string(prefix) + f.name + ".npy");
    check_count(file, values.size(), *f.shape);
    write_npy_storage(file, f.shape->dims, f.field == &Outputs::lse ? lse_dtype : dtype, values);
  }
}

void write_output_flags(const fs::path& case_folder, std::string_view prefix, const Case& c, const Outputs& flags) {
  check_result_args(prefix, c, "write_output_flags");
  const CaseShapes s(c.problem);
  for (const ResultFile& f : result_files(s)) {
    const std::vector<double>& values = flags.*f.field;
    if (values.empty()) continue;
    const fs::path file = case_folder / (std::string(prefix) + f.name + ".npy");
    check_count(file, values.size(), *f.shape);
    std::vector<std::uint8_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] != 0 && values[i] != 1)
        throw InputError(file.string() + ": element " + format_index(f.shape->dims, static_cast<std::int64_t>(i)) +
                         " = " + format_value(values[i]) + " is not a flag (0 or 1)");
      bits[i] = values[i] == 1;
    }
    write_npy_bool(file, f.shape->dims, bits);
  }
}

Outputs read_outputs(const fs::path& case_folder, std::string_view prefix, const Case& c) {
  check_prefix(prefix);
  if (auto errs = check_problem(c.problem); !errs.empty()) throw InputError("read_outputs: invalid problem: " + join(errs));
  const CaseShapes s(c.problem);
  const bool bf16 = c.problem.dtype == DType::bf16;
  Outputs o;
  for (const ResultFile& f : result_files(s)) {
    const fs::path file = case_folder / (std::string(prefix) + f.name + ".npy");
    std::error_code ec;
    if (fs::exists(file, ec)) o.*f.field = read_result_tensor(file, *f.shape, bf16);
  }
  return o;
}

std::string read_text_file(const fs::path& file, std::int64_t max_bytes, const std::string& too_large_advice) {
  const std::string name = file.string();
  if (std::string why = unreadable_reason(file); !why.empty()) throw InputError(name + ": " + why);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(file, ec);
  if (ec) throw InputError(name + ": cannot determine the file size: " + ec.message());
  if (size > static_cast<std::uintmax_t>(max_bytes))
    throw InputError(name + ": " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes) +
                     " bytes (" + std::to_string(max_bytes >> 20) + " MiB)" + too_large_advice);
  std::ifstream f(file, std::ios::binary);
  // Unreadable for lack of permission, say, though it exists: say why instead of "read error".
  if (!f) throw InputError(name + ": cannot open for reading: " + std::strerror(errno));
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!f.read(text.data(), static_cast<std::streamsize>(size)))
    throw InputError(name + ": read error after " + std::to_string(f.gcount()) + " of " + std::to_string(size) + " bytes");
  return text;
}

}  // namespace attnv::io
