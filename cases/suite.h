#pragma once
// What `attnv cases export` ran and `attnv cases check` must rerun identically: the tier, seed,
// dtypes, requirement filter and claims (attnv-export.json), and the one loop both use.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cases/claims.h"
#include "properties/conformance/conformance.h"

namespace attnv::cases {

inline constexpr const char* kExportFile = "attnv-export.json";

struct Suite {
  conformance::Tier tier = conformance::Tier::quick;
  std::uint64_t seed = 20261121;
  std::vector<DType> dtypes;
  std::vector<std::string> only;  // requirement ids or names; empty: all
  Claims claims;
};

// Called before each requirement x dtype runs (the recording kernel names its cases with it).
using JobStart = std::function<void(const std::string& requirement_id, DType dtype)>;

// Every requirement of the suite (or `only`), in requirement order then dtype order, each through
// conformance::run_requirement on `k`: what run_conformance(k, opt) does, with a hook before
// each job (the recording kernel names its cases with it). File kernels never claim strided
// layouts (a case folder has none), so R11 is "not claimed".
conformance::ConformanceReport run_suite(Kernel& k, const Suite& s, int max_findings, const JobStart& on_start,
                                         const std::function<void(const conformance::RequirementResult&)>& on_done);

// attnv-export.json: write (atomically) and read (strictly; InputError naming the file).
void write_suite(const std::filesystem::path& file, const Suite& s, std::size_t cases, std::uint64_t bytes);
Suite read_suite(const std::filesystem::path& file);

// The attnv version that wrote an export; `check` refuses another (its cases could differ).
std::string attnv_version();

}  // namespace attnv::cases
