#include "repro.h"

#include <algorithm>
#include <sstream>

#include "properties/conformance/evidence_repro.h"
#include "fuzz/search/fuzz_run.h"
#include "io/exchange.h"
#include "numpy_io.h"
#include "problem/error.h"
#include "properties/conformance/evidence.h"

namespace py = pybind11;

namespace attnv::python {

namespace {

// Runs `judge` (attnv repro's judgement) without the GIL; its InputError is "neither fixed nor
// failing" (exit 2), its text the reason. A Ctrl-C in the kernel is raised as KeyboardInterrupt.
template <typename Judge>
py::tuple judged(PythonKernel& kernel, Judge&& judge) {
  prepare_numpy();
  std::ostringstream o;
  int code = 0;
  try {
    py::gil_scoped_release free;
    code = judge(o);
  } catch (const InputError& err) {
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
  if (const std::optional<conformance::Evidence> e = conformance::read_evidence(folder)) {
    // A certify finding: its requirement judges the saved case again.
    const cases::Claims claims = cases::claims_from_json(claims_json, "claims", {e->dtype}, cases::ClaimsRoute::in_process);
    PythonKernel kernel(std::move(fns), name, claims, std::move(refused));
    return judged(kernel, [&](std::ostream& o) { return conformance::rejudge_evidence(kernel, *e, name, folder, o); });
  }
  // A reproducer of attnv.fuzz (or any exchange folder): every case judged again by the fuzz
  // oracle, under the claims for the dtypes the cases are in (claims["dtypes"], when given, still
  // decides what is claimed).
  const std::vector<io::ExchangeCase> cases = io::read_exchange_cases(folder);
  std::vector<DType> dtypes;
  for (const io::ExchangeCase& c : cases)
    if (std::find(dtypes.begin(), dtypes.end(), c.c.problem.dtype) == dtypes.end()) dtypes.push_back(c.c.problem.dtype);
  const cases::Claims claims = cases::claims_from_json(claims_json, "claims", dtypes, cases::ClaimsRoute::in_process);
  PythonKernel kernel(std::move(fns), name, claims, std::move(refused));
  fuzz::DifferentialOptions opt;
  opt.fp = fuzz::FpCheck::off;  // as attnv.fuzz judged it
  return judged(kernel, [&](std::ostream& o) { return fuzz::rejudge_reproducer(kernel, cases, opt, spec, name, o); });
}

}  // namespace attnv::python
