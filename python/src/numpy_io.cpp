#include "numpy_io.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "problem/buffers.h"
#include "problem/kernel_fault.h"

namespace py = pybind11;

namespace attnv::python {

const char* numpy_dtype(DType d) {
  switch (d) {
    case DType::f64: return "float64";
    case DType::f32: return "float32";
    case DType::f16: return "float16";
    case DType::bf16: return "float32";
  }
  return "float64";
}

py::array to_numpy(const std::vector<double>& values, std::vector<py::ssize_t> shape, DType d) {
  py::array_t<double> a(shape);
  std::copy(values.begin(), values.end(), a.mutable_data());
  return py::reinterpret_steal<py::array>(a.attr("astype")(numpy_dtype(d)).release());
}

bool GuardedArray::guards_intact() const {
  // Read in C++ (every input of every call is checked: NumPy calls here cost more than the call).
  const DType carrier = base.itemsize() == 8 ? DType::f64 : base.itemsize() == 4 ? DType::f32 : DType::f16;
  const char* bytes = static_cast<const char*>(base.data());
  const auto all_nan = [&](std::int64_t from, std::int64_t n) {
    const TensorRef t{const_cast<char*>(bytes) + from * base.itemsize(), carrier, 1, {n, 0, 0, 0}, {1, 0, 0, 0}};
    const std::vector<double> x = read_dense(t);
    return std::all_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
  };
  return all_nan(0, guard) && all_nan(guard + span, guard);
}

GuardedArray to_input_array(const std::vector<double>& values, std::vector<py::ssize_t> shape,
                            std::vector<std::int64_t> strides, DType d) {
  const bool dense = strides.empty();
  if (dense) {
    strides.assign(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  }
  std::int64_t span = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) span += (shape[i] - 1) * strides[i];
  const py::dtype dt(numpy_dtype(d));
  const std::int64_t guard = kGuardBytes / dt.itemsize();
  // Written from C++ through attnv's own stores (no NumPy temporaries: this runs for every input
  // of every call). bf16 travels as float32 holding bf16 values, which float32 stores exactly.
  const DType carrier = d == DType::bf16 ? DType::f32 : d;
  py::array base(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(span + 2 * guard)});
  char* const bytes = static_cast<char*>(base.mutable_data());
  const auto nan_fill = [&](std::int64_t from, std::int64_t n) {
    const TensorRef t{bytes + from * dt.itemsize(), carrier, 1, {n, 0, 0, 0}, {1, 0, 0, 0}};
    write_dense(t, std::vector<double>(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN()));
  };
  if (dense) {  // only the guards: the view covers the rest
    nan_fill(0, guard);
    nan_fill(guard + span, guard);
  } else {  // the gaps between rows and heads too
    nan_fill(0, span + 2 * guard);
  }
  TensorRef t{bytes + guard * dt.itemsize(), carrier, static_cast<int>(shape.size()), {}, {}};
  std::vector<py::ssize_t> byte_strides;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    t.shape[i] = shape[i];
    t.stride[i] = strides[i];
    byte_strides.push_back(static_cast<py::ssize_t>(strides[i]) * dt.itemsize());
  }
  write_dense(t, values);
  // A view of `base` (which it keeps alive) past the front guard.
  py::array view(dt, shape, byte_strides, t.data, base);
  return {view, base, guard, span};
}

namespace {

// The poison's bits as NumPy sees them: (unsigned dtype of the same size, bits).
std::pair<const char*, std::uint64_t> poison_bits(DType d) {
  switch (d) {
    case DType::f64: return {"uint64", 0x7FF8A77EA77EA77EULL};
    case DType::f32: return {"uint32", 0x7FC0A77EULL};
    case DType::f16: return {"uint16", 0x7EA7ULL};
    case DType::bf16: return {"uint32", 0x7FE70000ULL};  // bf16's poison 0x7FE7, widened to float32
  }
  return {"uint64", 0};
}

}  // namespace

GuardedArray output_buffer(std::vector<py::ssize_t> shape, DType d) {
  std::size_t n = 1;
  for (py::ssize_t e : shape) n *= static_cast<std::size_t>(e);
  GuardedArray g = to_input_array(std::vector<double>(n, 0.0), std::move(shape), {}, d);
  const auto [uint, bits] = poison_bits(d);
  g.view.attr("view")(uint)[py::ellipsis()] = py::int_(bits);
  return g;
}

Unwritten unwritten(const py::array& buffer, DType d) {
  const py::module_ np = py::module_::import("numpy");
  const auto [uint, bits] = poison_bits(d);
  const py::object left = np.attr("equal")(buffer.attr("view")(uint), py::int_(bits));
  Unwritten u;
  u.count = np.attr("count_nonzero")(left).cast<std::int64_t>();
  if (u.count > 0) {
    const std::vector<py::ssize_t> at = np.attr("argwhere")(left)[py::int_(0)].attr("tolist")().cast<std::vector<py::ssize_t>>();
    u.first = shape_text(at);
  }
  return u;
}

py::array int64_array(const std::vector<std::int64_t>& values) {
  py::array_t<std::int64_t> a(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

void prepare_numpy() {
  const py::array a = to_numpy({0.0}, {1}, DType::f16);
  (void)py::array_t<bool>(1);
  (void)int64_array({0});
  (void)py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  (void)py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(int64_array({0}));
  (void)py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(py::array_t<bool>(1));
  (void)std::string(py::str(a.dtype()));
}

std::string shape_text(const std::vector<py::ssize_t>& s) {
  std::ostringstream o;
  o << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  return o.str() + "]";
}

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
  py::object answer = py::reinterpret_borrow<py::object>(value);
  // A torch tensor: detached and on the CPU first; a bfloat16 one as float32 holding its values
  // (exact), since torch gives NumPy no bfloat16 (`__array__` raises).
  if (py::hasattr(answer, "detach") && py::hasattr(answer, "cpu") && py::hasattr(answer, "dtype")) {
    answer = answer.attr("detach")().attr("cpu")();
    if (std::string(py::str(answer.attr("dtype"))) == "torch.bfloat16") answer = answer.attr("float")();
  }
  py::array a = np.attr("asarray")(answer);
  std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape)
    throw KernelFault(FaultKind::missing_output, fn + " returned " + what + " of shape " + shape_text(got) +
                                                     ", expected " + shape_text(shape));
  const std::string got_dtype = py::str(a.dtype());
  if (got_dtype != dtype)
    throw KernelFault(FaultKind::missing_output, fn + " returned " + what + " as " + got_dtype + ", expected " + dtype +
                                                     " (the storage dtype; docs/semantics.md)");
  py::array_t<double, py::array::c_style | py::array::forcecast> d = a;
  std::vector<double> x(d.data(), d.data() + d.size());
  // A NaN the function returned is its answer, whatever its payload: made the plain quiet NaN (its
  // sign kept), so it is judged as a NaN and never taken for attnv's "never written" marker
  // (CaseBuffers::poison_outputs), which no Python function can leave behind.
  for (double& v : x)
    if (std::isnan(v)) v = std::copysign(std::numeric_limits<double>::quiet_NaN(), v);
  return x;
}

bool unchanged(const py::array& a, const std::vector<double>& values) {
  const py::array_t<double, py::array::c_style | py::array::forcecast> d = a;
  if (static_cast<std::size_t>(d.size()) != values.size()) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = d.data()[i], y = values[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

bool unchanged(const py::array& a, const std::vector<std::int64_t>& values) {
  const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> d = a;
  return static_cast<std::size_t>(d.size()) == values.size() && std::equal(values.begin(), values.end(), d.data());
}

}  // namespace attnv::python
