// attnv fuzz: hunt for a case the kernel gets wrong with the fuzz differential judge
// (fuzz/numeric/differential_judge.h) and a guided random search (fuzz/search/search.h); shrink the first
// finding and leave a reproducer for `attnv repro`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/output_target.h"
#include "cli/seed_option.h"
#include "cli/dtype_option.h"
#include "fuzz/search/fuzz_run.h"
#include "fuzz/search/seed_corpus.h"
#include "cli/kernel_spec.h"
#include "fuzz/search/reproducer.h"
#include "core/core_kernel.h"
#include "io/text.h"
#include "problem/error.h"
#include "problem/support_guard.h"
#include "report/certificate.h"

namespace attnv::cli {
namespace {

namespace fs = std::filesystem;

struct FuzzArgs {
  std::string kernel;
  std::string dtype;
  double max_time = 60;
  int jobs = 1;
  std::string out = "attnv-fuzz-out";
  std::uint64_t seed = 1;
  double timeout = 10;
  std::vector<std::string> kernel_options;  // --kernel-option KEY=VALUE, in order
  std::string corpus;  // empty: the built-in seeds (fuzz/search/seed_corpus.h)
  bool no_corpus = false;
  bool no_backward = false;
  double shrink_time = 20;
};

// The seed corpus: every regular file of the folder (the inputs libFuzzer saved).
std::vector<std::vector<std::uint8_t>> read_corpus(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  if (ec) throw InputError("--corpus " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());  // the same order on every run (--seed reproduces)
  std::vector<std::vector<std::uint8_t>> out;
  for (const fs::path& p : files) {
    std::ifstream f(p, std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  return out;
}

// The seeds: --corpus DIR's files, none with --no-corpus, else the corpus built into attnv
// (fuzz/corpus/numeric as it was at build time), which an installed attnv run away from its
// checkout has too: without seeds, 30 s missed backward-only bugs the seeds find at once.
std::vector<std::vector<std::uint8_t>> seeds_of(const FuzzArgs& a) {
  if (a.no_corpus) return {};
  if (a.corpus.empty()) return fuzz::builtin_seed_corpus();
  std::error_code ec;
  if (!fs::is_directory(a.corpus, ec)) throw InputError("--corpus " + a.corpus + ": not a folder");
  return read_corpus(a.corpus);
}

int run_fuzz(const FuzzArgs& a) {
  {
    std::error_code ec;
    if (fs::exists(a.out, ec) && !fs::is_directory(a.out, ec))
      throw InputError("--out " + a.out + ": exists and is not a folder");
  }
  const KernelChoice choice = parse_kernel_spec(a.kernel, {a.timeout, a.kernel_options});
  const bool plugin = choice.info.spec.rfind("plugin:", 0) == 0;
  conformance::KernelFactory make = choice.make;
  // The core on one thread: many tiny cases, and the floating-point flags are per thread.
  if (choice.info.spec == "builtin:core")
    make = [] { return std::unique_ptr<Kernel>(std::make_unique<core::CoreKernel>(core::ForwardOptions{.threads = 1})); };

  // A kernel's supports() is honoured as certify honours it: a case it declines is never called,
  // the differential judge skips it ("the kernel declined the case") and the status line counts it.
  make = [inner = std::move(make)] {
    return std::unique_ptr<Kernel>(std::make_unique<SupportGuard>(inner()));
  };
  fuzz::SearchOptions opt;
  if (!a.dtype.empty()) opt.dtype = *parse_dtype(a.dtype);
  opt.max_seconds = a.max_time;
  opt.jobs = a.jobs;
  opt.seed = a.seed;
  // Floating-point flags are only seen in this process; a plugin runs in its worker.
  opt.judging.fp = plugin ? fuzz::FpCheck::off : fuzz::FpCheck::flags;
  opt.judging.backward = !a.no_backward;
  const std::unique_ptr<Kernel> probe = make();
  const Capabilities claims = fuzz::fuzzed_claims(*probe, opt.dtype);  // InputError: --dtype not claimed
  opt.seeds = seeds_of(a);
  fuzz::FuzzJob job;
  job.search = std::move(opt);
  job.shrink_seconds = a.shrink_time;
  job.out = a.out;
  job.kernel_spec = choice.info.spec;
  job.kernel_name = choice.info.name;
  const std::string env = kernel_environment(choice.info.spec);  // the same core path, when one was forced
  job.reproduce_line = "  reproduce:  " + (env.empty() ? "" : env + " ") + "attnv repro --kernel " +
                       io::printable(report::shell_quote(choice.info.spec)) +
                       io::printable(report::kernel_option_args(choice.info)) + ' ' +
                       io::printable(report::shell_quote(a.out)) + '\n';
  job.after_folder = path_note();
  return fuzz::fuzz_and_save(make, *probe, claims, job, std::cout, std::cerr);
}

}  // namespace

void add_fuzz_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<FuzzArgs>();
  auto* cmd = app.add_subcommand("fuzz", "Search for a case the kernel gets wrong (numeric fuzzing, no libFuzzer needed)");
  cmd->footer(
      "Mutates cases (shapes around tile edges, huge and tiny values, near-ties, masks, hidden\n"
      "NaN keys, ...) and judges each against the exact reference under the error bound of the\n"
      "kernel's precision model: outside the bound, NaN in the output, an input written, a\n"
      "second call differing, a crash or hang (plugins run in a worker process), a\n"
      "floating-point exception (in-process kernels). The backward too where the kernel\n"
      "claims it, and decode into contiguous and paged KV caches (a prompt fed by a plan of\n"
      "calls, each judged against its equivalent forward, the cache bit for bit).\n"
      "Inputs that reach new headroom / error levels are kept, so the search climbs.\n"
      "The first finding is shrunk and written to --out as an exchange folder; replay it with\n"
      "`attnv repro --kernel KERNEL DIR`.\n"
      "Exit status: 0 no finding in the time, 1 finding, 2 usage or input error or nothing judged\n"
      "(every input declined, or none run in the time), 3 attnv's own error on an input (its case\n"
      "is saved in --out; no verdict on the kernel).\n"
      "Example: attnv fuzz --kernel plugin:./libmykernel.so --dtype f16 --max-time 300 --jobs 2");
  cmd->add_option("--kernel", a->kernel, std::string("the kernel: ") + kKernelSpecForms)->type_name("KERNEL")->required();
  add_kernel_option_flag(*cmd, a->kernel_options);
  cmd->add_option("--dtype", a->dtype, "storage dtype of every case (default: every dtype the kernel claims)")
      ->check(dtype_validator());
  cmd->add_option("--max-time", a->max_time, "seconds to search")->check(CLI::Range(0.0, 1e7))->capture_default_str();
  cmd->add_option("--jobs", a->jobs, "independent searchers, each with its own kernel (plugin: its own worker)")
      ->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--out", a->out, "folder the reproducer of a finding is written to")->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the search (searcher i uses seed + i)")->check(seed_validator())->capture_default_str();
  cmd->add_option("--timeout", a->timeout, "seconds a plugin call may take before it is reported as hung")
      ->check(CLI::Range(0.01, 86400.0))->capture_default_str();
  cmd->add_option("--corpus", a->corpus, "folder of seed inputs (default: the seeds built into attnv, fuzz/corpus/numeric at build time)");
  cmd->add_flag("--no-corpus", a->no_corpus, "start from random inputs only")->excludes("--corpus");
  cmd->add_flag("--no-backward", a->no_backward, "judge the forward only, even where the kernel claims the backward");
  cmd->add_option("--shrink-time", a->shrink_time, "seconds spent shrinking a finding (or a case of attnv's own error)")->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->callback([a, &exit_code] { exit_code = run_fuzz(*a); });
}

}  // namespace attnv::cli
