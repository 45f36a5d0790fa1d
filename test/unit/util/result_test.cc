#include "pkg/util/result.h"

#include <gtest/gtest.h>

namespace kcm {
namespace {

TEST(ResultTest, HoldsValue) {
  Result<int> r(42);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
}

TEST(ResultTest, HoldsError) {
  Result<int> r(Error{404, "NotFound", "pods \"x\" not found", {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 404);
  EXPECT_EQ(r.error().ToString(), "404 NotFound: pods \"x\" not found");
}

TEST(ResultTest, StatusDefaultsToOk) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  Status bad = Error::Local("InvalidFlag", "bad flag");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().ToString(), "InvalidFlag: bad flag");
}

}  // namespace
}  // namespace kcm
