#include "problem/fit_to_claims.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "problem/features/registry.h"

namespace attnv {
namespace {

// The first row whose feature p uses although caps does not claim it in p's dtype, or null.
const ClaimInfo* first_unclaimed_use(const Problem& p, const Capabilities& caps) {
  for (const ClaimInfo& c : kClaims)
    if (c.used_by && (!(caps.*c.member) || caps.withdrawn_in(p.dtype, c.key)) && !c.used_by(p).empty()) return &c;
  return nullptr;
}

}  // namespace

void fit_to_claims(Problem& p, const Capabilities& caps) {
  if (std::find(caps.dtypes.begin(), caps.dtypes.end(), p.dtype) == caps.dtypes.end())
    p.dtype = caps.dtypes.empty() ? DType::f32 : caps.dtypes.front();
  // A drop may hand its use to another claim (top-left to bottom-right, bottom-right to top-left),
  // which is dropped in turn if unclaimed; each row is dropped at most twice before every use is
  // claimed, so more rounds than that mean a drop that does not drop.
  constexpr std::size_t kRounds = 2 * std::size(kClaims);
  for (std::size_t round = 0; round < kRounds; ++round) {
    const ClaimInfo* c = first_unclaimed_use(p, caps);
    if (!c) return;
    c->drop(p, caps);
  }
  const ClaimInfo* c = first_unclaimed_use(p, caps);
  if (c)
    throw std::logic_error("fit_to_claims: dropping '" + std::string(c->key) + "' leaves it in use (" +
                           std::string(c->used_by(p)) + "): its row's drop in problem/features/ is wrong");
}

}  // namespace attnv
