#pragma once
// The one judge of a kernel call: run the kernel on a case in a layout, then judge what it wrote
// against the fast reference under the error bound of its own declared precision model. R1 and
// R2 of the conformance suite (certify, cases check, the GoogleTest suite, repro of their
// evidence) and attnv fuzz (its search, its reproducers, their repro, the libFuzzer target) all
// call judge_call, so a case fails or passes the same way whichever tool met it.
//
// A failure has the kind every report uses (problem/fail_kind.h). They are looked for in this
// order, the first one found is the verdict:
//   crashed, hung, refused, out_of_bounds, ...  the call failed (KernelFault: a plugin's crash,
//                    hang, canary or refusal; an in-process kernel that threw; kernel_call.h);
//   fp_exception     overflow, invalid operation or division by zero inside the kernel (FpCheck);
//   input_written    an input buffer changed;
//   missing_output   an output element left unwritten (it still holds the NaN attnv filled the
//                    output buffers with: CaseBuffers::poison_outputs);
//   nondeterministic a second call on fresh buffers gave different bits (Options::twice);
//   non_finite       NaN or inf where the exact value is finite (fully masked rows included);
//   outside_bound    an element outside its allowance (bound::compare; fully masked rows must be
//                    exactly O = 0, LSE = -inf; hidden keys' gradients exactly 0).
// What is not the kernel's is never charged to it: invalid views are HarnessError, and the
// reference declining a case (InputError from reference()) happens before the kernel is called.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "judge/kernel_call.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/fail_kind.h"
#include "problem/kernel.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::judge {

// An element whose rounding the fast reference could not decide (FastAccuracy::resolved 0) is
// within its radius plus half an ulp of the exact value, not the correctly rounded exact value
// the acceptance rule assumes: its bound grows by that much (+ 2^-1074), so a kernel at the exact
// value is never failed for the reference's doubt. (Found by the core's full tier: a dQ element
// of 1.36e-65 the reference left undecided at 0, radius 6.8e-61, was judged against 8.7e-79.)
void widen_unresolved(bound::Bounds& b, const reference::FastAccuracy& a);

// The exact outputs of a case and the bound of the kernel's declared model for them.
struct Reference {
  Outputs exact;
  bound::Bounds bounds;
  DType out_dtype = DType::f32;
};
// The fast reference (forward, or forward and backward) and the bound. Throws InputError when the
// fast reference declines the case (an error radius it cannot keep finite): attnv's limit, not a
// kernel finding; KernelFault when the kernel's precision query fails.
Reference reference(Kernel& k, const Case& c, bool backward, int threads = 0);

struct Run {
  Outputs out;
  bool inputs_unchanged = true;
  std::string fp_raised;  // the floating-point exceptions the call raised (FpCheck::flags)
  // Output elements the kernel never wrote (CaseBuffers::poison_outputs: they still hold attnv's
  // NaN, and read back as NaN): how many, and the first.
  CaseBuffers::Unwritten unwritten;
};
// Lays the case out, validates the views (HarnessError when attnv made bad ones), calls forward
// (and backward) through kernel_call, reads the outputs back. A kernel that does not claim the
// LSE is not asked for it (the plugin ABI passes NULL) and its out.lse stays empty: it is judged
// on O alone, and every comparison skips an empty tensor. The backward always gets an LSE buffer
// (it reads the forward's).
Run run(Kernel& k, const Case& c, Layout layout, bool backward, FpCheck fp = FpCheck::off);

struct Options {
  bool backward = false;          // call (and judge) the backward too; the case must have dout
  bool twice = false;             // a second call on fresh buffers must give the same bits
  FpCheck fp = FpCheck::off;      // floating-point exceptions inside the kernel
  // Told every call the judge makes (the conformance suite keeps them as evidence).
  std::function<void(const Case&, Layout, bool backward, const Outputs&)> on_run;
};

struct Judgement {
  std::optional<FailKind> failed;  // empty: the kernel passed
  std::string message;             // what was found (for a comparison, its per-tensor summary)
  std::string worst;               // the worst element, named, with the allowance it was judged by
  Outputs got;                     // the first call's outputs (empty when the call failed)
  bound::Comparison comparison;    // when the outputs were compared
  std::int64_t exercised = 0;      // elements judged under a finite bound, uninformative ones not
  std::int64_t uninformative = 0;  // judged elements whose allowance covers their visible values' range
  bool ok() const { return !failed; }
};

// Calls the kernel on the case and judges the call (the order of the kinds above). A KernelFault
// is returned as a failure of its kind, not thrown; KernelDeclined (the kernel's supports()
// declined the call: problem/support_guard.h) is thrown on, since nothing was called to judge.
Judgement judge_call(Kernel& k, const Case& c, Layout layout, const Reference& ref, const Options& opt);

// Judges outputs already obtained: non_finite or outside_bound, or a pass.
Judgement judge_outputs(const Case& c, Outputs got, const Reference& ref);

// The worst element of the first tensor that fails, named with the threshold it was judged by
// (the bound plus the output's and the reference's rounding); "" when every tensor passes.
std::string worst_failure(const Case& c, const bound::Comparison& cmp);
// The first element whose bits differ between two runs' outputs, named; "" when none.
std::string first_difference(const Case& c, const Outputs& a, const Outputs& b);

}  // namespace attnv::judge
