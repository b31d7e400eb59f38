// Properties of how a kernel behaves as a function: same bits every time, inputs left alone.
#include <tuple>

#include "properties/checks/checks.h"
#include "properties/checks/runs.h"

namespace attnv::checks {

PropertyResult check_determinism(Kernel& k, const Case& c, Layout layout) {
  const char* name = "determinism";
  const bool backward = c.has_dout() && k.capabilities().backward;
  if (auto why = detail::not_claimed(k, c, backward); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  // Identical calls compared directly: two forwards in a row, then (with a backward) two
  // forward+backward runs with a lone forward between them. A kernel whose result follows the
  // parity of a call counter lands on both parities here; two forward+backward runs in a row
  // (four calls) would put every call on the same parity twice and let it pass.
  const auto differs = [&](const Outputs& a, const Outputs& b, const char* what) -> std::string {
    for (const auto& [tensor, x, y] : {std::tuple{"out", &a.out, &b.out}, std::tuple{"lse", &a.lse, &b.lse},
                                        std::tuple{"dq", &a.dq, &b.dq}, std::tuple{"dk", &a.dk, &b.dk},
                                        std::tuple{"dv", &a.dv, &b.dv}, std::tuple{"dsinks", &a.dsinks, &b.dsinks}}) {
      const std::string d = detail::bitwise_difference(c, tensor, *x, *y);
      if (!d.empty()) return std::string(what) + ": " + d;
    }
    return "";
  };
  const Outputs f1 = detail::run(k, c, layout).out;
  const Outputs f2 = detail::run(k, c, layout).out;
  std::string d = differs(f1, f2, "two forwards in a row");
  if (d.empty() && backward) {
    const Outputs g1 = detail::run(k, c, layout, true).out;
    (void)detail::run(k, c, layout);
    const Outputs g2 = detail::run(k, c, layout, true).out;
    d = differs(g1, g2, "two forward+backward runs, a forward between them");
  }
  if (!d.empty()) return PropertyResult::fail(name, c.id, "two runs of the same case differ", d).with_kind(FailKind::nondeterministic);
  return PropertyResult::pass(name, c.id).with_exercised(backward ? 2 : 1);
}

PropertyResult check_inputs_unchanged(Kernel& k, const Case& c, Layout layout) {
  const char* name = "inputs_unchanged";
  const bool backward = c.has_dout() && k.capabilities().backward;
  if (auto why = detail::not_claimed(k, c, backward); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  if (detail::run(k, c, layout, backward).inputs_unchanged) return PropertyResult::pass(name, c.id);
  return PropertyResult::fail(name, c.id, backward ? "the forward or backward wrote into an input buffer"
                                                   : "the forward wrote into an input buffer").with_kind(FailKind::input_written);
}

}  // namespace attnv::checks
