// Not a test: how long the oracle takes per row at realistic sizes (oracle_row runs on the
// calling thread). Usage: oracle_row_timing [Tk] [D] [rows] [mpfr|cpp_bin_float] [radius]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gen/rng.h"
#include "reference/oracle/oracle.h"

int main(int argc, char** argv) {
  using namespace attnv;
  const std::int64_t Tk = argc > 1 ? std::atoll(argv[1]) : 1024;
  const std::int64_t D = argc > 2 ? std::atoll(argv[2]) : 128;
  const std::int64_t rows = argc > 3 ? std::atoll(argv[3]) : 8;
  const bool check = argc > 4 && std::strcmp(argv[4], "cpp_bin_float") == 0;
  const bool radius = argc > 5 && std::strcmp(argv[5], "radius") == 0;
  Problem p;
  p.dtype = DType::f32;
  p.shape = Shape{1, 1, 1, rows, Tk, D, D};
  Case c = make_zero_case(p);
  gen::Rng rng(1);
  for (auto* vec : {&c.q, &c.k, &c.v})
    for (double& x : *vec) x = rng.normal();
  round_to_storage(c);
  const auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    sink += reference::oracle_row(c, 0, 0, i, check ? reference::Backend::cpp_bin_float : reference::Backend::mpfr, radius).lse;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s%s Tk=%lld Dk=Dv=%lld: %.2f ms per row (%lld rows; checksum %.17g)\n",
              check ? "cpp_bin_float" : "mpfr", radius ? " +radius" : "", static_cast<long long>(Tk),
              static_cast<long long>(D), 1e3 * s / static_cast<double>(rows),
              static_cast<long long>(rows), sink);
}
