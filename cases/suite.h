#pragma once
// What `attnv cases export` ran and `attnv cases check` must rerun identically: the tier, seed,
// dtypes, requirement filter and claims (attnv-export.json), and the one loop both use.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
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

// Per case folder (the manifest's "dir"), per input file present ("q.npy", "mask.npy", ...), the
// file_hash export computed after writing it: check recomputes them to judge R14 on the files.
using InputHashes = std::map<std::string, std::map<std::string, std::string>>;
// The input files a case folder may hold (docs/exchange-format.md, "Input files"): q, k, v, mask,
// bias, dout, and one <name>.npy per index array and per-head input (problem/features/),
// so a new input is judged by R14 through files without a line here. An
// export records the list it hashed ("input_files"): a file of that list missing from a folder's
// hashes did not exist at export, so its presence now is a write. An export written before the
// list was recorded hashed kLegacyInputFiles and is judged on those alone (its sinks.npy or
// alibi.npy were never hashed: absent from its record, they are not judged, not "appeared").
std::vector<std::string> input_files();
inline constexpr const char* kLegacyInputFiles[] = {"q.npy",      "k.npy",    "v.npy",           "mask.npy",       "bias.npy",
                                                    "kv_len.npy", "dout.npy", "cu_seqlens_q.npy", "cu_seqlens_k.npy"};
struct InputRecord {
  InputHashes hashes;
  std::vector<std::string> files;  // the names export looked for in every folder
};

// Called before each requirement x dtype runs (the recording kernel names its cases with it).
using JobStart = std::function<void(const std::string& requirement_id, DType dtype)>;
// Called after each requirement x dtype; it may amend the result before run_suite keeps it
// (check adds what the files show of R13 and R14).
using JobDone = std::function<void(conformance::RequirementResult&)>;

// Every requirement of the suite (or `only`), in requirement order then dtype order, each through
// conformance::run_requirement on `k`: what run_conformance(k, opt) does, with a hook before
// each job (the recording kernel names its cases with it). File kernels never claim strided
// layouts (a case folder has none), so R11 is "not claimed".
// `failures_dir`, when not empty, receives an evidence folder per failing case, as certify's
// --report DIR/failures (properties/conformance/evidence.h).
conformance::ConformanceReport run_suite(Kernel& k, const Suite& s, int max_findings, const JobStart& on_start,
                                         const JobDone& on_done, const std::string& failures_dir = "");

// attnv-export.json: write (atomically) and read (strictly; InputError naming the file).
// `inputs`, when given, receives the input hashes; nullopt for an export that recorded none.
void write_suite(const std::filesystem::path& file, const Suite& s, std::size_t cases, std::uint64_t bytes,
                 const InputRecord& inputs);
Suite read_suite(const std::filesystem::path& file, std::optional<InputRecord>* inputs = nullptr);

// The attnv version that wrote an export; `check` refuses another (its cases could differ).
std::string attnv_version();

}  // namespace attnv::cases
