#include "pkg/util/duration.h"

#include <gtest/gtest.h>

namespace kcm {
namespace {

using namespace std::chrono_literals;

TEST(DurationTest, ParsesUpstreamFlagForms) {
  EXPECT_EQ(*ParseDuration("12h0m0s"), 12h);
  EXPECT_EQ(*ParseDuration("15s"), 15s);
  EXPECT_EQ(*ParseDuration("1h30m"), 90min);
  EXPECT_EQ(*ParseDuration("500ms"), 500ms);
  EXPECT_EQ(*ParseDuration("1.5s"), 1500ms);
  EXPECT_EQ(*ParseDuration("0"), 0ns);
  EXPECT_EQ(*ParseDuration("-2s"), -2s);
  EXPECT_EQ(*ParseDuration("10us"), 10us);
}

TEST(DurationTest, RejectsBadInputWithMessage) {
  for (const char* bad : {"", "10", "s", "5x", "1..5s", "abc", "9999999999999h"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().reason, "InvalidDuration");
    EXPECT_NE(r.error().message.find(std::string("\"") + bad + "\""), std::string::npos);
  }
}

TEST(DurationTest, FormatsLikeGo) {
  EXPECT_EQ(FormatDuration(12h), "12h0m0s");
  EXPECT_EQ(FormatDuration(15s), "15s");
  EXPECT_EQ(FormatDuration(1500ms), "1.5s");
  EXPECT_EQ(FormatDuration(500ms), "500ms");
  EXPECT_EQ(FormatDuration(90s), "1m30s");
  EXPECT_EQ(FormatDuration(0s), "0s");
  EXPECT_EQ(FormatDuration(-2s), "-2s");
}

TEST(DurationTest, RoundTrips) {
  for (std::chrono::nanoseconds d :
       {std::chrono::nanoseconds(12h + 34min + 56s), std::chrono::nanoseconds(1234ms),
        std::chrono::nanoseconds(17), std::chrono::nanoseconds(3h)}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(d)), d);
  }
}

}  // namespace
}  // namespace kcm
