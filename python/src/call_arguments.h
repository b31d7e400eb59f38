#pragma once
// What a Python kernel is called with: the case's tensors as NumPy arrays and the problem's
// options as keywords (python/README.md lists them), kept beside attnv's own copy of their values
// so that a write into any of them is seen after the call (`input_written`, R14).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "problem/case.h"
#include "numpy_io.h"
#include "problem/tensor.h"

namespace attnv::python {

class CallArguments {
 public:
  // q, k, v positionally; mask, bias, kv_len, scale, softcap, causal, alignment, window, dtype as
  // keywords, and the later inputs (sinks, alibi, cu_seqlens_q/k) only in a case that has them:
  // a function written before them takes no such keyword.
  // With `layout` (a kernel that claims strided): q, k, v are laid out with those views' strides
  // (to_numpy_strided), not dense.
  CallArguments(const Problem& p, const Case& c, const KernelViews* layout = nullptr);
  // No arguments yet (a decode call adds its own).
  CallArguments() = default;

  // One more input array (dout, and the forward's out and lse in a backward): positional when
  // `keyword` is false, else passed as `name=`.
  void add(const char* name, const std::vector<double>& values, std::vector<pybind11::ssize_t> shape, DType dtype,
           bool keyword, const TensorRef* layout = nullptr);
  // An int64 input (cache_len, block_table), a keyword.
  void add_index(const char* name, const std::vector<std::int64_t>& values, std::vector<pybind11::ssize_t> shape);
  // An array the function may write into (a decode's KV caches), positional: returned, so the
  // caller reads what the function left there; never checked unchanged.
  pybind11::array add_writable(const char* name, const std::vector<double>& values, std::vector<pybind11::ssize_t> shape,
                               DType dtype);
  // An output buffer the function writes into (`name=`, a keyword; output_buffer), for a kernel
  // that writes its outputs in place; `written` reads it back after the call.
  void add_output(const char* name, std::vector<pybind11::ssize_t> shape, DType dtype);
  // What the function wrote into output `name`: KernelFault(missing_output) when it left
  // elements unwritten; a NaN it wrote is the plain NaN (read_output).
  std::vector<double> written(const char* name, const std::string& fn_name) const;
  // A keyword that is not an array (lse=None for a kernel that does not claim it; scale, ...).
  void set(const char* name, pybind11::object value) { kw_[name] = std::move(value); }
  // The scalar options every call passes: scale (the effective one), softcap, window, dtype; a
  // forward also causal and alignment.
  void set_options(const Problem& p, bool with_causal);

  pybind11::object call(const pybind11::object& fn) const;
  // Throws KernelFault(out_of_bounds) naming the first input (or cache) past whose end or before
  // whose start the function wrote, else KernelFault(input_written) naming the first input it
  // changed.
  void check_unchanged(const std::string& fn_name) const;

 private:
  struct Input {
    std::string name;
    pybind11::array array;
    std::vector<double> values;
    std::vector<std::int64_t> indices;  // int64 inputs (kv_len, cu_seqlens_*)
    bool is_index = false;
  };
  struct Output {
    std::string name;
    pybind11::array array;
    DType dtype;
  };
  std::vector<Output> outputs_;
  // The guarded allocations of the float inputs, the writable caches and the outputs, by name.
  std::vector<std::pair<std::string, GuardedArray>> guarded_;
  std::vector<pybind11::object> positional_;
  pybind11::dict kw_;
  std::vector<Input> inputs_;
  pybind11::array mask_;
  std::vector<std::uint8_t> mask_values_;
};

// The problem as a Python kernel's supports() receives it: {"B", "Hq", "Hkv", "Tq", "Tk", "Dk",
// "Dv", "dtype", "scale" (the effective one), "softcap" (None when unset), "causal", "alignment",
// "window", "mask", "bias", "kv_len", one key per later option (sinks, alibi, varlen_sequences,
// mask_batch, ..., page_size), "describe"}.
pybind11::dict problem_dict(const Problem& p);

}  // namespace attnv::python
