#pragma once
// Plain double attention (the textbook two-pass softmax, no compensation): what a careful f64
// kernel computes. Used only to show that the cases are hard and the fast reference's radius is
// not vacuous: its error is measured in ulps against the oracle.
#include "problem/case.h"

namespace attnv::reference::test {

Outputs naive_double_forward(const Case& c);

}  // namespace attnv::reference::test
