#pragma once
// RapidCheck generators for property cases: a problem, its values and a layout.
//
// What shrinks: the problem (every dimension toward 1, every option toward "off", the dtype
// toward f32, the layout toward bhtd) and the value family (toward `moderate`). The values
// themselves come from a seeded filler (make_values), so a counterexample is small and names
// its seed; RapidCheck's reproduce string replays it exactly.
#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <optional>
#include <vector>

#include <rapidcheck.h>

#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/kernel.h"

namespace attnv::generators {

// How the values of a case are drawn.
enum class ValueFamily {
  moderate,      // N(0, 1)
  large_logits,  // logits of magnitude ~2e3 and beyond
  far_negative,  // every visible logit far below zero (~ -2e3): exp(t) underflows without the max
  near_ties,     // keys a few ulps apart under large queries: logits nearly tied
  one_hot,       // one key per (batch, head) dominates every row
  subnormals,    // Q, K, V with many subnormal values of the storage dtype
  f16_top,       // V near the top of the f16 range (6e4 .. 65504)
};
std::string_view family_name(ValueFamily f);

struct GenOptions {
  std::vector<DType> dtypes{DType::f32, DType::f16, DType::bf16, DType::f64};
  std::vector<ValueFamily> families{ValueFamily::moderate, ValueFamily::large_logits, ValueFamily::far_negative,
                                    ValueFamily::near_ties, ValueFamily::one_hot, ValueFamily::subnormals,
                                    ValueFamily::f16_top};
  bool options = true;            // causal, alignment, window, mask, bias, kv_len, softcap, scale
  bool positional = true;         // causal and window (off: the problem is equivariant under
                                  // query and key permutations)
  bool kv_len = true;             // per-batch key lengths
  bool grouped = false;           // G = Hq / Hkv >= 2 (GQA, and MQA when Hkv = 1)
  bool masked_rows = false;       // make rows with no visible key likely
  bool with_dout = false;         // draw dO for the backward
  // Attention sinks, where claimed (with dO too: a kernel that claims sinks and the backward
  // claims their gradient). Off by default, on where the requirement's statement holds with a
  // sink (docs/semantics.md lists them): a sink breaks invariances other checks rely on (its
  // logit does not move with a key translation or a bias row shift; weights no longer sum to 1).
  bool sinks = false;
  // ALiBi slopes, where claimed (with dO too, for R2); off by default: a position-dependent logit
  // breaks the query and key permutation invariances, and sub-cases would need the slopes.
  bool alibi = false;
  // Packed variable-length sequences, where claimed (with dO too: a kernel that claims them and
  // the backward claims their backward). Off by default: sub-cases (permutations, batch splits)
  // would need their own sequence bounds.
  bool varlen = false;
  bool layouts = true;            // off: always bhtd
  std::int64_t max_work = 200000; // cap on B*Hq*Tq*Tk*(Dk+Dv): keeps the suite fast
  std::int64_t max_tk = 1000;
  std::int64_t max_dv = 256;
  // Production shapes (issue 16): toy shapes alone reached a tiled kernel's main path (Tq >= 64,
  // D in {64, 128}, a ragged key tile) in ~3% of standard-tier cases, so a bug living only there
  // needed luck. Case i of a CaseStream is production-shaped when (i + 1) % production_every == 0:
  // an exact share of every stream and tier. 0: never, for requirements whose check cannot take
  // such a shape (each exemption says why in its requirement file, properties/requirements/).
  int production_every = 32;
  // A production case is bounded by this instead of max_work and max_tk (which would shrink it
  // back to a toy). It bounds the long dimension; the smallest production shape (one 64-tile
  // plus a tail each way) is always drawn whole.
  std::int64_t production_max_work = 20000000;
  bool production = false;        // draw a production shape (CaseStream sets it case by case)
  // Set: draw only problems the kernel claims (no GQA, alignment, window, mask, bias, kv_len,
  // softcap, custom scale or strided layout it does not claim, nor a claim it withdraws in the
  // drawn dtype: fit_to_claims), so a kernel that claims little still gets every case judged.
  // When a feature is claimed the draws are the same as unset.
  std::optional<Capabilities> claims;
};

struct PropertyCase {
  Case c;
  Layout layout = Layout::bhtd;
  ValueFamily family = ValueFamily::moderate;
  std::uint64_t seed = 0;
};

// The values of a problem, drawn from the family with the seed, rounded to the storage dtype.
// Also draws kv_len, the mask and the bias (which are values of the case, not of the problem).
Case make_values(const Problem& p, ValueFamily family, std::uint64_t seed, bool with_dout, bool masked_rows);

rc::Gen<Problem> gen_problem(const GenOptions& opt);
rc::Gen<PropertyCase> gen_property_case(const GenOptions& opt = {});

// Whether case `index` (from 0) of a stream is production-shaped (GenOptions::production_every).
bool is_production_index(int production_every, std::int64_t index);

// The cases of one seeded stream, in order, every production_every-th production-shaped. The
// toy cases are the ones gen_property_case(opt) draws from the same Random: adding the share
// changed no other case of a stream. Not thread-safe (RapidCheck's generation is not).
class CaseStream {
 public:
  CaseStream(const GenOptions& opt, std::uint64_t seed);
  PropertyCase next();

 private:
  int every_;
  rc::Gen<PropertyCase> toy_, production_;
  rc::Random random_;
  std::int64_t index_ = 0;
};

// Prints the problem (describe), family, seed, layout, and the tensors when they are small.
void showValue(const PropertyCase& pc, std::ostream& os);
// One line naming the case: "moderate seed=17 bhtd | B=1 Hq=2 ...".
std::string case_label(const PropertyCase& pc);

}  // namespace attnv::generators
