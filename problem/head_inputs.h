#pragma once
// The per-head inputs a feature adds, described once: vectors [Hq] in the storage dtype, one value
// per query head (attention sinks' logits, ALiBi's slopes). What allocates, validates, copies,
// stores or hashes them loops over this table: make_zero_case and round_to_storage (case.cpp),
// check_case / check_views / check_decode_views (validate.cpp), CaseBuffers and case_from_views
// (buffers.cpp), the exchange folder (io/exchange.cpp), the call hash (cases/call_hash.cpp) and
// Python's keyword arguments (python/src/python_kernel.cpp). A new per-head input is one row here
// plus its members (Problem flag, Case values, views), its ABI fields (plugin/head_fields.h,
// attnv_plugin.h), its Problem flag's row in problem/problem_options.h and its arithmetic
// (docs/adding-a-feature.md).
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "problem/case.h"
#include "problem/tensor.h"

namespace attnv {

struct HeadInput {
  std::string_view name;  // the file <name>.npy, Python's keyword, the manifest flag's subject
  bool Problem::*present;
  std::vector<double> Case::*values;
  TensorRef KernelViews::*view;
  TensorRef DecodeViews::*decode_view;
  // Beyond representable in the storage dtype: finite always (a NaN or inf here reaches every row
  // of its head, with no hidden place to stay harmless in); >= 0 too where a negative value means
  // nothing a model does (an ALiBi slope < 0 would favour far keys).
  bool nonnegative;
  std::uint64_t hash_tag;  // its tag in the call hash: fixed forever (exports carry hashes)

  std::string_view rule() const { return nonnegative ? "finite and >= 0" : "finite"; }
  bool valid(double x) const { return std::isfinite(x) && (!nonnegative || x >= 0); }
};

inline constexpr HeadInput kHeadInputs[] = {
    {"sinks", &Problem::has_sinks, &Case::sinks, &KernelViews::sinks, &DecodeViews::sinks, false, 0x73696e6b73ull},
    {"alibi", &Problem::has_alibi, &Case::alibi, &KernelViews::alibi, &DecodeViews::alibi, true, 0x616c696269ull},
};

}  // namespace attnv
