// The progress line's share done and ETA: in-flight requirements count by their cases, so the
// ETA moves before any requirement has finished.
#include <gtest/gtest.h>

#include "cli/progress.h"

namespace attnv::cli {
namespace {

TEST(Progress, ShareDoneCountsCasesOfRequirementsInFlight) {
  EXPECT_DOUBLE_EQ(Progress::share_done(0, 0, 0.5), 0);  // total unknown
  EXPECT_DOUBLE_EQ(Progress::share_done(0, 4, 0), 0);
  EXPECT_DOUBLE_EQ(Progress::share_done(0, 4, 0.5), 0.125);   // half of one of four
  EXPECT_DOUBLE_EQ(Progress::share_done(1, 4, 0.75), 0.4375);
  EXPECT_DOUBLE_EQ(Progress::share_done(4, 4, 0.3), 1);        // never past the end
}

TEST(Progress, EtaMovesWithTheShareAndStaysQuietWhenItCannotSay) {
  EXPECT_EQ(Progress::eta_text(10, 0.5), "ETA 10s");
  EXPECT_EQ(Progress::eta_text(10, 0.25), "ETA 30s");  // within one requirement: a smaller share, a later ETA
  EXPECT_EQ(Progress::eta_text(30, 0.2), "ETA 2m00s");
  EXPECT_EQ(Progress::eta_text(1, 0.5), "");   // too early
  EXPECT_EQ(Progress::eta_text(10, 0.001), "");
  EXPECT_EQ(Progress::eta_text(10, 1), "");    // done
}

}  // namespace
}  // namespace attnv::cli
