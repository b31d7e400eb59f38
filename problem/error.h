#pragma once
// Bad input is reported by throwing InputError with a message that says what is wrong and where
// (file, tensor, element). Tools catch it at the top, print it, and exit with status 2.
#include <stdexcept>
#include <string>

namespace attnv {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace attnv
