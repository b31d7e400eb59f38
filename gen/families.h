#pragma once
// Seeded case families: random and adversarial problems with their values, the inputs from which
// the reference is cross-checked and the error bound calibrated. A (family, seed, dtype, size)
// names one case everywhere. Values are already rounded to the storage dtype.
#include <cstdint>
#include <string_view>
#include <vector>

#include "problem/case.h"

namespace attnv::gen {

enum class Family {
  random,             // moderate normal values, random shapes and every SPEC option
  large_logits,       // logits of magnitude ~1e3 (f16: as large as the range allows)
  near_ties,          // keys that differ by a few ulps: scores nearly tied
  long_rows,          // Tk >= 4096 keys (size permitting: see Size)
  cancelling_values,  // V columns that sum to ~0 under the weights: |O| << sum P|v|
  offset_values,      // V = 1e3 + small noise (f16: 1e2 offset keeps resolution)
  one_hot,            // one key dominates by a wide margin: P ~ e_j
  heavy_tails,        // heavy-tailed q, k, v
  fully_masked,       // rows with no visible key (kv_len 0, empty mask rows, bottom-right with Tq > kv_len, -inf bias)
  all_negative,       // every visible logit far below zero (no max subtraction underflows)
};

std::string_view family_name(Family f);
std::vector<Family> all_families();

// How large cases may be. small: for the multiprecision oracle (Tk <= 64, D <= 16);
// medium: calibration (Tk <= 2048, D <= 64); large: long rows and realistic sizes.
enum class Size { small, medium, large };

struct FamilyOptions {
  DType dtype = DType::f32;
  Size size = Size::small;
  bool with_dout = true;       // also draw dO for the backward
  bool allow_masks = true;     // causal, window, mask, bias, kv_len, softcap where the family allows
};

Case make_case(Family f, std::uint64_t seed, const FamilyOptions& opt);

}  // namespace attnv::gen
