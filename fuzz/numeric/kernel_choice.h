#pragma once
// Which attnv::Kernel the numeric fuzz target tests: ATTNV_FUZZ_KERNEL in the environment, else
// the compile-time ATTNV_FUZZ_DEFAULT_KERNEL, else "naive". Names: "naive", "naive_tiled"
// (online softmax, key blocks of 16), "core", or any mutant of kernels/mutants.h
// ("no_max_subtraction", "zero_padded_tail", "lost_rescale", ...).
#include <memory>
#include <string>

#include "problem/kernel.h"

namespace attnv::fuzz {

std::string kernel_under_test_name();
// Exits with status 2 and the list of names when the name is unknown.
std::unique_ptr<Kernel> make_kernel_under_test(const std::string& name);

}  // namespace attnv::fuzz
