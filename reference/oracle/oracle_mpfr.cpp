// The MPFR backend: oracle_impl.h at mp_real, rounded by MPFR itself (mpfr_get_d is correctly
// rounded to nearest, ties to even).
#include <mpfr.h>

#include "reference/oracle/mp_real.h"
#include "reference/oracle/oracle_backends.h"
#include "reference/oracle/oracle_run.h"

namespace attnv::reference::oracle_detail {

void release_mpfr_thread_caches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

namespace {

double round_mpfr(const mp_real& x) {
  const double d = mpfr_get_d(x.backend().data(), MPFR_RNDN);
  return d == 0 ? 0.0 : d;  // +0 for any exact zero, as nearest_double does
}

}  // namespace

Outputs forward_mpfr(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  return run_forward<mp_real, round_mpfr>(c, plan, acc);
}
Outputs backward_mpfr(const Case& c, const ReadPlan& plan, OracleAccuracy* acc) {
  return run_backward<mp_real, round_mpfr>(c, plan, acc);
}
OracleRow row_mpfr(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                   const std::vector<std::int64_t>& keys, bool with_radius) {
  return run_row<mp_real, round_mpfr>(c, b, h, i, keys, with_radius);
}

}  // namespace attnv::reference::oracle_detail
