#pragma once
// A case laid out in memory the way a kernel receives it: every tensor in its storage dtype, in a
// chosen layout, with output buffers; and the way back from strided buffers to exact doubles.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "problem/case.h"
#include "problem/kernel.h"
#include "problem/tensor.h"

namespace attnv {

// BHTD: dense [B,H,T,D]. BTHD: dense [B,T,H,D] (the usual transformer layout).
// gapped: [B,H,T,D] order with unused elements after every row, head and batch, so a kernel
// that assumes dense strides reads the wrong data and one that reads past a row reads gaps.
enum class Layout : std::uint8_t { bhtd, bthd, gapped };
std::string_view layout_name(Layout l);
inline constexpr Layout kAllLayouts[] = {Layout::bhtd, Layout::bthd, Layout::gapped};
// The layout a name gives ("bhtd", "bthd", "gapped"), or nullopt.
std::optional<Layout> parse_layout(std::string_view name);

// The dtype LSE is stored in: f32, or f64 for f64 storage.
DType lse_dtype(DType storage);

class CaseBuffers {
 public:
  CaseBuffers(const Case& c, Layout layout, bool backward);
  CaseBuffers(const CaseBuffers&) = delete;
  CaseBuffers& operator=(const CaseBuffers&) = delete;

  const KernelViews& views() const { return views_; }
  KernelViews& views() { return views_; }
  // The kernel's outputs as exact doubles in the dense layout of Outputs.
  Outputs outputs() const;
  // Whether the inputs still hold what was written (a kernel must never write into them).
  bool inputs_unchanged() const;
  // Fills every element of the output views present (out, lse, dq, dk, dv, dsinks) with a NaN of
  // its own payload, which no arithmetic produces: the buffers start zeroed, so without it an
  // element a kernel never writes would pass wherever its exact value is 0 (a fully masked row,
  // a key no query sees). judge::run poisons before every call.
  void poison_outputs();
  // The output elements still holding that NaN after a call: how many, and the first one's name
  // ("out[b=0,h=1,i=3,d=0]"); count 0 when the kernel wrote every element.
  struct Unwritten {
    std::int64_t count = 0;
    std::string first;
    // The finding: "the kernel left 231 output elements unwritten (the first: out[b=0,h=0,i=0,d=0])".
    std::string message() const;
  };
  Unwritten unwritten_outputs() const;

 private:
  struct Buffer {
    std::vector<unsigned char> bytes;
    TensorRef ref;
  };
  Buffer make(DType t, std::array<std::int64_t, 4> shape, int rank, Layout layout);
  const Case& case_;
  std::vector<Buffer*> inputs_;
  Buffer q_, k_, v_, mask_, bias_, dout_, out_, lse_, dq_, dk_, dv_, dsinks_;
  std::vector<Buffer> heads_;  // one per row of kHeadInputs (problem/features/), sized once
  std::vector<std::vector<std::int64_t>> indices_;  // one per row of kIndexInputs (problem/features/)
  std::vector<std::vector<unsigned char>> input_copies_;
  KernelViews views_;
};

// Reads element `idx` (dense multi-index) of a strided tensor as an exact double / writes one.
double load(const TensorRef& t, const std::array<std::int64_t, 4>& idx);
void store(const TensorRef& t, const std::array<std::int64_t, 4>& idx, double x);
// Every element of a strided tensor as exact doubles, dense row-major; and back (each value
// rounded to the tensor's dtype).
std::vector<double> read_dense(const TensorRef& t);
void write_dense(const TensorRef& t, const std::vector<double>& dense);

// The inverse direction: a Case (exact doubles, dense) read from a kernel call's strided views.
// Used to run Case-based kernels behind the Kernel interface.
Case case_from_views(const Problem& p, const KernelViews& v);
// Writes Outputs (dense doubles, rounded to the view's dtype) into a call's output views.
void write_outputs(const Outputs& o, const Problem& p, const KernelViews& v);

// Runs a kernel through the interface on a case: lays it out, validates the views, calls it,
// and returns its outputs. Throws InputError when the kernel does not claim the problem.
Outputs run_forward(Kernel& k, const Case& c, Layout layout = Layout::bhtd);
// Forward, then backward on the forward's own out and lse. The case must have dout.
Outputs run_backward(Kernel& k, const Case& c, Layout layout = Layout::bhtd);

}  // namespace attnv
