#include "python_kernel.h"

#include <cmath>
#include <tuple>

#include "call_arguments.h"
#include "numpy_io.h"
#include "problem/buffers.h"
#include "problem/features/registry.h"
#include "problem/kernel_fault.h"

namespace py = pybind11;

namespace attnv::python {
namespace {

std::string type_name(const py::handle& x) { return py::str(py::type::of(x).attr("__name__")); }

// The Python exception as one line: "ValueError: shapes do not match".
std::string exception_line(const py::error_already_set& e) {
  std::string type = "exception";
  try {
    type = py::str(e.type().attr("__name__"));
  } catch (...) {
  }
  const std::string msg = py::str(e.value());
  return msg.empty() ? type : type + ": " + msg;
}

std::string exception_traceback(const py::error_already_set& e) {
  try {
    const py::object lines = py::module_::import("traceback").attr("format_exception")(e.type(), e.value(), e.trace());
    return py::str(py::str("").attr("join")(lines));
  } catch (...) {
    return exception_line(e);
  }
}

// The answer of a function returning a tuple: its items, checked for their count.
std::vector<py::object> items(const py::object& result, std::size_t n, const std::string& fn, const char* expected) {
  if (!py::isinstance<py::tuple>(result) && !py::isinstance<py::list>(result))
    throw KernelFault(FaultKind::missing_output, fn + " returned " + type_name(result) + ", expected " + expected);
  const py::sequence seq = result;
  if (seq.size() != n)
    throw KernelFault(FaultKind::missing_output, fn + " returned " + std::to_string(seq.size()) + " items, expected " +
                                                     expected);
  std::vector<py::object> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(seq[i]);
  return out;
}

std::string_view op_name(KernelOp op) {
  switch (op) {
    case KernelOp::forward: return "forward";
    case KernelOp::backward: return "backward";
    case KernelOp::decode: return "decode";
  }
  return "?";
}

}  // namespace

PythonKernel::PythonKernel(PythonCallables fns, std::string name, cases::Claims claims, py::tuple refused_types)
    : fns_(std::move(fns)), name_(std::move(name)), claims_(std::move(claims)), refused_types_(std::move(refused_types)) {
  // The backward gets lse only where LSE is claimed (lse=None otherwise), so only then does a
  // backward run ask the forward for one.
  claims_.caps.backward_reads_lse = claims_.caps.lse;
}

template <class F>
void PythonKernel::guarded(const char* what, F&& body) {
  if (interrupted_) throw HarnessError("interrupted");
  py::gil_scoped_acquire gil;
  if (interrupted_) throw HarnessError("interrupted");  // set by another job while this one waited
  try {
    body();
  } catch (py::error_already_set& e) {
    // KeyboardInterrupt and SystemExit are the user stopping the run, not a fault of the kernel.
    // The run stops at the next call (certify() raises it again once the suite returns).
    if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
      interrupted_ = true;
      throw HarnessError("interrupted");
    }
    const bool refused = PyErr_GivenExceptionMatches(e.type().ptr(), refused_types_.ptr()) != 0;
    const std::string line = name_ + (*what ? std::string(".") + what : "") + " raised " + exception_line(e);
    if (raised_.size() < kMaxRaised) raised_.push_back({line, exception_traceback(e)});
    e.restore();  // PyErr_Clear via the fetched error: nothing stays pending for the next call
    PyErr_Clear();
    throw KernelFault(refused ? FaultKind::refused : FaultKind::crashed, line);
  }
}

Support PythonKernel::supports(const Problem& p, KernelOp op) {
  if (fns_.supports.is_none()) return Support::yes();
  Support answer;
  guarded("supports", [&] {
    const py::object r = fns_.supports(problem_dict(p), std::string(op_name(op)));
    if (py::isinstance<py::bool_>(r)) {
      if (!r.cast<bool>()) answer = Support::no("declined (supports() gave no reason)");
      return;
    }
    if (py::isinstance<py::str>(r)) {
      const std::string why = r.cast<std::string>();
      answer = Support::no(why.empty() ? "declined (supports() gave an empty reason)" : why);
      return;
    }
    throw KernelFault(FaultKind::refused, name_ + ".supports returned " + type_name(r) +
                                              ", expected True, False or a reason (a str)");
  });
  return answer;
}

void PythonKernel::forward(const Problem& p, const KernelViews& views) {
  const Case c = case_from_views(p, views);
  Outputs o;
  guarded("", [&] {
    CallArguments args(p, c, claims_.caps.strided ? &views : nullptr);
    offer_answer_buffers(args, p, views.lse.present());
    const py::object result = args.call(fns_.forward);
    args.check_unchanged(name_);
    take_answer(result, args, p, views.lse.present(), name_, o);
  });
  write_outputs(o, p, views);
}

void PythonKernel::offer_answer_buffers(CallArguments& args, const Problem& p, bool lse_view) const {
  if (!fns_.in_place) return;
  const Shape& s = p.shape;
  args.add_output("out", {s.B, s.Hq, s.Tq, s.Dv}, p.dtype);
  if (lse_view && claims_.caps.lse) args.add_output("lse", {s.B, s.Hq, s.Tq}, lse_dtype(p.dtype));
  else args.set("lse", py::none());  // a call without an LSE: the keyword is still there
}

void PythonKernel::take_answer(const py::object& result, const CallArguments& args, const Problem& p, bool lse_view,
                               const std::string& fn, Outputs& o) const {
  if (!fns_.in_place) return read_answer(result, p, lse_view, fn, o);
  o.out = args.written("out", fn);
  if (lse_view && claims_.caps.lse) o.lse = args.written("lse", fn);
}

// The forward's answer: `out`, or `(out, lse)`; lse is required when it is claimed and ignored
// otherwise (`want_lse`: the call has an LSE view).
void PythonKernel::read_answer(const py::object& result, const Problem& p, bool want_lse, const std::string& fn,
                               Outputs& o) const {
  const Shape& s = p.shape;
  py::object out = result, lse = py::none();
  if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
    const py::sequence seq = result;
    if (seq.size() < 1 || seq.size() > 2)
      throw KernelFault(FaultKind::missing_output, fn + " returned a sequence of " + std::to_string(seq.size()) +
                                                       " items, expected out or (out, lse)");
    out = seq[0];
    if (seq.size() == 2) lse = seq[1];
  }
  o.out = read_output(out, "out", {s.B, s.Hq, s.Tq, s.Dv}, numpy_dtype(p.dtype), fn);
  if (want_lse && (claims_.caps.lse || !lse.is_none())) {
    if (lse.is_none())
      throw KernelFault(FaultKind::missing_output, fn + " returned no lse, but lse is claimed: return (out, lse)");
    o.lse = read_output(lse, "lse", {s.B, s.Hq, s.Tq}, numpy_dtype(lse_dtype(p.dtype)), fn);
  }
}

void PythonKernel::decode(const Problem& p, const DecodeViews& v) {
  if (fns_.decode.is_none()) throw HarnessError(name_ + ": decode called on a kernel without one");
  const Shape& s = p.shape;
  const std::string fn = name_ + ".decode";
  const auto shape_of = [](const TensorRef& t) {
    return std::vector<py::ssize_t>(t.shape.begin(), t.shape.begin() + t.rank);
  };
  std::vector<double> k_cache = read_dense(v.k_cache), v_cache = read_dense(v.v_cache);
  Outputs o;
  guarded("decode", [&] {
    CallArguments args;
    args.add("q", read_dense(v.q), shape_of(v.q), p.dtype, false);
    args.add("k_new", read_dense(v.k_new), shape_of(v.k_new), p.dtype, false);
    args.add("v_new", read_dense(v.v_new), shape_of(v.v_new), p.dtype, false);
    const py::array kc = args.add_writable("k_cache", k_cache, shape_of(v.k_cache), p.dtype);
    const py::array vc = args.add_writable("v_cache", v_cache, shape_of(v.v_cache), p.dtype);
    args.add_index("cache_len", std::vector<std::int64_t>(v.cache_len, v.cache_len + s.B), {s.B});
    if (p.page_size > 0) {
      const std::int64_t blocks = s.Tk / p.page_size;
      args.add_index("block_table", std::vector<std::int64_t>(v.block_table, v.block_table + s.B * blocks), {s.B, blocks});
    } else {
      args.set("block_table", py::none());
    }
    for (const HeadInput& in : kHeadInputs)
      if (p.*in.present) args.add(in.name.data(), read_dense(v.*in.decode_view), {s.Hq}, p.dtype, true);
    args.set_options(p, false);
    offer_answer_buffers(args, p, v.lse.present());
    const py::object result = args.call(fns_.decode);
    args.check_unchanged(fn);
    // The caches are written in place: whatever the function left there is what attnv judges
    // (R21 holds every position to the appended values or its initial fill).
    for (auto [cache, array, view, what] :
         {std::tuple{&k_cache, &kc, &v.k_cache, "k_cache"}, {&v_cache, &vc, &v.v_cache, "v_cache"}}) {
      std::vector<double> after = read_output(*array, what, shape_of(*view), numpy_dtype(p.dtype), fn);
      // read_output makes every NaN the plain one; a NaN slot the function left alone keeps its
      // bits (R21 compares untouched cache bytes bitwise).
      for (std::size_t i = 0; i < after.size(); ++i)
        if (std::isnan(after[i]) && std::isnan((*cache)[i])) after[i] = (*cache)[i];
      *cache = std::move(after);
    }
    take_answer(result, args, p, v.lse.present(), fn, o);
  });
  write_dense(v.k_cache, k_cache);
  write_dense(v.v_cache, v_cache);
  write_dense(v.out, o.out);
  if (!o.lse.empty()) write_dense(v.lse, o.lse);
}

void PythonKernel::backward(const Problem& p, const KernelViews& views) {
  if (fns_.backward.is_none()) throw HarnessError(name_ + ": backward called on a kernel without one");
  const Case c = case_from_views(p, views);
  const Shape& s = p.shape;
  const std::string fn = name_ + ".backward";
  Outputs o;
  guarded("backward", [&] {
    const KernelViews* layout = claims_.caps.strided ? &views : nullptr;
    CallArguments args(p, c, layout);
    args.add("dout", c.dout, {s.B, s.Hq, s.Tq, s.Dv}, p.dtype, false, layout ? &views.dout : nullptr);
    // The forward's own outputs, as it wrote them (the bound models a backward that recomputes P
    // from them: docs/semantics.md, "Backward").
    args.add("out", read_dense(views.out), {s.B, s.Hq, s.Tq, s.Dv}, p.dtype, true);
    if (claims_.caps.lse && views.lse.present())
      args.add("lse", read_dense(views.lse), {s.B, s.Hq, s.Tq}, lse_dtype(p.dtype), true);
    else
      args.set("lse", py::none());
    if (fns_.in_place) {
      args.add_output("dq", {s.B, s.Hq, s.Tq, s.Dk}, p.dtype);
      args.add_output("dk", {s.B, s.Hkv, s.Tk, s.Dk}, p.dtype);
      args.add_output("dv", {s.B, s.Hkv, s.Tk, s.Dv}, p.dtype);
      if (p.has_sinks) args.add_output("dsinks", {s.Hq}, p.dtype);
    }
    const py::object result = args.call(fns_.backward);
    args.check_unchanged(fn);
    if (fns_.in_place) {
      o.dq = args.written("dq", fn), o.dk = args.written("dk", fn), o.dv = args.written("dv", fn);
      if (p.has_sinks) o.dsinks = args.written("dsinks", fn);
      return;
    }
    const std::size_t n = p.has_sinks ? 4 : 3;
    const auto r = items(result, n, fn, p.has_sinks ? "(dq, dk, dv, dsinks): the case has sinks" : "(dq, dk, dv)");
    const char* dt = numpy_dtype(p.dtype);
    o.dq = read_output(r[0], "dq", {s.B, s.Hq, s.Tq, s.Dk}, dt, fn);
    o.dk = read_output(r[1], "dk", {s.B, s.Hkv, s.Tk, s.Dk}, dt, fn);
    o.dv = read_output(r[2], "dv", {s.B, s.Hkv, s.Tk, s.Dv}, dt, fn);
    if (p.has_sinks) o.dsinks = read_output(r[3], "dsinks", {s.Hq}, dt, fn);
  });
  write_outputs(o, p, views);
}

}  // namespace attnv::python
