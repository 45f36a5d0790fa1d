#include "pkg/api/compare_resource_version.h"

#include <gtest/gtest.h>

namespace kcm::api {
namespace {

// apimachinery resourceversion.CompareResourceVersion: positive decimal integers of any width,
// compared as numbers.
TEST(CompareResourceVersionTest, ComparesAsIntegersOfAnyWidth) {
  EXPECT_EQ(*CompareResourceVersion("9", "10"), -1);
  EXPECT_EQ(*CompareResourceVersion("10", "9"), 1);
  EXPECT_EQ(*CompareResourceVersion("123", "123"), 0);
  EXPECT_EQ(*CompareResourceVersion("122", "123"), -1);
  EXPECT_EQ(*CompareResourceVersion("1", "2"), -1);
  EXPECT_EQ(*CompareResourceVersion("184467440737095516160", "18446744073709551615"), 1);
  EXPECT_EQ(*CompareResourceVersion("18446744073709551615", "184467440737095516160"), -1);
}

// Anything else is incomparable, whichever side it is on: upstream's isWellFormed rejects the
// empty text, a leading zero (so "0" too) and any non-digit.
TEST(CompareResourceVersionTest, IllFormedIsIncomparable) {
  for (const char* bad : {"", "0", "01", "-1", "+1", "1a", " 1", "1.0", "abc"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(IsWellFormedResourceVersion(bad));
    auto left = CompareResourceVersion(bad, "1");
    ASSERT_FALSE(left.ok());
    EXPECT_EQ(left.error().reason, "InvalidResourceVersion");
    EXPECT_FALSE(CompareResourceVersion("1", bad).ok());
    EXPECT_FALSE(CompareResourceVersion(bad, bad).ok());
  }
  EXPECT_TRUE(IsWellFormedResourceVersion("1"));
  EXPECT_TRUE(IsWellFormedResourceVersion("1000000000000000000000000"));
}

}  // namespace
}  // namespace kcm::api
