// The kill test: every mutant of the zoo fails the property meant to catch it within a bounded
// number of generated cases (the same generator options the property's own test uses, in the
// mutant's dtype). Prints the kill table: mutant, property, cases needed, time, and the
// one-line reproduction (the generator seed and the case).
#include <chrono>
#include <cstdio>
#include <sstream>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "kernels/mutants.h"
#include "properties/conformance/conformance.h"

namespace attnv::checks::testing {

using namespace generators;  // the cases the checks run on
using namespace kernels;  // the kernels under test (kernels/)
namespace {

constexpr int kMaxCases = 200;
// The kill rate is measured over this many cases: 50, or under the sanitizers (which divide every
// tier's case count, conformance/requirement.h) that share of 50. A mutant is still hunted up to
// kMaxCases whatever the divisor: the rate is a printed figure, the kill is the assertion.
constexpr int kRateCases = 50 / conformance::kCaseDivisor;

struct Kill {
  bool killed = false;
  int cases = 0;           // cases drawn until the first failure
  int failing = 0;         // of the first kRateCases cases, how many fail (per-case properties)
  double seconds = 0;
  std::string how;
};

// The per-case property, case after case, until it fails.
Kill hunt(Kernel& k, const conformance::Requirement& entry, DType dtype) {
  GenOptions opt = entry.options;
  opt.dtypes = {dtype};
  CaseStream stream(opt, conformance::kDefaultSeed);  // with its share of production shapes, as the suite draws
  Kill kill;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 1; n <= kMaxCases && (!kill.killed || n <= kRateCases); ++n) {
    const PropertyCase pc = stream.next();
    const PropertyResult r = conformance::judge_case(k, entry, pc);  // as the suite judges it (faults too)
    if (!r.ok && n <= kRateCases) ++kill.failing;
    if (!r.ok && !kill.killed) {
      kill.killed = true;
      kill.cases = n;
      kill.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::ostringstream o;
      o << r;
      kill.how = o.str();
    }
  }
  if (!kill.killed) {
    kill.cases = kMaxCases;
    kill.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return kill;
}

// The campaign-level sign test over the first n cases, n growing in steps of 20.
Kill hunt_campaign(Kernel& k, const conformance::Requirement& entry, DType dtype) {
  GenOptions opt = entry.options;
  opt.dtypes = {dtype};
  const auto gen = gen_property_case(opt);
  rc::Random random(conformance::kDefaultSeed);
  std::vector<Case> cases;
  Kill kill;
  const auto t0 = std::chrono::steady_clock::now();
  while (!kill.killed && static_cast<int>(cases.size()) < kMaxCases) {
    for (int n = 0; n < 20; ++n) cases.push_back(gen(random.split()).value().c);
    const PropertyResult r = entry.campaign(k, cases);
    kill.cases = static_cast<int>(cases.size());
    if (!r.ok) {
      kill.killed = true;
      std::ostringstream o;
      o << r;
      kill.how = o.str();
    }
  }
  kill.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return kill;
}

TEST(MutantZoo, EveryMutantIsCaughtByItsProperty) {
  std::printf("\n%-26s %-27s %5s %8s %7s  %s\n", "mutant", "caught by", "cases", "seconds", "rate", "first failure");
  for (const Mutant& m : mutant_zoo()) {
    const std::unique_ptr<Kernel> k = m.make();
    const conformance::Requirement& r = conformance::requirement(m.requirement);
    const Kill kill = r.campaign ? hunt_campaign(*k, r, m.dtype) : hunt(*k, r, m.dtype);
    const std::string rate = r.campaign ? "-" : std::to_string(kill.failing) + "/" + std::to_string(kRateCases);
    std::printf("%-26s %-27s %5d %8.3f %7s  %s\n", m.name.c_str(), m.requirement.c_str(), kill.cases, kill.seconds,
                rate.c_str(), kill.killed ? kill.how.substr(0, 150).c_str() : "NOT CAUGHT");
    EXPECT_TRUE(kill.killed) << m.name << " (" << m.bug << ") survived " << kMaxCases << " cases of " << m.requirement
                             << "; generator seed " << conformance::kDefaultSeed;
  }
}

// A property no mutant is meant to break is a property never shown able to fail.
TEST(MutantZoo, EveryPropertyHasAMutantMeantToBreakIt) {
  for (const conformance::Requirement& r : conformance::requirements()) {
    const std::string& n = r.property;
    bool covered = false;
    for (const Mutant& m : mutant_zoo()) covered |= m.requirement == n;
    EXPECT_TRUE(covered) << "no mutant targets " << n;
  }
}

}  // namespace
}  // namespace attnv::checks::testing
