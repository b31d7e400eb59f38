// attnv reference --in DIR [--out DIR2]: for every case of an exchange folder, the correctly
// rounded f64 output and LSE (and dQ, dK, dV when the case has dout.npy), and the per-element
// error bound of a precision model given by flags. Results go to <case dir>/ref_*.npy and
// <case dir>/bound_*.npy, with what the reference guarantees per element in radius_*.npy (a
// bound on |ref - exact| before ref's rounding to f64) and decided_*.npy (true where ref IS the
// correctly rounded exact value), in DIR itself or under DIR2 (which then gets its own manifest
// copy of the cases, so DIR2 is a complete exchange folder). A summary goes to reference.json.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "cli/commands.h"
#include "cli/dtype_option.h"
#include "io/exchange.h"
#include "io/npy.h"
#include "io/text.h"
#include "problem/error.h"
#include "problem/precision.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::cli {
namespace {

namespace fs = std::filesystem;

struct ReferenceArgs {
  std::string in, out;
  std::string accum, p_dtype, out_dtype;
  std::int64_t block = 0;
  double exp_ulps = 2;
  bool flush_subnormals = false;
  int threads = 0;
};

// The precision model for one case: the natural model of its storage dtype, overridden by flags.
PrecisionModel model_for(const Case& c, const ReferenceArgs& a) {
  PrecisionModel m = PrecisionModel::natural(c.problem.dtype, a.block);
  if (!a.accum.empty()) m.accum = *parse_dtype(a.accum);
  m.p_dtype = a.p_dtype.empty() ? m.accum : *parse_dtype(a.p_dtype);
  if (!a.out_dtype.empty()) m.out = *parse_dtype(a.out_dtype);
  m.exp_ulps = a.exp_ulps;
  m.flush_subnormals = a.flush_subnormals;
  return m;
}

Outputs as_outputs(bound::Bounds b) {
  return Outputs{std::move(b.out), std::move(b.lse), std::move(b.dq), std::move(b.dk), std::move(b.dv), std::move(b.dsinks)};
}

// --in must be a folder holding manifest.json; what can be wrong with the manifest itself
// (permissions, size, content) is io's to say, in io's words.
void check_in_folder(const std::string& in) {
  std::error_code ec;
  const fs::file_status st = fs::status(in, ec);
  const std::string where = "--in " + in;
  if (st.type() == fs::file_type::not_found) throw InputError(where + ": the folder does not exist");
  if (ec) throw InputError(where + ": cannot access it: " + ec.message());
  if (st.type() != fs::file_type::directory)
    throw InputError(where + ": is not a folder (give the exchange folder that holds manifest.json)");
  if (fs::status(fs::path(in) / "manifest.json", ec).type() == fs::file_type::not_found)
    throw InputError(where + ": no manifest.json (see docs/exchange-format.md)");
}

// --out may be missing (it is created) or a folder, nothing else; checked before the work.
void check_out_folder(const std::string& out) {
  if (out.empty()) return;
  std::error_code ec;
  const fs::file_type t = fs::status(out, ec).type();
  if (t != fs::file_type::not_found && t != fs::file_type::directory && !ec)
    throw InputError("--out " + out + ": is not a folder");
}

std::string case_label(std::size_t index, const Case& c) {
  return "case " + std::to_string(index) + " (id " + io::single_quoted(c.id) + ")";
}

// Everything the reference gives one case; all cases are computed before anything is written.
struct CaseResult {
  Outputs exact, bounds;
  reference::FastAccuracy accuracy;  // radius and decided ("resolved") per element
};

// Elements of the results of a case (out and lse; dq, dk, dv too for a backward case).
std::int64_t result_elements(const Case& c) {
  const Shape& s = c.problem.shape;
  std::int64_t n = out_elements(s) + lse_elements(s);
  if (c.has_dout()) n += q_elements(s) + k_elements(s) + v_elements(s);
  return n;
}

// Value, bound, radius and decided flag per element, 8 bytes each while held.
constexpr std::int64_t kHeldBytesPerElement = 4 * 8;

CaseResult compute(const Case& c, const ReferenceArgs& a, const std::string& label, std::int64_t held_bytes) {
  try {
    CaseResult r;
    reference::FastOptions fo;
    fo.threads = a.threads;
    r.exact = c.has_dout() ? reference::fast_backward(c, fo, nullptr, &r.accuracy) : reference::fast_forward(c, fo, nullptr, &r.accuracy);
    const PrecisionModel m = model_for(c, a);
    r.bounds = as_outputs(c.has_dout() ? bound::backward_bound(c, r.exact, m) : bound::forward_bound(c, r.exact, m));
    return r;
  } catch (const std::bad_alloc&) {
    const std::int64_t n = result_elements(c);
    throw InputError(label + ": out of memory computing the reference: its results take " +
                     std::to_string(n * kHeldBytesPerElement) + " bytes (value, bound, radius and decided flag of " +
                     std::to_string(n) + " elements)" +
                     (held_bytes > 0 ? ", on top of the " + std::to_string(held_bytes) +
                                           " bytes held for the cases before it (all are written at the end)"
                                     : std::string()));
  }
}

// Per tensor and in total: elements, and how many are decided (the f64 in ref_*.npy is the
// correctly rounded exact value) or not (the f64 is within radius + half an ulp of it).
nlohmann::json decided_counts(const reference::FastAccuracy& acc) {
  nlohmann::json tensors = nlohmann::json::object();
  std::int64_t elements = 0, undecided = 0;
  const std::pair<const char*, const std::vector<double>*> fields[] = {
      {"out", &acc.resolved.out}, {"lse", &acc.resolved.lse}, {"dq", &acc.resolved.dq},
      {"dk", &acc.resolved.dk},   {"dv", &acc.resolved.dv}, {"dsinks", &acc.resolved.dsinks}};
  for (const auto& [name, flags] : fields) {
    if (flags->empty()) continue;
    const auto n = static_cast<std::int64_t>(flags->size());
    const auto u = static_cast<std::int64_t>(std::count(flags->begin(), flags->end(), 0.0));
    tensors[name] = {{"elements", n}, {"decided", n - u}, {"undecided", u}};
    elements += n;
    undecided += u;
  }
  return {{"elements", elements}, {"decided", elements - undecided}, {"undecided", undecided}, {"tensors", tensors}};
}

void write_case(const fs::path& folder, const Case& c, const CaseResult& r, const std::string& label) {
  try {
    io::write_outputs(folder, "ref_", c, r.exact, DType::f64);
    io::write_outputs(folder, "bound_", c, r.bounds, DType::f64);
    io::write_outputs(folder, "radius_", c, r.accuracy.radius, DType::f64);
    io::write_output_flags(folder, "decided_", c, r.accuracy.resolved);
  } catch (const std::bad_alloc&) {
    throw InputError(label + ": out of memory writing its results into " + folder.string());
  }
}

// Written last and atomically: a summary that exists describes results that exist.
void write_summary(const fs::path& out, const nlohmann::json& summary) {
  const std::string text = summary.dump(2) + "\n";
  io::write_text_atomic(out / "reference.json", text);
}

void run(const ReferenceArgs& a) {
  check_in_folder(a.in);
  check_out_folder(a.out);
  const fs::path in = a.in;
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(in);
  const fs::path out = a.out.empty() ? in : fs::path(a.out);

  nlohmann::json summary = {{"format", "attnv-reference"}, {"version", 1}, {"cases", nlohmann::json::array()}};
  std::cout << "attnv reference: " << cases.size() << " case(s) from " << io::printable(a.in) << '\n';
  // Compute every case before writing anything: bad values found in a later case (NaN in a
  // visible key, say) must not leave the results of earlier cases half updated.
  std::vector<CaseResult> results;
  std::int64_t held_bytes = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k].c;
    const auto t0 = std::chrono::steady_clock::now();
    results.push_back(compute(c, a, case_label(k, c), held_bytes));
    held_bytes += result_elements(c) * kHeldBytesPerElement;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    nlohmann::json counts = decided_counts(results.back().accuracy);
    std::cout << "  " << std::left << std::setw(28) << io::printable(c.id) << ' ' << describe(c.problem) << "  "
              << counts["elements"].get<std::int64_t>() << " elements, " << counts["undecided"].get<std::int64_t>()
              << " undecided, " << std::fixed << std::setprecision(2) << seconds << " s\n";
    nlohmann::json entry = {{"id", c.id}, {"precision_model", describe(model_for(c, a))}, {"backward", c.has_dout()}};
    entry.update(counts);
    entry["unresolved"] = counts["undecided"];  // the name of the count before decided_*.npy existed
    entry["seconds"] = seconds;
    summary["cases"].push_back(std::move(entry));
  }
  if (!a.out.empty() && fs::weakly_canonical(out) != fs::weakly_canonical(in))
    io::write_exchange(out, cases);  // DIR2 becomes a complete exchange folder
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const fs::path folder = io::case_dir(out, cases[k]);
    write_case(folder, cases[k].c, results[k], case_label(k, cases[k].c));
    summary["cases"][k]["dir"] = fs::relative(folder, out).generic_string();
  }
  write_summary(out, summary);
  std::cout << "wrote ref_, bound_, radius_ and decided_ *.npy into each case folder under "
            << io::printable(out.string()) << '\n';
}

}  // namespace

void add_reference_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReferenceArgs>();
  auto* cmd = app.add_subcommand("reference", "Write the correctly rounded reference and its error bound for every case of an exchange folder");
  cmd->footer(
      "For every case of an exchange folder (docs/exchange-format.md), write the reference's f64\n"
      "output and LSE (and dQ, dK, dV when dout.npy is present) as ref_*.npy, what it guarantees\n"
      "per element as decided_*.npy (bool: true where ref is the correctly rounded exact value)\n"
      "and radius_*.npy (f64: |ref - exact| <= radius + half an ulp of ref, for every element),\n"
      "and the per-element error bound of a precision model as bound_*.npy\n"
      "(reference/bound/BOUND.md). The model defaults to the storage dtype's natural one: f32\n"
      "accumulation (f64 for f64), P kept in the accumulator, outputs rounded to the storage\n"
      "dtype, single pass. Nothing is written unless every case could be computed.");
  cmd->add_option("--in", a->in, "exchange folder with manifest.json")->required();
  cmd->add_option("--out", a->out, "write results here instead of into the --in folder");
  cmd->add_option("--accum", a->accum, "accumulation dtype of the kernel (f32 or f64)")->check(dtype_validator());
  cmd->add_option("--p-dtype", a->p_dtype, "dtype P is rounded to before P.V (default: the accumulator)")
      ->check(dtype_validator());
  cmd->add_option("--out-dtype", a->out_dtype, "dtype the kernel rounds its outputs to (default: storage)")
      ->check(dtype_validator());
  cmd->add_option("--block", a->block, "online-softmax key block size (0: single pass)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))->capture_default_str();
  cmd->add_option("--exp-ulps", a->exp_ulps, "accuracy of the kernel's exp, in ulps of the accumulator")
      ->check(CLI::Range(0.5, 1e6))->capture_default_str();
  cmd->add_flag("--flush-subnormals", a->flush_subnormals,
                "the kernel flushes subnormals (FTZ and DAZ): bound for that (reference/bound/BOUND.md section 12)");
  cmd->add_option("--threads", a->threads, "threads (0: all cores)")->check(CLI::Range(0, 1024));
  cmd->callback([a, &exit_code] {
    run(*a);
    exit_code = 0;
  });
}

}  // namespace attnv::cli
