#include "native_kernel.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>

#include "kernels/mutants.h"
#include "kernels/naive_kernel.h"
#include "numpy_io.h"
#include "problem/buffers.h"
#include "problem/error.h"
#include "problem/features/registry.h"
#include "problem/validate.h"

namespace py = pybind11;

namespace attnv::python {
namespace {

using I = std::int64_t;

std::vector<double> doubles(const py::handle& a) {
  const py::array_t<double, py::array::c_style | py::array::forcecast> d = py::reinterpret_borrow<py::object>(a);
  return std::vector<double>(d.data(), d.data() + d.size());
}

std::vector<I> int64s(const py::handle& a) {
  const py::array_t<I, py::array::c_style | py::array::forcecast> d = py::reinterpret_borrow<py::object>(a);
  return std::vector<I>(d.data(), d.data() + d.size());
}

std::vector<py::ssize_t> shape(const py::handle& a) {
  const py::array x = py::reinterpret_borrow<py::object>(a);
  return std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim());
}

bool given(const py::kwargs& kw, const char* key) { return kw.contains(key) && !kw[key].is_none(); }

// The problem's scalar options from the keywords every call has.
void read_options(Problem& p, const py::kwargs& kw) {
  const auto dt = parse_dtype(kw["dtype"].cast<std::string>());
  if (!dt) throw InputError("native kernel: unknown dtype");
  p.dtype = *dt;
  // The effective scale comes every call; the default one stays "unset" (1/sqrt(Dk)).
  const double scale = kw["scale"].cast<double>();
  if (scale != 1.0 / std::sqrt(static_cast<double>(p.shape.Dk))) p.scale = scale;
  if (given(kw, "softcap")) p.softcap = kw["softcap"].cast<double>();
  const auto w = kw["window"].cast<std::pair<I, I>>();
  p.window = {w.first, w.second};
  // Later options without data (chunk): keywords only when set (call_arguments.cpp).
  for (const ProblemOption& o : kProblemOptions)
    if (o.call_keyword && given(kw, o.key.data())) o.set(p, kw[o.key.data()].cast<std::int64_t>());
}

// The leading extents of a mask or bias array: [Tq, Tk], or [B|1, Hq|1, Tq, Tk].
Leading leading(const py::handle& a, const Shape& s) {
  const auto e = shape(a);
  if (e.size() == 2) return {};
  return {e[0] == s.B && s.B > 1, e[1] == s.Hq && s.Hq > 1};
}

// A forward call's Case, rebuilt from what a Python kernel receives.
Case case_of(const py::args& args, const py::kwargs& kw, bool with_dout) {
  Problem p;
  const auto qs = shape(args[0]), ks = shape(args[1]), vs = shape(args[2]);
  p.shape = {qs[0], qs[1], ks[1], qs[2], ks[2], qs[3], vs[3]};
  read_options(p, kw);
  p.causal = kw["causal"].cast<bool>();
  p.alignment = *parse_alignment(kw["alignment"].cast<std::string>());
  p.has_mask = given(kw, "mask");
  if (p.has_mask) p.mask_dims = leading(kw["mask"], p.shape);
  p.has_bias = given(kw, "bias");
  if (p.has_bias) p.bias_dims = leading(kw["bias"], p.shape);
  for (const HeadInput& in : kHeadInputs) p.*in.present = given(kw, in.name.data());
  if (given(kw, "cu_seqlens_q")) p.varlen_sequences = static_cast<I>(shape(kw["cu_seqlens_q"])[0]) - 1;
  p.has_kv_len = given(kw, "kv_len");
  Case c = make_zero_case(p, with_dout);
  c.q = doubles(args[0]);
  c.k = doubles(args[1]);
  c.v = doubles(args[2]);
  if (p.has_mask) {
    const auto m = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(kw["mask"]);
    c.mask.assign(m.data(), m.data() + m.size());
  }
  if (p.has_bias) c.bias = doubles(kw["bias"]);
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) c.*in.values = doubles(kw[in.name.data()]);
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p)) c.*in.values = int64s(kw[in.name.data()]);
  if (with_dout) c.dout = doubles(args[3]);
  require_valid(c);
  return c;
}

py::object answer(const std::vector<double>& x, std::vector<py::ssize_t> s, DType d) { return to_numpy(x, std::move(s), d); }

// A tensor of the kernel's own in its storage dtype, dense.
struct Owned {
  std::vector<unsigned char> bytes;
  TensorRef ref;
  Owned(DType t, const std::vector<py::ssize_t>& s) {
    ref.dtype = t;
    ref.rank = static_cast<int>(s.size());
    I n = 1;
    for (std::size_t i = 0; i < s.size(); ++i) ref.shape[i] = s[i], n *= s[i];
    ref.stride = dense_strides(ref.shape, ref.rank);
    bytes.assign(static_cast<std::size_t>(n * dtype_bytes(t)), 0);
    ref.data = bytes.data();
  }
};

// A strided NumPy input (a kernel claiming "strided" gets views laid out as the case's layout)
// handed to the C++ kernel as it is: its memory with its strides, so a layout bug shows (R11). A
// dense one, or one whose NumPy dtype is not the storage dtype (bf16 travels as float32), stays
// in the CaseBuffers copy.
void use_caller_layout(TensorRef& view, const py::handle& arg, DType d) {
  py::array a = py::reinterpret_borrow<py::array>(arg);
  if (a.flags() & py::array::c_style) return;
  if (std::string(py::str(a.dtype())) != numpy_dtype(d) || d == DType::bf16) return;
  view.data = a.mutable_data();
  for (int i = 0; i < view.rank; ++i) view.stride[static_cast<std::size_t>(i)] = a.strides(i) / a.itemsize();
}

// After a C++ kernel's call, its input buffers back into the caller's arrays: a kernel that
// writes into an input does so through the Python route too (R14). q, k, v (and dout), the
// positional arguments.
void write_back_inputs(const py::args& args, const KernelViews& v, bool with_dout, DType d) {
  const TensorRef* views[] = {&v.q, &v.k, &v.v, &v.dout};
  const py::module_ np = py::module_::import("numpy");
  for (std::size_t i = 0; i < (with_dout ? 4u : 3u); ++i)
    np.attr("copyto")(args[i], to_numpy(read_dense(*views[i]), shape(args[i]), d));
}

}  // namespace

NativeKernel::NativeKernel(const std::string& name) : name_(name) {
  if (name == "naive") {
    kernel_ = std::make_unique<kernels::NaiveKernel>();
    return;
  }
  for (const kernels::Mutant& m : kernels::mutant_zoo())
    if (m.name == name) {
      kernel_ = m.make();
      meant_for_ = m.requirement;
      meant_dtype_ = std::string(dtype_name(m.dtype));
      return;
    }
  throw InputError("native_kernel: '" + name + "' is neither \"naive\" nor a mutant of the zoo");
}

std::string NativeKernel::claims_json(const std::vector<std::string>& dtypes) const {
  cases::Claims c;
  c.caps = kernel_->capabilities();
  for (const std::string& n : dtypes)
    if (const auto d = parse_dtype(n)) c.precision[*d] = kernel_->precision(*d);
  return cases::claims_to_json(c);
}


py::object NativeKernel::forward(py::args args, py::kwargs kw) {
  const Case c = case_of(args, kw, false);
  CaseBuffers buf(c, Layout::bhtd, false);
  // Unwritten output elements come back as what the memory held: attnv's NaN, as in a C call.
  buf.poison_outputs();
  use_caller_layout(buf.views().q, args[0], c.problem.dtype);
  use_caller_layout(buf.views().k, args[1], c.problem.dtype);
  use_caller_layout(buf.views().v, args[2], c.problem.dtype);
  {
    // The C++ work without the GIL, as an extension's heavy call runs (torch's and NumPy's do).
    py::gil_scoped_release free;
    kernel_->forward(c.problem, buf.views());
  }
  if (!buf.inputs_unchanged()) write_back_inputs(args, buf.views(), false, c.problem.dtype);
  const Outputs o = buf.outputs();
  const Shape& s = c.problem.shape;
  return py::make_tuple(answer(o.out, {s.B, s.Hq, s.Tq, s.Dv}, c.problem.dtype),
                        answer(o.lse, {s.B, s.Hq, s.Tq}, lse_dtype(c.problem.dtype)));
}

py::object NativeKernel::backward(py::args args, py::kwargs kw) {
  const Case c = case_of(args, kw, true);
  const Problem& p = c.problem;
  CaseBuffers buf(c, Layout::bhtd, true);
  buf.poison_outputs();
  // The forward's own out and lse, as the kernel's backward reads them.
  write_dense(buf.views().out, doubles(kw["out"]));
  const bool has_lse = given(kw, "lse");
  if (has_lse) write_dense(buf.views().lse, doubles(kw["lse"]));
  TensorRef* inputs[] = {&buf.views().q, &buf.views().k, &buf.views().v, &buf.views().dout};
  for (std::size_t i = 0; i < 4; ++i) use_caller_layout(*inputs[i], args[i], p.dtype);
  {
    py::gil_scoped_release free;
    if (!has_lse) kernel_->forward(p, buf.views());
    kernel_->backward(p, buf.views());
  }
  if (!buf.inputs_unchanged()) write_back_inputs(args, buf.views(), true, p.dtype);
  const Outputs o = buf.outputs();
  const Shape& s = p.shape;
  py::list r;
  r.append(answer(o.dq, {s.B, s.Hq, s.Tq, s.Dk}, p.dtype));
  r.append(answer(o.dk, {s.B, s.Hkv, s.Tk, s.Dk}, p.dtype));
  r.append(answer(o.dv, {s.B, s.Hkv, s.Tk, s.Dv}, p.dtype));
  if (p.has_sinks) r.append(answer(o.dsinks, {s.Hq}, p.dtype));
  return py::tuple(r);
}

py::object NativeKernel::decode(py::args args, py::kwargs kw) {
  const auto qs = shape(args[0]), kn = shape(args[1]), vn = shape(args[2]), kc = shape(args[3]), vc = shape(args[4]);
  Problem p;
  const bool paged = given(kw, "block_table");
  const I page = paged ? kc[2] : 0;
  const I capacity = paged ? shape(kw["block_table"])[1] * page : kc[2];
  p.shape = {qs[0], qs[1], kn[1], qs[2], capacity, qs[3], vn[3]};
  read_options(p, kw);
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.page_size = page;
  for (const HeadInput& in : kHeadInputs) p.*in.present = given(kw, in.name.data());
  Owned q(p.dtype, qs), k_new(p.dtype, kn), v_new(p.dtype, vn), k_cache(p.dtype, kc), v_cache(p.dtype, vc);
  Owned out(p.dtype, {qs[0], qs[1], qs[2], vn[3]}), lse(lse_dtype(p.dtype), {qs[0], qs[1], qs[2]});
  // What the memory held where the kernel writes nothing: NaN, as in a C call's poisoned buffers.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write_dense(out.ref, std::vector<double>(static_cast<std::size_t>(qs[0] * qs[1] * qs[2] * vn[3]), nan));
  write_dense(lse.ref, std::vector<double>(static_cast<std::size_t>(qs[0] * qs[1] * qs[2]), nan));
  for (auto [t, a] : {std::pair{&q, 0}, {&k_new, 1}, {&v_new, 2}, {&k_cache, 3}, {&v_cache, 4}})
    write_dense(t->ref, doubles(args[a]));
  std::vector<Owned> heads;
  DecodeViews v;
  v.q = q.ref, v.k_new = k_new.ref, v.v_new = v_new.ref, v.k_cache = k_cache.ref, v.v_cache = v_cache.ref;
  const std::vector<I> cache_len = int64s(kw["cache_len"]);
  const std::vector<I> table = paged ? int64s(kw["block_table"]) : std::vector<I>{};
  v.cache_len = cache_len.data();
  v.block_table = paged ? table.data() : nullptr;
  v.out = out.ref;
  v.lse = lse.ref;
  heads.reserve(std::size(kHeadInputs));
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) {
      heads.emplace_back(p.dtype, std::vector<py::ssize_t>{p.shape.Hq});
      write_dense(heads.back().ref, doubles(kw[in.name.data()]));
      v.*in.decode_view = heads.back().ref;
    }
  if (auto e = check_decode_views(p, v); !e.empty()) throw InputError("native kernel decode: " + e[0]);
  {
    py::gil_scoped_release free;
    kernel_->decode(p, v);
  }
  // The caches as the kernel left them, back into the caller's arrays (the append is in place).
  for (auto [t, a] : {std::pair{&k_cache, 3}, {&v_cache, 4}}) {
    py::array dst = py::reinterpret_borrow<py::array>(args[a]);
    const py::array src = to_numpy(read_dense(t->ref), shape(args[a]), p.dtype);
    py::module_::import("numpy").attr("copyto")(dst, src);
  }
  return py::make_tuple(answer(read_dense(out.ref), {qs[0], qs[1], qs[2], vn[3]}, p.dtype),
                        answer(read_dense(lse.ref), {qs[0], qs[1], qs[2]}, lse_dtype(p.dtype)));
}

void bind_native_kernel(py::module_& m) {
  py::class_<NativeKernel>(m, "NativeKernel")
      .def_property_readonly("name", &NativeKernel::name)
      .def_property_readonly("meant_for", &NativeKernel::meant_for)
      .def_property_readonly("meant_dtype", &NativeKernel::meant_dtype)
      .def("claims_json", &NativeKernel::claims_json)
      .def("forward", &NativeKernel::forward)
      .def("backward", &NativeKernel::backward)
      .def("decode", &NativeKernel::decode);
  m.def("native_kernel", [](const std::string& name) { return NativeKernel(name); },
        "attnv's own naive kernel or a mutant of the zoo as a Python kernel (tests and bench/ only)");
  m.def("mutant_names", [] {
    std::vector<std::string> names;
    for (const kernels::Mutant& mu : kernels::mutant_zoo()) names.push_back(mu.name);
    return names;
  });
}

}  // namespace attnv::python
