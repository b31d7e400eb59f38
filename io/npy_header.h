#pragma once
// The header of a .npy file: a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// parsed by a small bounded recursive-descent reader of Python literals (strings, ints, True,
// False, None, tuples, lists, dicts), so that any whitespace, key order and trailing commas
// NumPy or another writer produces are read, and anything unexpected is reported precisely.
#include <cstdint>
#include <string_view>
#include <vector>

#include "io/npy.h"

namespace attnv::io {

struct NpyHeader {
  NpyType type = NpyType::f64;
  std::vector<std::int64_t> shape;
};

// `text` is the header bytes as the length field delimits them. Throws InputError "<name>: ...".
NpyHeader parse_npy_header(std::string_view text, std::string_view name);

}  // namespace attnv::io
