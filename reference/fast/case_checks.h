#pragma once
// What the fast reference checks before reading a Case: a valid problem and tensors of the sizes
// it implies. Values are not checked here: a non-finite value matters only where it is read
// (SPEC: hidden keys must not change any output), and the row kernels name it there.
#include "problem/case.h"

namespace attnv::reference::fast_detail {

// Throws InputError naming the problem or the tensor whose size is wrong.
void require_readable(const Case& c, bool need_dout);

}  // namespace attnv::reference::fast_detail
