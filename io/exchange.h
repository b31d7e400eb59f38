#pragma once
// The exchange folder: how any program, in any language, hands attention problems to attnv and
// gets answers back. Layout (docs/exchange-format.md is the full description):
//   DIR/manifest.json           every case's parameters (attnv schema manifest)
//   DIR/<case dir>/q.npy k.npy v.npy [mask.npy bias.npy kv_len.npy dout.npy]   the inputs
//   DIR/<case dir>/<prefix>out.npy <prefix>lse.npy <prefix>dq.npy ...          results
// Result prefixes in use: "" for the kernel under test, "ref_" for the reference, "bound_" for
// the per-element error bound, "radius_" and "decided_" for what the reference guarantees per
// element (docs/exchange-format.md, "What the reference guarantees").
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/manifest.h"
#include "problem/case.h"

namespace attnv::io {

struct ExchangeCase {
  Case c;
  std::string dir;        // case folder relative to the exchange folder; empty: derive one
  std::string meta_json;  // the case's free-form "meta" object as JSON; empty when absent
};

// DIR/manifest.json alone (no tensors), size-checked and parsed; InputError naming the file.
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& dir);

// A whole text file (a manifest, attnv-export.json) of at most `max_bytes`: InputError naming the
// file when it is unreadable, not a regular file or larger (the message ends with
// `too_large_advice`), so a crafted file cannot make attnv read gigabytes.
std::string read_text_file(const std::filesystem::path& file, std::int64_t max_bytes, const std::string& too_large_advice);

// Read every case: manifest, then each case's tensors, shape- and dtype-checked, then
// check_case. Any problem is an InputError naming the file or the case (index and id).
std::vector<ExchangeCase> read_exchange_cases(const std::filesystem::path& dir);
std::vector<Case> read_exchange(const std::filesystem::path& dir);

// Write cases (each must pass check_case; ids must be unique and non-empty). Creates DIR and the
// case folders, writes the tensors, then manifest.json last, each file atomically. A case folder
// is owned by the exchange: other .npy files in it (stale inputs or results from an earlier run
// that would no longer match) are removed. Case folders are named by case_folder_name.
void write_exchange(const std::filesystem::path& dir, const std::vector<Case>& cases);
// Same, keeping each case's dir (when set; it must be safe) and meta.
void write_exchange(const std::filesystem::path& dir, const std::vector<ExchangeCase>& cases);

// The folder of a case: DIR / its "dir" in DIR's manifest, found by id (InputError if absent).
std::filesystem::path case_dir(const std::filesystem::path& dir, const Case& c);
std::filesystem::path case_dir(const std::filesystem::path& dir, const ExchangeCase& c);

// Results in a case folder, named <prefix>out.npy, <prefix>lse.npy, <prefix>dq.npy,
// <prefix>dk.npy, <prefix>dv.npy, with shapes out [B,Hq,Tq,Dv], lse [B,Hq,Tq], dq [B,Hq,Tq,Dk],
// dk [B,Hkv,Tk,Dk], dv [B,Hkv,Tk,Dv]. Prefixes are [A-Za-z0-9_.-]*.
//
// write_outputs writes each non-empty field of `o` (its size must match the case) in `dtype`
// (bf16 as '<f4', see write_npy_storage); LSE goes in the wider of `dtype` and f32, since
// kernels keep LSE in f32 whatever their storage. Values must be representable; NaN, +-inf
// are written as they are (an empty row's LSE is -inf).
void write_outputs(const std::filesystem::path& case_folder, std::string_view prefix, const Case& c,
                   const Outputs& o, DType dtype);
// Per-element flags in the layout of Outputs (each value 0 or 1, else InputError), written as
// bool ('|b1') files <prefix>out.npy ... with the shapes above; empty fields are skipped.
// `attnv reference` writes the fast reference's "decided" flags this way.
void write_output_flags(const std::filesystem::path& case_folder, std::string_view prefix, const Case& c,
                        const Outputs& flags);
// Reads whichever of the five files exist (others stay empty), shape-checked against the case.
// Any float dtype is accepted, and '<u2' as raw bf16 bits when the case's dtype is bf16.
Outputs read_outputs(const std::filesystem::path& case_folder, std::string_view prefix, const Case& c);

}  // namespace attnv::io
