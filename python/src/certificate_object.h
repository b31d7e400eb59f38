#pragma once
// A certificate as Python sees it: the verdicts as plain dicts and lists (what pytest helpers and
// user scripts index), the four renderers of report/ as strings.
#include <pybind11/pybind11.h>

#include "report/certificate.h"

namespace attnv::python {

// One dict per requirement x dtype: id, property, dtype, verdict, cases, findings, ...
pybind11::list results_of(const report::Certificate& c);
// The run at a glance (report::Summary) as a dict.
pybind11::dict summary_of(const report::Certificate& c);

}  // namespace attnv::python
