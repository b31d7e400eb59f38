#pragma once
// The certificate as JSON (format "attnv-certificate", version 1; every field is described in
// docs/certificate.md and checked by its schema: attnv schema certificate).
//
// Deterministic: the same Certificate gives byte-identical text. There are no timestamps,
// host names or wall times in it (RequirementResult::seconds is left out on purpose), keys come
// in a fixed order, and doubles are printed in the shortest form that reads back to the same
// double. JSON has no inf or NaN: they are written as the strings "inf", "-inf" and "nan".
#include <string>

#include "report/certificate.h"

namespace attnv::report {

std::string to_json(const Certificate& c);  // pretty-printed (2 spaces), ends with a newline

}  // namespace attnv::report
