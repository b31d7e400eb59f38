#pragma once
// What a program answering through files claims: the capabilities the conformance suite holds
// it to and the precision model its error bound is derived for, per storage dtype. Read from
// the --claims file of `attnv cases export`, kept in attnv-export.json so `attnv cases check`
// replays under the same claims.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "problem/kernel.h"
#include "problem/precision.h"

namespace attnv::cases {

struct Claims {
  Capabilities caps;
  std::map<DType, PrecisionModel> precision;  // one per claimed dtype
  PrecisionModel model(DType storage) const;   // the claimed one, else the natural model
};

// Every forward feature for `dtypes` (gqa, both causal alignments, window, mask, bias, kv_len,
// softcap, custom scale, lse), natural precision models; no backward; never strided (files
// have no memory layout: R11 is "not claimed").
Claims default_claims(const std::vector<DType>& dtypes);

// The claims file: a JSON object whose keys override the defaults for `dtypes`:
//   {"dtypes": ["f32", "bf16"], "backward": true, "softcap": false, ...,
//    "precision": {"bf16": {"accum": "f32", "p_dtype": "bf16", "out": "bf16", "block": 64, "exp_ulps": 2}}}
// Capability keys are the fields of attnv::Capabilities. Unknown keys, wrong types and
// "strided": true or "decode": true (neither can be held to through files) are InputErrors
// naming the file and the key.
Claims read_claims(const std::filesystem::path& file, const std::vector<DType>& dtypes);

// "" when `a` and `b` claim the same capabilities and dtypes; otherwise names the first key that
// differs and both values ("\"backward\": true here, false in <b_name>"). Precision is not compared.
std::string capability_difference(const Claims& a, const Claims& b, const std::string& b_name);

// attnv-export.json's "claims" object (every key written) and back. `where` names the source in
// messages.
// `route`: files (a claim no case folder can hold, decode or strided, is refused as true) or
// in_process (the Python module's kernels, called by attnv itself: its own checks refuse what
// it cannot hold them to).
enum class ClaimsRoute { files, in_process };
std::string claims_to_json(const Claims& c);
Claims claims_from_json(const std::string& json_text, const std::string& where, const std::vector<DType>& dtypes,
                        ClaimsRoute route = ClaimsRoute::files);

}  // namespace attnv::cases
