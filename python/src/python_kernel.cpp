#include "python_kernel.h"

#include <pybind11/numpy.h>

#include <array>
#include <cmath>
#include <sstream>
#include <vector>

#include "problem/buffers.h"
#include "problem/head_inputs.h"
#include "problem/index_inputs.h"
#include "problem/kernel_fault.h"

namespace py = pybind11;

namespace attnv::python {
namespace {

// The NumPy dtype a storage dtype travels in. NumPy has no bfloat16: bf16 values go as float32
// (every bf16 value is exact in float32), and the answer is rounded to bf16 on the way back.
const char* numpy_dtype(DType d) {
  switch (d) {
    case DType::f64: return "float64";
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "float32";
  }
  return "float64";
}

// Exact doubles (dense, row-major) as a NumPy array of `shape` in the storage's NumPy dtype.
py::array to_numpy(const std::vector<double>& values, std::vector<py::ssize_t> shape, DType d) {
  py::array_t<double> a(shape);
  std::copy(values.begin(), values.end(), a.mutable_data());
  return py::reinterpret_steal<py::array>(a.attr("astype")(numpy_dtype(d)).release());
}

std::string shape_text(const std::vector<py::ssize_t>& s) {
  std::ostringstream o;
  o << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  return o.str() + "]";
}

// One returned tensor, checked for type, shape and dtype, as exact doubles. `what` names it in
// messages ("out", "lse").
std::vector<double> read_output(const py::handle& value, const char* what, const std::vector<py::ssize_t>& shape,
                                const char* dtype, const std::string& fn) {
  const py::module_ np = py::module_::import("numpy");
  if (!py::isinstance<py::array>(value)) {
    // Tensors of other libraries (torch, jax) convert through __array__; anything else is wrong.
    if (!py::hasattr(value, "__array__"))
      throw KernelFault(FaultKind::missing_output, fn + " returned " + what + " as " +
                                                       std::string(py::str(py::type::of(value).attr("__name__"))) +
                                                       ", expected a NumPy array (or an object with __array__)");
  }
  py::array a = np.attr("asarray")(value);
  std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape)
    throw KernelFault(FaultKind::missing_output, fn + " returned " + what + " of shape " + shape_text(got) +
                                                     ", expected " + shape_text(shape));
  const std::string got_dtype = py::str(a.dtype());
  if (got_dtype != dtype)
    throw KernelFault(FaultKind::missing_output, fn + " returned " + what + " as " + got_dtype + ", expected " + dtype +
                                                     " (the storage dtype; docs/semantics.md)");
  py::array_t<double, py::array::c_style | py::array::forcecast> d = a;
  return std::vector<double>(d.data(), d.data() + d.size());
}

// Whether `a` still holds `values` (NaN equal to NaN): the arrays the function received are
// attnv's copies, so a write into them is only seen by looking after the call (R14).
bool unchanged(const py::array& a, const std::vector<double>& values) {
  const py::array_t<double, py::array::c_style | py::array::forcecast> d = a;
  if (static_cast<std::size_t>(d.size()) != values.size()) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = d.data()[i], y = values[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

// The Python exception as one line: "ValueError: shapes do not match".
std::string exception_text(const py::error_already_set& e) {
  std::string type = "exception";
  try {
    type = py::str(e.type().attr("__name__"));
  } catch (...) {
  }
  const std::string msg = py::str(e.value());
  return msg.empty() ? type : type + ": " + msg;
}

}  // namespace

PythonKernel::PythonKernel(py::object fn, std::string name, cases::Claims claims, py::tuple refused_types)
    : fn_(std::move(fn)), name_(std::move(name)), claims_(std::move(claims)), refused_types_(std::move(refused_types)) {}

void PythonKernel::forward(const Problem& p, const KernelViews& views) {
  if (interrupted_) throw HarnessError("interrupted");
  const Case c = case_from_views(p, views);
  const Shape& s = p.shape;
  py::gil_scoped_acquire gil;
  Outputs o;
  try {
    py::dict kw;
    kw["mask"] = py::none();
    // [Tq, Tk], or [B|1, Hq|1, Tq, Tk] when the mask or bias has its own leading extents.
    const auto extents = [&](Leading d) -> std::vector<py::ssize_t> {
      if (!d.any()) return {s.Tq, s.Tk};
      const auto e = broadcast_extents(s, d);
      return {e[0], e[1], e[2], e[3]};
    };
    if (p.has_mask) {
      py::array_t<bool> m(extents(p.mask_dims));
      for (std::size_t i = 0; i < c.mask.size(); ++i) m.mutable_data()[i] = c.mask[i] != 0;
      kw["mask"] = m;
    }
    kw["bias"] = p.has_bias ? py::object(to_numpy(c.bias, extents(p.bias_dims), p.dtype)) : py::none();
    // The per-head inputs (sinks, alibi) only when the case has them (a kernel that claims them):
    // functions written before them take no such keyword, and passing sinks=None to them would
    // be a TypeError.
    for (const HeadInput& in : kHeadInputs)
      if (p.*in.present) kw[in.name.data()] = to_numpy(c.*in.values, {s.Hq}, p.dtype);
    const auto int64s = [](const std::vector<std::int64_t>& x) {
      py::array_t<std::int64_t> a(static_cast<py::ssize_t>(x.size()));
      std::copy(x.begin(), x.end(), a.mutable_data());
      return a;
    };
    // The index arrays, int64: kv_len is None when absent; a later one (packed sequences'
    // bounds) is passed only when present, like the sinks (index_inputs.h says why).
    for (const IndexInput& in : kIndexInputs)
      if (in.present(p)) kw[in.name.data()] = int64s(c.*in.values);
      else if (in.python_none_when_absent) kw[in.name.data()] = py::none();
    kw["scale"] = p.effective_scale();
    kw["softcap"] = p.softcap ? py::object(py::float_(*p.softcap)) : py::none();
    kw["causal"] = p.causal;
    kw["alignment"] = std::string(alignment_name(p.alignment));
    kw["window"] = py::make_tuple(p.window.left, p.window.right);
    kw["dtype"] = std::string(dtype_name(p.dtype));
    const py::array q = to_numpy(c.q, {s.B, s.Hq, s.Tq, s.Dk}, p.dtype);
    const py::array k = to_numpy(c.k, {s.B, s.Hkv, s.Tk, s.Dk}, p.dtype);
    const py::array v = to_numpy(c.v, {s.B, s.Hkv, s.Tk, s.Dv}, p.dtype);
    const py::object result = fn_(q, k, v, **kw);
    // Inputs are read-only by contract (R14): the first one written is the finding.
    const auto written = [&](const char* what) {
      throw KernelFault(FaultKind::input_written, name_ + " wrote into its input " + what);
    };
    if (!unchanged(q, c.q)) written("q");
    if (!unchanged(k, c.k)) written("k");
    if (!unchanged(v, c.v)) written("v");
    if (p.has_bias && !unchanged(kw["bias"].cast<py::array>(), c.bias)) written("bias");
    for (const HeadInput& in : kHeadInputs)
      if (p.*in.present && !unchanged(kw[in.name.data()].cast<py::array>(), c.*in.values)) written(in.name.data());
    if (p.has_mask) {
      const py::array_t<bool> m = kw["mask"].cast<py::array_t<bool>>();
      for (std::size_t i = 0; i < c.mask.size(); ++i)
        if (m.data()[i] != (c.mask[i] != 0)) written("mask");
    }
    const auto int64s_written = [&](const char* key, const std::vector<std::int64_t>& x) {
      const py::array_t<std::int64_t> n = kw[key].cast<py::array_t<std::int64_t>>();
      for (std::size_t i = 0; i < x.size(); ++i)
        if (n.data()[i] != x[i]) written(key);
    };
    for (const IndexInput& in : kIndexInputs)
      if (in.present(p)) int64s_written(in.name.data(), c.*in.values);
    // `out`, or `(out, lse)`; lse is required when it is claimed and ignored otherwise.
    py::object out = result, lse = py::none();
    if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
      const py::sequence seq = result;
      if (seq.size() < 1 || seq.size() > 2)
        throw KernelFault(FaultKind::missing_output, name_ + " returned a sequence of " + std::to_string(seq.size()) +
                                                         " items, expected out or (out, lse)");
      out = seq[0];
      if (seq.size() == 2) lse = seq[1];
    }
    o.out = read_output(out, "out", {s.B, s.Hq, s.Tq, s.Dv}, numpy_dtype(p.dtype), name_);
    if (views.lse.present() && (claims_.caps.lse || !lse.is_none())) {
      if (lse.is_none())
        throw KernelFault(FaultKind::missing_output, name_ + " returned no lse, but lse is claimed: return (out, lse)");
      o.lse = read_output(lse, "lse", {s.B, s.Hq, s.Tq}, numpy_dtype(lse_dtype(p.dtype)), name_);
    }
  } catch (py::error_already_set& e) {
    // KeyboardInterrupt and SystemExit are the user stopping the run, not a fault of the kernel.
    // The run stops at the next call (certify() raises it again once the suite returns).
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
      interrupted_ = true;
      throw HarnessError("interrupted");
    }
    const bool refused = PyErr_GivenExceptionMatches(e.type().ptr(), refused_types_.ptr()) != 0;
    const std::string text = name_ + " raised " + exception_text(e);
    e.restore();  // PyErr_Clear via the fetched error: nothing stays pending for the next call
    PyErr_Clear();
    throw KernelFault(refused ? FaultKind::refused : FaultKind::crashed, text);
  }
  write_outputs(o, p, views);
}

}  // namespace attnv::python
