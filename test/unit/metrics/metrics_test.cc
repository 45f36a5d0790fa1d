#include "pkg/metrics/metrics.h"

#include <gtest/gtest.h>

namespace kcm::metrics {
namespace {

TEST(MetricsTest, CounterVecChildrenAreSharedByLabels) {
  CounterVec vec("kcm_test_events_total", "test counter", {"name"});
  vec.With({"a"}).Inc();
  vec.With({"a"}).Inc(2);
  vec.With({"b"}).Inc();
  EXPECT_EQ(vec.With({"a"}).Value(), 3);
  EXPECT_EQ(vec.With({"b"}).Value(), 1);
}

TEST(MetricsTest, SameFamilyTwiceMerges) {
  CounterVec first("kcm_test_merge_total", "merged", {"k"});
  CounterVec second("kcm_test_merge_total", "merged", {"k"});
  first.With({"x"}).Inc();
  EXPECT_EQ(second.With({"x"}).Value(), 1);
}

TEST(MetricsTest, HistogramAndGaugeAppearInTextFormat) {
  HistogramVec h("kcm_test_duration_seconds", "durations", {"verb"},
                 ExponentialBuckets(0.001, 10, 4));
  h.With({"GET"}).Observe(0.05);
  GaugeVec g("kcm_test_depth", "depth", {"name"});
  g.With({"q"}).Set(7);
  std::string text = SerializeText();
  EXPECT_NE(text.find("kcm_test_duration_seconds_bucket{verb=\"GET\",le=\"0.1\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kcm_test_depth{name=\"q\"} 7"), std::string::npos) << text;
  EXPECT_EQ(h.With({"GET"}).Count(), 1u);
}

TEST(MetricsTest, WrongLabelCountThrows) {
  CounterVec vec("kcm_test_labels_total", "labels", {"a", "b"});
  EXPECT_THROW(vec.With({"only-one"}), std::invalid_argument);
}

}  // namespace
}  // namespace kcm::metrics
