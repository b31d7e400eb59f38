#include "reference/oracle/oracle.h"

#include "reference/oracle/oracle_backends.h"
#include "reference/oracle/oracle_plan.h"

namespace attnv::reference {

using namespace oracle_detail;

Outputs oracle_forward(const Case& c, Backend backend, OracleAccuracy* accuracy) {
  const ReadPlan plan = plan_reads(c, false);
  check_read_values(c, plan, false);
  return backend == Backend::mpfr ? forward_mpfr(c, plan, accuracy)
                                  : forward_cpp_bin_float(c, plan, accuracy);
}

OracleRow oracle_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, Backend backend,
                     bool with_radius) {
  const std::vector<std::int64_t> keys = plan_and_check_row(c, b, h, i);
  return backend == Backend::mpfr ? row_mpfr(c, b, h, i, keys, with_radius)
                                  : row_cpp_bin_float(c, b, h, i, keys, with_radius);
}

Outputs oracle_backward(const Case& c, Backend backend, OracleAccuracy* accuracy) {
  const ReadPlan plan = plan_reads(c, true);
  check_read_values(c, plan, true);
  return backend == Backend::mpfr ? backward_mpfr(c, plan, accuracy)
                                  : backward_cpp_bin_float(c, plan, accuracy);
}

}  // namespace attnv::reference
