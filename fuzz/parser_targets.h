#pragma once
// What the parser fuzz targets share: run a parser on arbitrary bytes, where an InputError is
// the correct answer to bad input and anything else (another exception, a crash, a sanitizer
// report) is a finding.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "problem/error.h"

namespace attnv::fuzz {

// Calls f(); swallows InputError (the documented answer to bad input) and aborts on any other
// exception, so libFuzzer saves the input: a parser must never leak std::out_of_range,
// nlohmann::json errors, std::bad_alloc from an absurd size, and the like.
template <class F>
void expect_only_input_errors(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: exception other than InputError: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: non-standard exception\n");
    std::abort();
  }
}

}  // namespace attnv::fuzz
