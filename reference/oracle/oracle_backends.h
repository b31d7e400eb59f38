#pragma once
// The two backends behind oracle.h (private to the oracle; no Boost here). Each is one
// translation unit instantiating oracle_impl.h with its real type.
#include <cstdint>
#include <vector>

#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_plan.h"

namespace attnv::reference::oracle_detail {

Outputs forward_mpfr(const Case& c, const ReadPlan& plan, OracleAccuracy* acc);
Outputs backward_mpfr(const Case& c, const ReadPlan& plan, OracleAccuracy* acc);
OracleRow row_mpfr(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                   const std::vector<std::int64_t>& keys, bool with_radius);

Outputs forward_cpp_bin_float(const Case& c, const ReadPlan& plan, OracleAccuracy* acc);
Outputs backward_cpp_bin_float(const Case& c, const ReadPlan& plan, OracleAccuracy* acc);
OracleRow row_cpp_bin_float(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                            const std::vector<std::int64_t>& keys, bool with_radius);

}  // namespace attnv::reference::oracle_detail
