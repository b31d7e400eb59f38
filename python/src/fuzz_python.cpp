#include "fuzz_python.h"

#include <iostream>
#include <sstream>

#include "fuzz/search/fuzz_run.h"
#include "numpy_io.h"
#include "problem/error.h"
#include "problem/support_guard.h"

namespace py = pybind11;

namespace attnv::python {

py::tuple fuzz(PythonCallables fns, const FuzzRequest& r, py::tuple refused) {
  std::optional<DType> dtype;
  if (r.dtype) {
    dtype = parse_dtype(*r.dtype);
    if (!dtype) throw InputError("dtype: '" + *r.dtype + "' is not a dtype (f64, f32, f16, bf16)");
  }
  const cases::Claims claims = cases::claims_from_json(r.claims_json, "claims", dtype ? std::vector<DType>{*dtype}
                                                                                          : std::vector<DType>{},
                                                       cases::ClaimsRoute::in_process);
  PythonKernel kernel(std::move(fns), r.name, claims, std::move(refused));
  // A case the kernel's supports() declines is never called: the differential judge skips it, as attnv fuzz does.
  const fuzz::KernelFactory make = [&kernel] {
    return std::unique_ptr<Kernel>(std::make_unique<SupportGuard>(std::make_unique<PythonKernelHandle>(kernel)));
  };
  const std::unique_ptr<Kernel> probe = make();
  fuzz::FuzzJob job;
  job.search.dtype = dtype;
  job.search.max_seconds = r.max_seconds;
  job.search.jobs = r.jobs;
  job.search.seed = r.seed;
  for (const std::string& s : r.seeds) job.search.seeds.emplace_back(s.begin(), s.end());
  // Floating-point flags are not watched: NumPy and torch raise and clear them in their own work.
  job.search.judging.fp = fuzz::FpCheck::off;
  job.search.judging.backward = r.backward;
  job.shrink_seconds = r.shrink_seconds;
  job.out = r.out;
  job.kernel_spec = r.spec;
  job.kernel_name = r.name;
  job.reproduce_line = r.reproduce_line;
  const Capabilities fuzzed = fuzz::fuzzed_claims(*probe, dtype);  // InputError: dtype not claimed
  prepare_numpy();
  std::ostringstream out, log;
  int code = 0;
  {
    py::gil_scoped_release free;
    code = fuzz::fuzz_and_save(make, *probe, fuzzed, job, out, r.progress ? std::cerr : log);
  }
  if (kernel.interrupted()) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  py::list raised;
  for (const RaisedException& e : kernel.raised()) raised.append(py::make_tuple(e.line, e.traceback));
  return py::make_tuple(code, out.str(), log.str(), raised);
}

}  // namespace attnv::python
