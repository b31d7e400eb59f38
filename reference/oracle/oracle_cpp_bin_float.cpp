// The checking backend: oracle_impl.h at mp_check_real (Boost's own cpp_bin_float, no MPFR
// code shared), rounded by nearest_double rather than trusting Boost's conversion to double.
#include "reference/oracle/mp_real.h"
#include "reference/oracle/oracle_backends.h"
#include "reference/oracle/oracle_rounding.h"
#include "reference/oracle/oracle_run.h"

namespace attnv::reference::oracle_detail {
namespace {

double round_check(const mp_check_real& x) { return nearest_double(x); }

}  // namespace

Outputs forward_cpp_bin_float(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  return run_forward<mp_check_real, round_check>(c, plan, acc);
}
Outputs backward_cpp_bin_float(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  return run_backward<mp_check_real, round_check>(c, plan, acc);
}
OracleRow row_cpp_bin_float(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                            const std::vector<std::int64_t>& keys, bool with_radius) {
  return run_row<mp_check_real, round_check>(c, b, h, i, keys, with_radius);
}

}  // namespace attnv::reference::oracle_detail
