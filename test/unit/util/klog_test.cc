#include "pkg/util/klog.h"

#include <gtest/gtest.h>

namespace kcm::klog {
namespace {

using internal::FormatJson;
using internal::FormatText;
using internal::KeyValue;
using internal::ToValue;

std::vector<KeyValue> Pairs() {
  return {{"deployment", ToValue(KRef("default", "web"))},
          {"replicas", ToValue(3)},
          {"paused", ToValue(false)},
          {"reason", ToValue("has \"quotes\"\n")}};
}

// klog's text form: the message quoted, then key=value with strings quoted and object
// references as "ns/name" (klog.KRef's String()).
TEST(KlogTest, TextFormatQuotesStringsAndRendersRefsAsNamespaceSlashName) {
  EXPECT_EQ(FormatText(nullptr, "Started syncing deployment", Pairs()),
            "\"Started syncing deployment\" deployment=\"default/web\" replicas=3 paused=false "
            "reason=\"has \\\"quotes\\\"\\n\"");
  std::string err = "connection refused";
  EXPECT_EQ(FormatText(&err, "Sync failed", {}), "\"Sync failed\" err=\"connection refused\"");
}

// klog's JSON schema (component-base/logs/json): ts in Unix milliseconds, caller as file:line,
// msg, v for info lines, err (and no v) for errors, then the pairs; KRef as an object.
TEST(KlogTest, JsonFormatFollowsKlogSchema) {
  EXPECT_EQ(FormatJson(1700000000123.5, "controllers/deployment/sync.cc", 42, google::GLOG_INFO, 4,
                       nullptr, "Started syncing deployment", Pairs()),
            "{\"ts\":1700000000123.500,\"caller\":\"sync.cc:42\",\"msg\":\"Started syncing "
            "deployment\",\"v\":4,\"deployment\":{\"name\":\"web\",\"namespace\":\"default\"},"
            "\"replicas\":3,\"paused\":false,\"reason\":\"has \\\"quotes\\\"\\n\"}\n");
  std::string err = "boom";
  EXPECT_EQ(FormatJson(1.0, "a/b.cc", 7, google::GLOG_ERROR, 0, &err, "failed", {}),
            "{\"ts\":1.000,\"caller\":\"b.cc:7\",\"msg\":\"failed\",\"err\":\"boom\"}\n");
}

TEST(KlogTest, DurationsPrintAsGoDurations) {
  EXPECT_EQ(ToValue(std::chrono::milliseconds(1500)).text, "1.5s");
  EXPECT_EQ(ToValue(std::chrono::milliseconds(1500)).kind, internal::Value::Kind::kString);
}

}  // namespace
}  // namespace kcm::klog
