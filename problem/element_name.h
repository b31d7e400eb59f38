#pragma once
// Naming an element of an output tensor of a case ("out[b=0,h=1,i=3,d=2]") and the first
// bitwise difference between two outputs: what every judge (the checks, the fuzz oracle) says
// about a value.
#include <cstddef>
#include <string>
#include <vector>

#include "problem/case.h"

namespace attnv {

// "out[b=0,h=1,i=3,d=2]" for a dense index of an output tensor (out, lse, dq, dk, dv) of the case.
std::string element_name(const Case& c, const std::string& tensor, std::size_t index);

// Whether +0 and -0 differ in a bitwise comparison. They are one value wherever the contract
// compares outputs (docs/semantics.md, "Hidden positions": the sign of a zero output is not
// specified); runs of the same call (determinism) and cache contents are compared bit for bit.
enum class ZeroSign { distinct, same };

// Bitwise comparison restricted to the elements where `which(index)` is true; returns "" or a
// description of the first differing element.
std::string bitwise_difference(const Case& c, const std::string& tensor, const std::vector<double>& a,
                               const std::vector<double>& b, const std::vector<bool>* which = nullptr,
                               ZeroSign zeros = ZeroSign::distinct);

}  // namespace attnv
