#pragma once
// The reference self-check: the fast double-double reference against the multiprecision oracle,
// element by element, on every adversarial case family and storage dtype; and, on the same cases,
// how far a plain f64 naive attention lands from the truth (why a double-double reference is
// needed at all). Used by `attnv selfcheck` (the main job until `attnv certify` exists) and by
// the test suite.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "gen/families.h"

namespace attnv::selfcheck {

struct SelfCheckOptions {
  std::int64_t cases_per_family = 12;   // small cases: every row checked against the oracle
  std::int64_t medium_cases_per_family = 3;  // realistic sizes: sampled rows only
  std::int64_t rows_per_medium_case = 4;
  std::uint64_t seed = 1;
  std::vector<DType> dtypes = {DType::f32, DType::f16, DType::bf16};
  bool backward = true;                // small cases also compare dQ, dK, dV
  std::function<void(const std::string&)> progress;  // one call per case; may be empty
};

struct FamilyReport {
  std::string family;
  std::int64_t cases = 0;
  std::int64_t compared = 0;    // elements compared with the oracle (out, lse, gradients)
  std::int64_t resolved = 0;    // of those, elements whose correct rounding both references decided
  std::int64_t mismatches = 0;  // resolved elements that differ, or unresolved ones outside the radii
  std::int64_t unresolved = 0;  // elements left within their radii (exact ties, cancellation to ~0)
  std::map<std::string, std::int64_t> unresolved_by_tensor;  // "out", "lse", "dq", "dk", "dv"
  std::int64_t unresolved_tiny = 0;  // unresolved with |value| below the smallest normal double
  double naive_worst_ulps = 0;  // plain f64 naive attention: worst |naive - exact| in f64 ulps of exact
  std::string naive_worst_case;
  std::vector<std::string> mismatch_examples;  // first few, for the report
};

struct SelfCheckReport {
  std::vector<FamilyReport> families;
  double seconds = 0;
  FamilyReport total() const;
  // The families that compared no element (--cases 0 --medium-cases 0, say): "0 mismatches" there
  // is no evidence, so the result is NOT EXERCISED, never PASS.
  std::vector<std::string> not_exercised() const;
  bool ok() const { return total().mismatches == 0 && not_exercised().empty(); }
};

SelfCheckReport run_selfcheck(const SelfCheckOptions& opt);

// One tensor of the fast reference against the oracle, at the dense indices `index` (all when
// empty). Where both decided the rounding, the doubles must be equal bit for bit. Otherwise
// (exact ties and exact cancellation) they must agree within both radii plus one ulp: each
// double is within its radius plus half an ulp of the exact value. Counts go into `r`.
struct TensorPair {
  const char* name;
  const std::vector<double>& fast;
  const std::vector<double>& oracle;
  const std::vector<double>& radius;         // fast reference's radius
  const std::vector<double>& resolved;       // fast reference's resolved flags
  const std::vector<double>& oracle_radius;  // the oracle's radius (~1e-97 of the terms)
};
void compare_with_oracle(const TensorPair& t, const std::vector<std::size_t>& index,
                         const std::string& case_id, FamilyReport& r);
void print_selfcheck(const SelfCheckReport& r, std::ostream& os);

}  // namespace attnv::selfcheck
