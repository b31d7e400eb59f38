// attnv._attnv: the native half of the `attnv` Python package (python/attnv/__init__.py is the
// half users call). certify() runs the conformance suite on a Python function in process.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>

#include "certificate_object.h"
#include "native_kernel.h"
#include "numpy_io.h"
#include "repro.h"
#include "fuzz_python.h"
#include "fuzz/search/seed_corpus.h"
#include "core/isa.h"
#include "report/provenance.h"
#include "problem/features/registry.h"
#include "problem/error.h"
#include "python_kernel.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/junit_report.h"
#include "report/terminal_report.h"
#include "util/parallel.h"

namespace py = pybind11;

namespace attnv::python {
namespace {

// The certificate, and the exceptions the functions raised as (line, traceback) pairs: the
// package attaches each traceback to the findings that quote its line.
py::tuple certify(PythonCallables fns, const std::string& name, const std::string& spec, const std::string& claims_json,
                            const std::vector<std::string>& dtype_names, const std::string& suite, std::uint64_t seed,
                            const std::vector<std::string>& only, int max_findings, py::tuple refused,
                            const std::string& command, bool progress, int jobs, const std::string& failures_dir) {
  std::vector<DType> dtypes;
  for (const std::string& d : dtype_names) {
    const auto t = parse_dtype(d);
    if (!t) throw InputError("dtypes: '" + d + "' is not a dtype (f64, f32, f16, bf16)");
    dtypes.push_back(*t);
  }
  cases::Claims claims = cases::claims_from_json(claims_json, "claims", dtypes, cases::ClaimsRoute::in_process);
  conformance::ConformanceOptions opt;
  opt.tier = conformance::parse_tier(suite);
  opt.seed = seed;
  opt.only = only;
  for (const std::string& id : only) conformance::requirement(id);  // InputError if unknown
  opt.dtypes = dtypes;
  opt.max_findings = max_findings;
  opt.save_failures_dir = failures_dir;
  if (progress)
    opt.on_result = [](const conformance::RequirementResult& r, std::size_t done, std::size_t total) {
      std::cerr << "attnv: [" << done << "/" << total << "] " << r.id << " " << dtype_name(r.dtype) << " "
                << conformance::verdict_name(r.verdict) << " (" << r.seconds << " s)\n";
    };

  PythonKernel kernel(std::move(fns), name, claims, refused);
  report::Certificate cert;
  cert.attnv_version = ATTNV_VERSION;
  cert.provenance = report::this_run(core::isa_features(core::resolve_isa(core::Isa::best)));
  cert.command = command;
  opt.threads = jobs > 0 ? jobs : default_threads();
  prepare_numpy();
  {
    // Requirement x dtype jobs on opt.threads threads, as the CLI runs a plugin: each call into
    // Python takes the GIL back (one at a time), attnv's own work runs beside it.
    py::gil_scoped_release free;
    cert.report = conformance::run_conformance(
        [&]() -> std::unique_ptr<Kernel> { return std::make_unique<PythonKernelHandle>(kernel); }, opt);
  }
  if (kernel.interrupted()) {  // the user's Ctrl-C (or sys.exit) inside the function: stop here too
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  cert.kernel.spec = spec;
  cert.kernel.name = name;
  cert.kernel.caps = claims.caps;
  for (DType d : claims.caps.dtypes) cert.kernel.precision.emplace_back(d, claims.model(d));
  cert.kernel.notes.push_back(claims.caps.strided
                                  ? "called in process from Python with [B,H,T,D] NumPy arrays: q, k, v and dout laid out as "
                                    "each case's layout, the other inputs dense"
                                  : "called in process from Python with dense [B,H,T,D] NumPy arrays");
  for (DType d : claims.caps.dtypes)
    if (d == DType::bf16) cert.kernel.notes.push_back("bf16 passed as float32 arrays holding bf16 values (NumPy has no bfloat16)");
  py::list raised;
  for (const RaisedException& r : kernel.raised()) raised.append(py::make_tuple(r.line, r.traceback));
  return py::make_tuple(std::move(cert), raised);
}

}  // namespace
}  // namespace attnv::python

using namespace attnv;
using attnv::python::certify;

PYBIND11_MODULE(_attnv, m) {
  m.doc() = "attnv's native module: certify a Python attention function in process (see the attnv package)";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<report::Certificate>(m, "Certificate")
      .def_property_readonly("certified", [](const report::Certificate& c) { return report::summarize(c).certified; })
      .def_property_readonly("verdict_line", [](const report::Certificate& c) { return report::verdict_line(c); })
      .def_property_readonly("kernel", [](const report::Certificate& c) { return c.kernel.name; })
      .def_property_readonly("command", [](const report::Certificate& c) { return c.command; })
      .def_property_readonly("seed", [](const report::Certificate& c) { return c.report.seed; })
      .def_property_readonly("suite", [](const report::Certificate& c) { return std::string(conformance::tier_name(c.report.tier)); })
      .def_property_readonly("results", &python::results_of)
      .def_property_readonly("summary", &python::summary_of)
      .def("table", [](const report::Certificate& c, bool color) { return report::terminal_summary(c, color); },
           py::arg("color") = false)
      .def("to_json", &report::to_json)
      .def("to_junit", &report::to_junit)
      .def("to_html", &report::to_html);

  m.def("_certify", [](py::object forward, py::object backward, py::object decode, py::object supports, bool in_place,
                       const std::string& name,
                       const std::string& spec, const std::string& claims_json, const std::vector<std::string>& dtypes,
                       const std::string& suite, std::uint64_t seed, const std::vector<std::string>& only,
                       int max_findings, py::tuple refused, const std::string& command, bool progress, int jobs,
                       const std::string& failures_dir) {
    return certify({std::move(forward), std::move(backward), std::move(decode), std::move(supports), in_place}, name, spec, claims_json, dtypes,
                   suite, seed, only, max_findings, std::move(refused), command, progress, jobs, failures_dir);
  }, py::arg("forward"), py::arg("backward"), py::arg("decode"), py::arg("supports"), py::arg("in_place"), py::arg("name"), py::arg("spec"), py::arg("claims_json"),
        py::arg("dtypes"), py::arg("suite"), py::arg("seed"), py::arg("only"), py::arg("max_findings"),
        py::arg("refused"), py::arg("command"), py::arg("progress"), py::arg("jobs"), py::arg("failures_dir"));
  m.def("_repro", [](py::object forward, py::object backward, py::object decode, py::object supports, bool in_place,
                     const std::string& name, const std::string& spec, const std::string& claims_json,
                     const std::string& folder, py::tuple refused) {
    return python::repro({std::move(forward), std::move(backward), std::move(decode), std::move(supports), in_place}, name, spec,
                         claims_json, folder, std::move(refused));
  });
  // The seed corpus built into attnv (fuzz/search/seed_corpus.h), for attnv.fuzz's default.
  m.def("_builtin_seed_corpus", [] {
    py::list out;
    for (const std::vector<std::uint8_t>& s : fuzz::builtin_seed_corpus())
      out.append(py::bytes(reinterpret_cast<const char*>(s.data()), s.size()));
    return out;
  });
  m.def("_fuzz", [](py::object forward, py::object backward, py::object decode, py::object supports, bool in_place,
                    const std::string& name, const std::string& spec, const std::string& claims_json,
                    std::optional<std::string> dtype, double max_seconds, int jobs, std::uint64_t seed, bool backward_on,
                    double shrink_seconds, const std::string& out, std::vector<py::bytes> seeds,
                    const std::string& reproduce_line, bool progress, py::tuple refused) {
    python::FuzzRequest r;
    r.name = name, r.spec = spec, r.claims_json = claims_json, r.dtype = std::move(dtype);
    r.max_seconds = max_seconds, r.jobs = jobs, r.seed = seed, r.backward = backward_on;
    r.shrink_seconds = shrink_seconds, r.out = out, r.reproduce_line = reproduce_line, r.progress = progress;
    for (const py::bytes& b : seeds) r.seeds.push_back(b);
    return python::fuzz({std::move(forward), std::move(backward), std::move(decode), std::move(supports), in_place}, r,
                        std::move(refused));
  });
  m.def("requirements", [] {
    py::list out;
    for (const conformance::Requirement& r : conformance::requirements()) out.append(py::make_tuple(r.id, r.property));
    return out;
  }, "Every requirement of the suite as (id, property)");
  m.def("claim_keys", [] {
    std::vector<std::string> keys;
    for (const ClaimInfo& c : kClaims) keys.emplace_back(c.key);
    return keys;
  }, "The capability keys of a claims object (problem/features/)");
  // A feature's inputs and data-less options (chunk) are keywords of the calls only when the
  // kernel claims the feature (its first claim): older functions lack the keyword. kv_len is
  // passed always (None when absent).
  m.def("claim_keywords", [](bool decode) {
    py::dict out;
    for (const Feature& f : features::kFeatures) {
      py::list names;
      for (const ProblemOption& o : f.options)
        if (o.call_keyword) names.append(std::string(o.key));
      for (const HeadInput& h : f.head_inputs) names.append(std::string(h.name));
      if (!decode)  // a decode call takes cache_len and block_table of its own, no index inputs
        for (const IndexInput& x : f.index_inputs)
          if (!x.python_none_when_absent) names.append(std::string(x.name));
      if (py::len(names) > 0) out[py::str(std::string(f.claims.front().key))] = py::tuple(names);
    }
    return out;
  }, py::arg("decode") = false, "The keywords each claim adds to a call: {claim: (input, ...)} (problem/features/)");
  m.def("head_inputs", [] {
    std::vector<std::string> names;
    for (const HeadInput& h : kHeadInputs) names.emplace_back(h.name);
    return names;
  }, "The per-head inputs [Hq] in the storage dtype (problem/features/)");
  m.def("index_inputs", [] {
    std::vector<std::string> names;
    for (const IndexInput& x : kIndexInputs) names.emplace_back(x.name);
    return names;
  }, "The int64 index inputs (problem/features/)");
  python::bind_native_kernel(m);
  m.attr("__version__") = ATTNV_VERSION;
}
