#include "pkg/api/int_or_string.h"

#include <gtest/gtest.h>

namespace kcm::api {
namespace {

TEST(IntOrStringTest, IntIsReturnedAsIs) {
  IntOrString v = IntOrString::FromInt(3);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 10, true), 3);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 10, false), 3);
}

// D6: maxSurge rounds up, maxUnavailable rounds down.
TEST(IntOrStringTest, PercentRoundsUpOrDown) {
  IntOrString v = IntOrString::FromString("25%");
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 10, true), 3);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 10, false), 2);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 4, true), 1);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 4, false), 1);
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&v, 0, true), 0);
  IntOrString full = IntOrString::FromString("100%");
  EXPECT_EQ(*GetScaledValueFromIntOrPercent(&full, 7, false), 7);
}

TEST(IntOrStringTest, BadStringsAreErrors) {
  EXPECT_FALSE(GetScaledValueFromIntOrPercent(nullptr, 10, true).ok());
  for (const char* bad : {"25", "%", "abc%", "2.5%", "", "25 %"}) {
    IntOrString v = IntOrString::FromString(bad);
    auto r = GetScaledValueFromIntOrPercent(&v, 10, true);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().reason, "InvalidArgument");
  }
}

TEST(IntOrStringTest, ToJson) {
  EXPECT_EQ(IntOrString::FromInt(1).ToJson(), "1");
  EXPECT_EQ(IntOrString::FromString("25%").ToJson(), "\"25%\"");
}

}  // namespace
}  // namespace kcm::api
