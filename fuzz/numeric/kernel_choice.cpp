#include "fuzz/numeric/kernel_choice.h"

#include <cstdio>
#include <cstdlib>

#if ATTNV_FUZZ_CORE
#include "core/core_kernel.h"
#endif
#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"

#ifndef ATTNV_FUZZ_DEFAULT_KERNEL
#define ATTNV_FUZZ_DEFAULT_KERNEL "naive"
#endif

namespace attnv::fuzz {

std::string kernel_under_test_name() {
  const char* env = std::getenv("ATTNV_FUZZ_KERNEL");
  return env && *env ? env : ATTNV_FUZZ_DEFAULT_KERNEL;
}

std::unique_ptr<Kernel> make_kernel_under_test(const std::string& name) {
  if (name == "naive") return std::make_unique<kernels::NaiveKernel>(kernels::NaiveOptions{}, "naive");
  if (name == "naive_tiled") {
    kernels::NaiveOptions o;
    o.structure = kernels::Structure::tiled;
    return std::make_unique<kernels::NaiveKernel>(o, "naive_tiled");
  }
  // One thread: the fuzzer runs many tiny cases, and a crash report should have one stack.
#if ATTNV_FUZZ_CORE
  if (name == "core") return std::make_unique<core::CoreKernel>(core::ForwardOptions{.threads = 1});
#endif
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) return m.make();
  std::fprintf(stderr, "fuzz: unknown kernel '%s'; known: naive naive_tiled core", name.c_str());
  for (const kernels::Mutant& m : kernels::mutant_zoo()) std::fprintf(stderr, " %s", m.name.c_str());
  std::fprintf(stderr, "\n");
  std::exit(2);
}

}  // namespace attnv::fuzz
