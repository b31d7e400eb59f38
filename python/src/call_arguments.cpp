#include "call_arguments.h"

#include "numpy_io.h"
#include "problem/features/registry.h"
#include "problem/kernel_fault.h"

namespace py = pybind11;

namespace attnv::python {

CallArguments::CallArguments(const Problem& p, const Case& c, const KernelViews* layout) {
  const Shape& s = p.shape;
  // [Tq, Tk], or [B|1, Hq|1, Tq, Tk] when the mask or bias has its own leading extents.
  const auto extents = [&](Leading d) -> std::vector<py::ssize_t> {
    if (!d.any()) return {s.Tq, s.Tk};
    const auto e = broadcast_extents(s, d);
    return {e[0], e[1], e[2], e[3]};
  };
  add("q", c.q, {s.B, s.Hq, s.Tq, s.Dk}, p.dtype, false, layout ? &layout->q : nullptr);
  add("k", c.k, {s.B, s.Hkv, s.Tk, s.Dk}, p.dtype, false, layout ? &layout->k : nullptr);
  add("v", c.v, {s.B, s.Hkv, s.Tk, s.Dv}, p.dtype, false, layout ? &layout->v : nullptr);
  kw_["mask"] = py::none();
  if (p.has_mask) {
    py::array_t<bool> m(extents(p.mask_dims));
    for (std::size_t i = 0; i < c.mask.size(); ++i) m.mutable_data()[i] = c.mask[i] != 0;
    mask_ = m;
    mask_values_ = c.mask;
    kw_["mask"] = m;
  }
  if (p.has_bias) add("bias", c.bias, extents(p.bias_dims), p.dtype, true);
  else kw_["bias"] = py::none();
  for (const HeadInput& in : kHeadInputs)
    if (p.*in.present) add(in.name.data(), c.*in.values, {s.Hq}, p.dtype, true);
  // kv_len is None when absent; a later index input (packed sequences' bounds) is passed only
  // when present, like the sinks (problem/features/feature.h says why).
  for (const IndexInput& in : kIndexInputs)
    if (in.present(p)) add_index(in.name.data(), c.*in.values, {static_cast<py::ssize_t>((c.*in.values).size())});
    else if (in.python_none_when_absent) kw_[in.name.data()] = py::none();
  set_options(p, true);
}

void CallArguments::set_options(const Problem& p, bool with_causal) {
  kw_["scale"] = p.effective_scale();
  kw_["softcap"] = p.softcap ? py::object(py::float_(*p.softcap)) : py::none();
  if (with_causal) {
    kw_["causal"] = p.causal;
    kw_["alignment"] = std::string(alignment_name(p.alignment));
  }
  kw_["window"] = py::make_tuple(p.window.left, p.window.right);
  kw_["dtype"] = std::string(dtype_name(p.dtype));
  // Later options without data (chunk=): only when set, like the later inputs.
  for (const ProblemOption& o : kProblemOptions)
    if (o.call_keyword && o.get(p) != 0) kw_[o.key.data()] = o.get(p);
}

void CallArguments::add_index(const char* name, const std::vector<std::int64_t>& values,
                              std::vector<py::ssize_t> shape) {
  py::array a = int64_array(values);
  a = a.attr("reshape")(py::tuple(py::cast(shape)));
  kw_[name] = a;
  inputs_.push_back({name, a, {}, values, true});
}

py::array CallArguments::add_writable(const char* name, const std::vector<double>& values, std::vector<py::ssize_t> shape,
                                      DType dtype) {
  GuardedArray g = to_input_array(values, std::move(shape), {}, dtype);
  const py::array a = g.view;
  guarded_.emplace_back(name, std::move(g));
  positional_.push_back(a);
  return a;
}

void CallArguments::add(const char* name, const std::vector<double>& values, std::vector<py::ssize_t> shape, DType dtype,
                        bool keyword, const TensorRef* layout) {
  std::vector<std::int64_t> strides;
  if (layout) strides.assign(layout->stride.begin(), layout->stride.begin() + layout->rank);
  GuardedArray g = to_input_array(values, std::move(shape), std::move(strides), dtype);
  const py::array a = g.view;
  guarded_.emplace_back(name, std::move(g));
  Input x{name, a, values, {}, false};
  if (keyword) kw_[name] = x.array;
  else positional_.push_back(x.array);
  inputs_.push_back(std::move(x));
}

py::object CallArguments::call(const py::object& fn) const {
  py::tuple args(positional_.size());
  for (std::size_t i = 0; i < positional_.size(); ++i) args[i] = positional_[i];
  return fn(*args, **kw_);
}

void CallArguments::add_output(const char* name, std::vector<py::ssize_t> shape, DType dtype) {
  GuardedArray g = output_buffer(std::move(shape), dtype);
  kw_[name] = g.view;
  outputs_.push_back({name, g.view, dtype});
  guarded_.emplace_back(name, std::move(g));
}

std::vector<double> CallArguments::written(const char* name, const std::string& fn_name) const {
  for (const Output& o : outputs_)
    if (o.name == name) {
      const py::array& a = o.array;
      if (const Unwritten u = unwritten(a, o.dtype); u.count > 0)
        throw KernelFault(FaultKind::missing_output, fn_name + " left " + std::to_string(u.count) + " element" +
                                                         (u.count == 1 ? "" : "s") + " of its " + name +
                                                         " buffer unwritten (the first: " + name + u.first + ")");
      const std::vector<py::ssize_t> shape(a.shape(), a.shape() + a.ndim());
      return read_output(a, name, shape, py::str(a.dtype()).cast<std::string>().c_str(), fn_name);
    }
  throw std::logic_error(std::string("no output buffer ") + name);
}

void CallArguments::check_unchanged(const std::string& fn_name) const {
  for (const auto& [name, g] : guarded_)
    if (!g.guards_intact())
      throw KernelFault(FaultKind::out_of_bounds, fn_name + " wrote outside its " + name + " (into the " +
                                                      std::to_string(kGuardBytes) + " bytes before or after it)");
  // Inputs are read-only by contract (R14): the first one written is the finding.
  for (const Input& in : inputs_)
    if (in.is_index ? !unchanged(in.array, in.indices) : !unchanged(in.array, in.values))
      throw KernelFault(FaultKind::input_written, fn_name + " wrote into its input " + in.name);
  if (mask_values_.empty()) return;
  const py::array_t<bool> m = mask_.cast<py::array_t<bool>>();
  for (std::size_t i = 0; i < mask_values_.size(); ++i)
    if (m.data()[i] != (mask_values_[i] != 0))
      throw KernelFault(FaultKind::input_written, fn_name + " wrote into its input mask");
}

py::dict problem_dict(const Problem& p) {
  const Shape& s = p.shape;
  py::dict d;
  for (const auto& [key, extent] : {std::pair{"B", s.B}, {"Hq", s.Hq}, {"Hkv", s.Hkv}, {"Tq", s.Tq}, {"Tk", s.Tk},
                                     {"Dk", s.Dk}, {"Dv", s.Dv}})
    d[key] = extent;
  d["dtype"] = std::string(dtype_name(p.dtype));
  d["scale"] = p.effective_scale();
  d["softcap"] = p.softcap ? py::object(py::float_(*p.softcap)) : py::none();
  d["causal"] = p.causal;
  d["alignment"] = std::string(alignment_name(p.alignment));
  d["window"] = py::make_tuple(p.window.left, p.window.right);
  d["mask"] = p.has_mask;
  d["bias"] = p.has_bias;
  d["kv_len"] = p.has_kv_len;
  for (const ProblemOption& o : kProblemOptions) {
    const std::int64_t v = o.get(p);
    if (o.kind == ProblemOption::Kind::flag) d[o.key.data()] = v != 0;
    else d[o.key.data()] = v;
  }
  d["describe"] = describe(p);
  return d;
}

}  // namespace attnv::python
