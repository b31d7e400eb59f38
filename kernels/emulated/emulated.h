#pragma once
// Emulated attention kernels: every stored value and every arithmetic step rounded exactly
// (round to nearest even, problem/dtype.h round_to) in the dtypes a PrecisionModel declares.
// They are the kernels the error bound (reference/bound) is calibrated on: the correct ones
// must pass it, the ones with a planted bug (Bugs) must be caught by it or by the sign test.
//
// Structures (both read only visible keys; a row without one gives O = 0, LSE = -inf):
//   naive: pass 1 max m and sum l = sum exp(t - m); pass 2 O = sum_j fl_P(exp(t_j - m) / l) v_j.
//   tiled: FlashAttention-2 online softmax over key blocks of model.block (0: one block),
//          rescaling the running sum and output by exp(m_old - m_new) when the max grows;
//          O = acc / l at the end, P rounded to p_dtype before P.V.
// Backward (both structures): FlashAttention-2 style. P recomputed from the kernel's own LSE
// (kept in the accumulator dtype), D = rowsum(dO * O) with the kernel's rounded O,
// dP = dO V^T, dS = P (dP - D) (times the softcap's derivative), P and dS rounded to p_dtype
// before dV = P^T dO, dQ = scale dS K, dK = scale dS^T Q.
#include "problem/case.h"
#include "problem/precision.h"

namespace attnv::kernels::emulated {

enum class Structure { naive, tiled };

// Classic precision bugs, each switchable on its own.
struct Bugs {
  bool pv_accum_f16 = false;     // the P.V accumulator (and its rescaling) kept in f16
  bool sloppy_exp = false;       // exp with a 1e-3 relative error (sign varies with the argument)
  bool d_model_scale = false;    // scale 1/sqrt(d_model) with d_model = 8 * Dk instead of the problem's
  bool truncate_output = false;  // outputs truncated toward zero instead of rounded to model.out
  bool dk_missing_scale = false; // backward: dK = dS^T Q without the scale
  bool any() const {
    return pv_accum_f16 || sloppy_exp || d_model_scale || truncate_output || dk_missing_scale;
  }
};

struct Config {
  PrecisionModel model;
  Structure structure = Structure::naive;
  Bugs bugs;
};

// Outputs.out and Outputs.lse, every value representable in model.out.
// Throws InputError for a model it cannot emulate (accum narrower than storage, f16 accum).
Outputs forward(const Case& c, const Config& cfg);
// out, lse, dq, dk, dv. Requires c.dout.
Outputs backward(const Case& c, const Config& cfg);

}  // namespace attnv::kernels::emulated
