#include "pkg/util/duration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

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

// Found by fuzz/duration: the whole int64 range round-trips. math.MinInt64 used to be refused
// ("out of range": the magnitude was checked against MaxInt64 before the sign was applied), and
// the sum was kept in a long double, whose rounding could move a long value by a nanosecond.
TEST(DurationTest, RoundTripsTheWholeInt64Range) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (int64_t n :
       {kMin, kMin + 1, kMax, kMax - 1, int64_t{9007199254740993}, int64_t{-1234567890123456789}}) {
    const std::string text = FormatDuration(std::chrono::nanoseconds(n));
    auto d = ParseDuration(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.error().message;
    EXPECT_EQ(d->count(), n) << text;
  }
  EXPECT_EQ(ParseDuration("-9223372036854775808ns")->count(), kMin);
  EXPECT_FALSE(ParseDuration("9223372036854775808ns").ok());
  EXPECT_FALSE(ParseDuration("-9223372036854775809ns").ok());
  EXPECT_FALSE(ParseDuration("2562047h47m16.854775808s").ok());
  EXPECT_FALSE(ParseDuration("1h9223372036854775807ns").ok());
}

// As Go's time.ParseDuration, a fraction finer than a nanosecond is cut off, not rounded up.
TEST(DurationTest, TruncatesFractionsToNanoseconds) {
  EXPECT_EQ(*ParseDuration("1.0000000009s"), 1s);
  EXPECT_EQ(*ParseDuration("0.1h"), 6min);
  EXPECT_EQ(*ParseDuration(".5us"), 500ns);
  EXPECT_EQ(*ParseDuration("1.000000000000000000000001s"), 1s);
}

}  // namespace
}  // namespace kcm
