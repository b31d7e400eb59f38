#include "repro.h"

#include <algorithm>
#include <sstream>

#include "fuzz/search/fuzz_run.h"
#include "io/exchange.h"
#include "numpy_io.h"
#include "problem/error.h"
#include "properties/conformance/evidence.h"

namespace py = pybind11;

namespace attnv::python {

namespace {

// A reproducer of attnv fuzz (or any exchange folder): every case judged again by the fuzz oracle.
py::tuple rejudge_fuzz_reproducer(PythonCallables fns, const std::string& name, const std::string& spec,
                                  const std::string& claims_json, const std::string& folder, py::tuple refused) {
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(folder);
  // The dtypes the cases are in (claims["dtypes"], when given, still decides what is claimed).
  std::vector<DType> dtypes;
  for (const io::ExchangeCase& c : cases)
    if (std::find(dtypes.begin(), dtypes.end(), c.c.problem.dtype) == dtypes.end()) dtypes.push_back(c.c.problem.dtype);
  const cases::Claims claims = cases::claims_from_json(claims_json, "claims", dtypes, cases::ClaimsRoute::in_process);
  PythonKernel kernel(std::move(fns), name, claims, std::move(refused));
  fuzz::OracleOptions opt;
  opt.fp = fuzz::FpCheck::off;  // as attnv.fuzz judged it
  prepare_numpy();
  std::ostringstream o;
  int code = 0;
  try {
    py::gil_scoped_release free;
    code = fuzz::rejudge_reproducer(kernel, cases, opt, spec, name, o);
  } catch (const InputError& err) {
    // Neither fixed nor failing (a case this kernel cannot judge, a pass that shows nothing).
    o << err.what() << '\n';
    code = 2;
  }
  if (kernel.interrupted()) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return py::make_tuple(code, o.str());
}

}  // namespace

py::tuple repro(PythonCallables fns, const std::string& name, const std::string& spec, const std::string& claims_json,
                const std::string& folder, py::tuple refused) {
  const std::optional<conformance::Evidence> e = conformance::read_evidence(folder);
  if (!e) return rejudge_fuzz_reproducer(std::move(fns), name, spec, claims_json, folder, std::move(refused));
  const cases::Claims claims = cases::claims_from_json(claims_json, "claims", {e->dtype}, cases::ClaimsRoute::in_process);
  PythonKernel kernel(std::move(fns), name, claims, std::move(refused));
  std::ostringstream o;
  o << "evidence: " << e->id << ' ' << e->property << " on " << dtype_name(e->dtype) << ", case " << e->case_index
    << " of seed " << e->suite_seed << " (failed with kernel " << e->kernel << ")\ncase: " << e->pc.c.id << ", layout "
    << layout_name(e->pc.layout) << ", " << e->runs.size() << " recorded call" << (e->runs.size() == 1 ? "" : "s") << '\n';
  // A Python kernel has no configuration: evidence of one that had (the core on an ISA path, a
  // plugin with options) was failed by other code.
  if (e->kernel == name && e->kernel_configuration && !e->kernel_configuration->empty()) {
    o << "attnv repro: the failure was recorded with kernel configuration '" << *e->kernel_configuration
      << "', which a Python kernel does not have: neither fixed nor failing\n";
    return py::make_tuple(2, o.str());
  }
  conformance::Rejudgement j;
  {
    py::gil_scoped_release free;
    j = conformance::rejudge(kernel, *e);
  }
  if (kernel.interrupted()) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  const props::PropertyResult& r = j.result;
  if (!j.mismatch.empty()) {
    o << "attnv repro: attnv's own error, not the kernel's: the check no longer makes the calls this evidence "
         "recorded (" << j.mismatch << ")\n";
    return py::make_tuple(3, o.str());
  }
  if (r.status == props::Status::attnv_error) {
    o << "  ATTNV ERROR: " << r.message << "\nattnv repro: attnv could not judge this case (its own error, not the "
      << "kernel's): neither fixed nor failing\n";
    return py::make_tuple(3, o.str());
  }
  if (!r.judged()) {
    o << "  NOT JUDGED: " << r.message << "\nattnv repro: " << e->id << " cannot judge this case with kernel " << name
      << ": neither fixed nor failing\n";
    return py::make_tuple(2, o.str());
  }
  if (!r.ok) {
    o << "  FAIL: " << r.message << '\n';
    if (!r.worst.empty()) o << "  worst: " << r.worst << '\n';
    o << "attnv repro: FAILS: " << e->id << " still fails this case with kernel " << name << '\n';
    return py::make_tuple(1, o.str());
  }
  o << "  PASS" << (r.message.empty() ? "" : ": " + r.message) << '\n';
  if (e->recurred == false) {
    o << "attnv repro: neither fixed nor failing: the case did not fail the same way when it was judged again at once "
         "after failing, so passing it now does not show the bug gone\n";
    return py::make_tuple(2, o.str());
  }
  o << "attnv repro: passes: " << e->id << " holds on this case with kernel " << name << " (" << j.runs_compared
    << " call" << (j.runs_compared == 1 ? "" : "s") << " checked against the evidence's inputs)\n";
  return py::make_tuple(0, o.str());
}

}  // namespace attnv::python
