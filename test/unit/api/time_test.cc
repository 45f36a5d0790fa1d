#include "pkg/api/time.h"

#include <gtest/gtest.h>

namespace kcm::api {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

Time Epoch(int64_t s) {
  return Time(std::chrono::duration_cast<Time::duration>(seconds(s)));
}

TEST(TimeTest, ParsesZuluWithAndWithoutFraction) {
  EXPECT_EQ(*ParseRFC3339("2026-11-29T10:00:00Z"), Epoch(1795946400));
  auto t = ParseRFC3339("2026-11-29T10:00:00.123456Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t - Epoch(1795946400),
            std::chrono::duration_cast<Time::duration>(microseconds(123456)));
  auto n = ParseRFC3339("1970-01-01T00:00:00.000000001Z");
  EXPECT_EQ(n->time_since_epoch(), std::chrono::duration_cast<Time::duration>(nanoseconds(1)));
}

TEST(TimeTest, ParsesOffsets) {
  EXPECT_EQ(*ParseRFC3339("2026-11-29T12:30:00+02:30"), Epoch(1795946400));
  EXPECT_EQ(*ParseRFC3339("2026-11-29T05:00:00-05:00"), Epoch(1795946400));
  EXPECT_EQ(*ParseRFC3339("2026-11-29t10:00:00z"), Epoch(1795946400));
}

TEST(TimeTest, RejectsMalformed) {
  for (const char* bad :
       {"", "2026-11-29", "2026-11-29T10:00:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-29T24:00:00Z", "2026-11-29T10:00:00.Z", "2026-11-29T10:00:00+0200",
        "2026-11-29T10:00:00Zjunk", "abcd-11-29T10:00:00Z"}) {
    auto t = ParseRFC3339(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.error().reason, "DecodeError");
  }
}

// Found by the fuzzer: year 1014 overflowed the nanosecond count (UB).
TEST(TimeTest, OutOfRangeYearsSaturate) {
  EXPECT_EQ(*ParseRFC3339("0001-01-01T00:00:00Z"), kMinTime);
  EXPECT_EQ(*ParseRFC3339("1014-05-01T00:00:00Z"), kMinTime);
  EXPECT_EQ(*ParseRFC3339("9999-12-31T23:59:59Z"), Time::max());
  EXPECT_LT(*ParseRFC3339("1678-01-01T00:00:00Z"), *ParseRFC3339("1970-01-01T00:00:00Z"));
}

TEST(TimeTest, FormatsTimeAndMicroTimeInUtc) {
  Time t = Epoch(1795946400) + std::chrono::duration_cast<Time::duration>(microseconds(42));
  EXPECT_EQ(FormatTime(t), "2026-11-29T10:00:00Z");
  EXPECT_EQ(FormatMicroTime(t), "2026-11-29T10:00:00.000042Z");
  EXPECT_EQ(FormatTime(Epoch(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(*ParseRFC3339(FormatMicroTime(t)), t);
}

}  // namespace
}  // namespace kcm::api
