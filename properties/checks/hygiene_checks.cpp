// Properties of how a kernel behaves as a function: same bits every time, inputs left alone.
#include <tuple>

#include "properties/checks/checks.h"
#include "properties/checks/runs.h"

namespace attnv::props {

PropertyResult check_determinism(Kernel& k, const Case& c, Layout layout) {
  const char* name = "determinism";
  const bool backward = c.has_dout() && k.capabilities().backward;
  if (auto why = detail::not_claimed(k, c, backward); !why.empty()) return PropertyResult::pass(name, c.id, "not claimed: " + why);
  const Outputs a = detail::run(k, c, layout, backward).out, b = detail::run(k, c, layout, backward).out;
  for (const auto& [tensor, x, y] : {std::tuple{"out", &a.out, &b.out}, std::tuple{"lse", &a.lse, &b.lse},
                                      std::tuple{"dq", &a.dq, &b.dq}, std::tuple{"dk", &a.dk, &b.dk},
                                      std::tuple{"dv", &a.dv, &b.dv}}) {
    const std::string d = detail::bitwise_difference(c, tensor, *x, *y);
    if (!d.empty()) return PropertyResult::fail(name, c.id, "two runs of the same case differ", d);
  }
  return PropertyResult::pass(name, c.id);
}

PropertyResult check_inputs_unchanged(Kernel& k, const Case& c, Layout layout) {
  const char* name = "inputs_unchanged";
  const bool backward = c.has_dout() && k.capabilities().backward;
  if (auto why = detail::not_claimed(k, c, backward); !why.empty()) return PropertyResult::pass(name, c.id, "not claimed: " + why);
  if (detail::run(k, c, layout, backward).inputs_unchanged) return PropertyResult::pass(name, c.id);
  return PropertyResult::fail(name, c.id, backward ? "the forward or backward wrote into an input buffer"
                                                   : "the forward wrote into an input buffer");
}

}  // namespace attnv::props
