#pragma once
// The certificate as `attnv certify` prints it: a requirement x dtype table, each finding with
// the command that reproduces it, the worst error/bound ratio per dtype and the verdict line.
// Fits 100 columns.
#include <string>

#include "report/certificate.h"

namespace attnv::report {

// color: ANSI colors for a terminal (the CLI passes isatty(stdout)); false gives plain text.
std::string terminal_summary(const Certificate& c, bool color);

}  // namespace attnv::report
