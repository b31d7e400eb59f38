#pragma once
// Exact doubles to NumPy arrays and back, for the calls into a Python kernel: the storage dtype's
// NumPy dtype, the checks on what the function returns (type, shape, dtype: a wrong one is the
// kernel's `missing_output`), and the check that an input array it was handed is unchanged.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "problem/dtype.h"

namespace attnv::python {

// The NumPy dtype a storage dtype travels in. NumPy has no bfloat16: bf16 values go as float32
// (every bf16 value is exact in float32), and the answer is rounded to bf16 on the way back.
const char* numpy_dtype(DType d);

// Exact doubles (dense, row-major) as a NumPy array of `shape` in the storage's NumPy dtype.
pybind11::array to_numpy(const std::vector<double>& values, std::vector<pybind11::ssize_t> shape, DType d);
// An input array as a kernel receives it: `values` laid out with `strides` (in elements; dense
// row-major when empty, else as a kernel's view has them: BTHD order, or gaps between rows and
// heads), a view into a larger NaN-filled array that leaves a guard of kGuardBytes before and
// after it. A function that reads past either end (a C kernel handed .ctypes.data, an
// off-by-one slice through as_strided) reads NaN there, every run, and its answer shows it;
// one that assumes dense strides reads other elements or the NaN in the gaps.
// A write there is seen after the call (guards_intact): the kernel wrote past its input.
inline constexpr std::int64_t kGuardBytes = 4096;
struct GuardedArray {
  pybind11::array view;  // what the function receives
  pybind11::array base;  // the whole allocation: guard, the view's span, guard
  std::int64_t guard = 0, span = 0;  // in elements
  // Both guards still hold only NaN.
  bool guards_intact() const;
};
// An output buffer the function writes into (a kernel that writes its outputs in place): `shape`,
// dense, between the same guards, every element attnv's "never written" NaN (the bits of
// CaseBuffers::poison_outputs; bf16 travels as float32 holding bf16 values).
GuardedArray output_buffer(std::vector<pybind11::ssize_t> shape, DType d);
// How many elements of an output buffer still hold that NaN, and the first one's index ("[0, 1, 3, 0]").
struct Unwritten {
  std::int64_t count = 0;
  std::string first;
};
Unwritten unwritten(const pybind11::array& buffer, DType d);

GuardedArray to_input_array(const std::vector<double>& values, std::vector<pybind11::ssize_t> shape,
                            std::vector<std::int64_t> strides, DType d);
// int64 values as a 1-d NumPy array.
pybind11::array int64_array(const std::vector<std::int64_t>& values);

// Runs pybind11's one-time NumPy set-up (function-local statics that import numpy): to be called
// with the GIL held before jobs on other threads convert arrays. Set up lazily instead, the first
// thread holds the static's guard while the import gives the GIL away, and the next thread
// takes the GIL and waits on that guard: a deadlock.
void prepare_numpy();

// "[2, 3, 4]".
std::string shape_text(const std::vector<pybind11::ssize_t>& s);

// One returned tensor, checked for type, shape and dtype, as exact doubles. `what` names it in
// messages ("out", "dq"); `fn` names the function.
std::vector<double> read_output(const pybind11::handle& value, const char* what,
                                const std::vector<pybind11::ssize_t>& shape, const char* dtype, const std::string& fn);

// Whether `a` still holds `values` (NaN equal to NaN): the arrays the function received are
// attnv's copies, so a write into them is only seen by looking after the call (R14).
bool unchanged(const pybind11::array& a, const std::vector<double>& values);
bool unchanged(const pybind11::array& a, const std::vector<std::int64_t>& values);

}  // namespace attnv::python
