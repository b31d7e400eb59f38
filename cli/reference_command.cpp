// attnv reference --in DIR [--out DIR2]: for every case of an exchange folder, the correctly
// rounded f64 output and LSE (and dQ, dK, dV when the case has dout.npy), and the per-element
// error bound of a precision model given by flags. Results go to <case dir>/ref_*.npy and
// <case dir>/bound_*.npy, in DIR itself or under DIR2 (which then gets its own manifest copy of
// the cases, so DIR2 is a complete exchange folder). A summary goes to reference.json.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/dtype_option.h"
#include "io/exchange.h"
#include "problem/error.h"
#include "problem/precision.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::cli {
namespace {

struct ReferenceArgs {
  std::string in, out;
  std::string accum, p_dtype, out_dtype;
  std::int64_t block = 0;
  double exp_ulps = 2;
  int threads = 0;
};

// The precision model for one case: the natural model of its storage dtype, overridden by flags.
PrecisionModel model_for(const Case& c, const ReferenceArgs& a) {
  PrecisionModel m = PrecisionModel::natural(c.problem.dtype, a.block);
  if (!a.accum.empty()) m.accum = *parse_dtype(a.accum);
  m.p_dtype = a.p_dtype.empty() ? m.accum : *parse_dtype(a.p_dtype);
  if (!a.out_dtype.empty()) m.out = *parse_dtype(a.out_dtype);
  m.exp_ulps = a.exp_ulps;
  return m;
}

Outputs as_outputs(bound::Bounds b) {
  return Outputs{std::move(b.out), std::move(b.lse), std::move(b.dq), std::move(b.dk), std::move(b.dv)};
}

void run(const ReferenceArgs& a) {
  namespace fs = std::filesystem;
  const fs::path in = a.in;
  if (!fs::is_directory(in)) throw InputError("--in " + a.in + ": the folder does not exist");
  if (!fs::exists(in / "manifest.json"))
    throw InputError("--in " + a.in + ": no manifest.json (see docs/exchange-format.md)");
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(in);
  const fs::path out = a.out.empty() ? in : fs::path(a.out);

  nlohmann::json summary = {{"format", "attnv-reference"}, {"version", 1}, {"cases", nlohmann::json::array()}};
  std::cout << "attnv reference: " << cases.size() << " case(s) from " << a.in << '\n';
  // Compute every case before writing anything: bad values found in a later case (NaN in a
  // visible key, say) must not leave the results of earlier cases half updated.
  struct Result {
    Outputs exact, bounds;
  };
  std::vector<Result> results;
  for (const io::ExchangeCase& ec : cases) {
    const Case& c = ec.c;
    const PrecisionModel m = model_for(c, a);
    const auto t0 = std::chrono::steady_clock::now();
    ref::FastStats stats;
    ref::FastOptions fo;
    fo.threads = a.threads;
    Outputs exact = c.has_dout() ? ref::fast_backward(c, fo, &stats) : ref::fast_forward(c, fo, &stats);
    bound::Bounds b = c.has_dout() ? bound::backward_bound(c, exact, m) : bound::forward_bound(c, exact, m);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "  " << std::left << std::setw(28) << c.id << ' ' << describe(c.problem) << "  "
              << stats.elements << " elements, " << stats.unresolved << " unresolved, " << std::fixed
              << std::setprecision(2) << seconds << " s\n";
    summary["cases"].push_back({{"id", c.id},
                                {"precision_model", describe(m)},
                                {"backward", c.has_dout()},
                                {"elements", stats.elements},
                                {"unresolved", stats.unresolved},
                                {"seconds", seconds}});
    results.push_back({std::move(exact), as_outputs(std::move(b))});
  }
  if (!a.out.empty() && fs::weakly_canonical(out) != fs::weakly_canonical(in))
    io::write_exchange(out, cases);  // DIR2 becomes a complete exchange folder
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const fs::path folder = io::case_dir(out, cases[k]);
    io::write_outputs(folder, "ref_", cases[k].c, results[k].exact, DType::f64);
    io::write_outputs(folder, "bound_", cases[k].c, results[k].bounds, DType::f64);
    summary["cases"][k]["dir"] = fs::relative(folder, out).generic_string();
  }
  // Written last and atomically: a summary that exists describes results that exist.
  const fs::path tmp = out / ".reference.json.tmp";
  {
    std::ofstream f(tmp);
    f << summary.dump(2) << '\n';
    if (!f) throw InputError("cannot write " + tmp.string());
  }
  fs::rename(tmp, out / "reference.json");
  std::cout << "wrote ref_*.npy and bound_*.npy into each case folder under " << out.string() << '\n';
}

}  // namespace

void add_reference_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReferenceArgs>();
  auto* cmd = app.add_subcommand("reference", "Write the correctly rounded reference and its error bound for every case of an exchange folder");
  cmd->footer(
      "For every case of an exchange folder (docs/exchange-format.md), write the correctly rounded\n"
      "f64 output and LSE (and dQ, dK, dV when dout.npy is present) as ref_*.npy, and the\n"
      "per-element error bound of a precision model as bound_*.npy (reference/bound/BOUND.md).\n"
      "The model defaults to the storage dtype's natural one: f32 accumulation (f64 for f64),\n"
      "P kept in the accumulator, outputs rounded to the storage dtype, single pass.");
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
  cmd->add_option("--threads", a->threads, "threads (0: all cores)")->check(CLI::Range(0, 1024));
  cmd->callback([a, &exit_code] {
    run(*a);
    exit_code = 0;
  });
}

}  // namespace attnv::cli
