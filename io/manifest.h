#pragma once
// manifest.json of an exchange folder: the problem parameters of every case, one entry each.
// The format is documented in docs/exchange-format.md and `attnv schema manifest`. Parsing is
// strict (unknown keys, wrong types, missing keys and unsafe folder names are InputErrors that
// name the case and the key) because a silently ignored key, say a misspelt "causal", would
// verify a kernel against a different problem than the one its author meant.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "problem/problem.h"

namespace attnv::io {

inline constexpr std::string_view kManifestFile = "manifest.json";
inline constexpr std::string_view kExchangeFormat = "attnv-exchange";
inline constexpr int kExchangeVersion = 1;
// Largest manifest.json read_exchange reads, checked with the file's size before it is read:
// 64 MiB, about 120,000 cases as attnv writes them (a quick-tier `attnv cases export` of one
// dtype is about 2 MB, a standard-tier one about 15 MB). Parsing takes memory and time in
// proportion (measured: a 16 MB manifest about 1 s and 120 MB; a 200 MB one 20 s and 825 MB), all
// before the first case is checked.
// parse_manifest itself takes text of any size.
inline constexpr std::int64_t kMaxManifestBytes = std::int64_t{64} << 20;

struct ManifestEntry {
  std::string id;         // unique within the manifest, non-empty
  std::string dir;        // the case folder, relative to the exchange folder (see safe_relative_dir)
  Problem problem;
  bool has_dout = false;  // dout.npy is present (a backward case)
  std::string meta_json;  // the "meta" object as compact JSON; empty when absent
};

// Parse manifest text; `name` prefixes messages ("/x/manifest.json: case 2 (id 'a'): ...").
// Checks the JSON structure, ids unique, dirs safe and distinct, and check_problem per case.
std::vector<ManifestEntry> parse_manifest(std::string_view text, std::string_view name);
// Serialize (pretty-printed, keys in a fixed order). Entries are not validated here.
std::string render_manifest(const std::vector<ManifestEntry>& entries);

// The keys of a case entry: those format 1 requires, in the order they are written; and those
// it may leave out ("meta" and the later options of problem/features/). A test holds
// manifest_schema() to both.
std::vector<std::string> required_case_keys();
std::vector<std::string> optional_case_keys();

// Empty when `dir` is a safe case folder name: relative, '/'-separated, no "." or ".." or empty
// segments, no backslash or control characters, each segment at most 255 bytes. Otherwise the
// reason it is not.
std::string unsafe_dir_reason(std::string_view dir);
// A safe, unique folder name from a case's position and id: "0007_near_ties_17".
std::string case_folder_name(std::size_t index, std::string_view id);

}  // namespace attnv::io
