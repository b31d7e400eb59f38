// Fuzz target: the .npy parser (io/npy.h) on arbitrary bytes. Bad files must give InputError,
// never a crash, an out-of-bounds read or a huge allocation; a file it accepts must be
// self-consistent and survive a write/read round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "fuzz/parser_targets.h"
#include "io/npy.h"

namespace {

void check_round_trip(const attnv::io::NpyArray& a) {
  using namespace attnv::io;
  if (a.floats.size() + a.ints.size() != static_cast<std::size_t>(a.elements())) {
    std::fprintf(stderr, "fuzz: npy element count %lld does not match the shape\n",
                 static_cast<long long>(a.elements()));
    std::abort();
  }
  // Bool arrays only hold 0/1 and every value read is representable again, so the encoder must
  // accept what the parser produced and the parser must read it back identically.
  const std::vector<unsigned char> bytes =
      npy_is_float(a.type) ? encode_npy_floats(a.shape, a.type, a.floats, "round_trip")
                           : encode_npy_ints(a.shape, a.type, a.ints, "round_trip");
  const NpyArray b = parse_npy(bytes, "round_trip");
  const bool same_floats =
      a.floats.size() == b.floats.size() &&
      (a.floats.empty() || std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * sizeof(double)) == 0);
  if (b.type != a.type || b.shape != a.shape || b.ints != a.ints || !same_floats) {
    std::fprintf(stderr, "fuzz: npy round trip changed the array\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  attnv::fuzz::expect_only_input_errors([&] {
    const attnv::io::NpyArray a = attnv::io::parse_npy(std::span<const unsigned char>(data, size), "fuzz.npy");
    check_round_trip(a);
  });
  return 0;
}
