#include "certificate_object.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace attnv::python {
namespace {

py::object ratio(double r) { return r < 0 ? py::object(py::none()) : py::object(py::float_(r)); }

}  // namespace

py::list results_of(const report::Certificate& c) {
  py::list out;
  for (const conformance::RequirementResult& r : c.report.results) {
    py::dict d;
    d["id"] = r.id;
    d["property"] = r.property;
    d["statement"] = report::statement_of(r.id);
    d["dtype"] = std::string(dtype_name(r.dtype));
    d["verdict"] = std::string(conformance::verdict_name(r.verdict));
    d["cases"] = r.cases_run;
    d["cases_checked"] = r.cases_checked;
    d["cases_failed"] = r.cases_failed;
    d["cases_not_claimed"] = r.cases_not_claimed;
    d["cases_not_supported"] = r.cases_not_supported;  // declined by the kernel (plugins; never a Python function)
    d["exercised"] = r.exercised;
    d["exercised_unit"] = r.exercised_unit;
    d["min_exercised"] = r.min_exercised;
    d["not_exercised_why"] = r.not_exercised_why;
    d["worst_ratio"] = ratio(r.worst_ratio);
    d["worst_case"] = r.worst_case;
    d["note"] = r.note;
    d["seconds"] = r.seconds;
    d["reproduce"] = report::reproduce_command(c, r);
    py::list findings;
    for (const conformance::Finding& f : r.findings) {
      py::dict fd;
      fd["kind"] = f.kind;
      fd["message"] = f.message;
      fd["case_id"] = f.case_id;
      fd["case_index"] = f.case_index;
      fd["worst"] = f.worst;
      fd["reproduce"] = f.reproduce;
      fd["recurred"] = f.recurred ? py::object(py::bool_(*f.recurred)) : py::object(py::none());
      // The evidence folder (attnv.evidence reads its arrays, attnv.repro judges it again); None
      // when the finding has none (R15's campaign).
      fd["folder"] = f.saved_case.empty() ? py::object(py::none()) : py::object(py::str(f.saved_case));
      findings.append(fd);
    }
    d["findings"] = findings;
    d["text"] = conformance::describe(r);  // one line, then one per finding
    out.append(d);
  }
  return out;
}

py::dict summary_of(const report::Certificate& c) {
  const report::Summary s = report::summarize(c);
  py::dict d;
  d["certified"] = s.certified;
  d["pass"] = s.pass;
  d["fail"] = s.fail;
  d["not_claimed"] = s.not_claimed;
  d["not_exercised"] = s.not_exercised;
  d["notes"] = s.notes;
  d["attnv_errors"] = s.attnv_errors;
  d["not_judged"] = s.not_judged;
  d["not_supported"] = s.not_supported;
  d["cases_declined"] = s.cases_declined;
  d["findings"] = s.findings;
  d["failed"] = s.failed;
  d["partial"] = s.partial;
  return d;
}

}  // namespace attnv::python
