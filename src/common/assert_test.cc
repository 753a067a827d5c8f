// ZL_ASSERT is checked in every build: a broken invariant aborts with the
// condition and where it failed.
#include "zonelab/assert.h"

#include <gtest/gtest.h>

namespace zonelab {
namespace {

TEST(Assert, AHoldingConditionDoesNothing) {
  int evaluated = 0;
  ZL_ASSERT(++evaluated == 1);
  EXPECT_EQ(evaluated, 1);  // evaluated once, in this build too
}

TEST(AssertDeathTest, ABrokenInvariantAbortsWithTheConditionAndItsPlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(ZL_ASSERT(1 + 1 == 3), "assertion failed: 1 \\+ 1 == 3 \\(.*assert_test.cc:[0-9]+");
}

}  // namespace
}  // namespace zonelab
