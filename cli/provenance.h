#pragma once
// What did the certifying (report::Provenance): this attnv build and this machine.
#include "report/certificate.h"

namespace attnv::cli {

report::Provenance this_run();

}  // namespace attnv::cli
