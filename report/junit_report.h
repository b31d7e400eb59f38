#pragma once
// The certificate as JUnit XML, for CI systems that show test results: <testsuites> holds one
// <testsuite> per dtype, each with one <testcase> per requirement. A FAIL is a <failure> whose
// message is the finding and whose text holds the worst element, the case and the command that
// reproduces it; "not claimed" is <skipped>. All text and attributes are XML-escaped, and
// characters XML 1.0 cannot hold (control characters) are replaced by '?'.
#include <string>

#include "report/certificate.h"

namespace attnv::report {

std::string to_junit(const Certificate& c);

// Escapes text for an XML attribute (attribute = true: newlines and tabs as character
// references, so they survive attribute normalisation) or element text: &, <, >, ", ' and the
// control characters XML 1.0 cannot hold; bytes that are not well-formed UTF-8 become '?'.
std::string xml_escape(const std::string& s, bool attribute = true);

}  // namespace attnv::report
