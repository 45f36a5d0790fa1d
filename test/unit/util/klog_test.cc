#include "pkg/util/klog.h"

#include <gtest/gtest.h>

namespace kcm::klog {
namespace {

using namespace std::string_literals;
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

// What a peer can put in an error text: line breaks that would start a forged line, NUL, a
// terminal escape, DEL, C1 and Unicode line separators, bytes that are not UTF-8. Each sink
// writes one line with all of them escaped; valid UTF-8 text stays as it is.
const std::string kHostile =
    "oops\nE1206 00:00:00.000000 1 forged.go:1] FORGED\x00\x1b[31m\r\x7f\xc2\x85\xe2\x80\xa8"
    "\xff\xc0\xaf\xed\xa0\x80 ok \xc3\xa9\xe2\x82\xac"s;

TEST(KlogTest, TextValuesEscapeEveryControlCharacterAndBadByte) {
  EXPECT_EQ(FormatText(&kHostile, "m", {}),
            "\"m\" err=\"oops\\nE1206 00:00:00.000000 1 forged.go:1] "
            "FORGED\\x00\\x1b[31m\\r\\x7f\\u0085\\u2028\\xff\\xc0\\xaf\\xed\\xa0\\x80 ok "
            "\xc3\xa9\xe2\x82\xac\"");
}

TEST(KlogTest, JsonValuesEscapeEveryControlCharacterAndReplaceBadBytes) {
  EXPECT_EQ(FormatJson(1.0, "a.cc", 1, google::GLOG_ERROR, 0, &kHostile, "m", {}),
            "{\"ts\":1.000,\"caller\":\"a.cc:1\",\"msg\":\"m\",\"err\":\"oops\\nE1206 "
            "00:00:00.000000 1 forged.go:1] FORGED\\u0000\\u001b[31m\\r\\u007f\\u0085\\u2028"
            "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd ok \xc3\xa9\xe2\x82\xac\"}\n");
}

// A plain LOG() line's message is escaped the same way but not quoted, so a structured line's
// quoted values come out unchanged.
TEST(KlogTest, TextLinesAreOneLineWithTheMessageEscaped) {
  std::tm tm{};
  tm.tm_mon = 11;
  tm.tm_mday = 6;
  tm.tm_hour = 3;
  tm.tm_min = 4;
  tm.tm_sec = 5;
  const std::string line = internal::FormatTextLine(google::GLOG_WARNING, tm, 42, 77, "x.cc", 9,
                                                    "watch ended: " + kHostile);
  EXPECT_EQ(line,
            "W1206 03:04:05.000042    77 x.cc:9] watch ended: oops\\nE1206 00:00:00.000000 1 "
            "forged.go:1] FORGED\\x00\\x1b[31m\\r\\x7f\\u0085\\u2028\\xff\\xc0\\xaf\\xed\\xa0\\x80 "
            "ok \xc3\xa9\xe2\x82\xac\n");
  const std::string structured = FormatText(&kHostile, "Failed to watch", Pairs());
  EXPECT_EQ(internal::EscapeMessage(structured), structured);
}

TEST(KlogTest, DurationsPrintAsGoDurations) {
  EXPECT_EQ(ToValue(std::chrono::milliseconds(1500)).text, "1.5s");
  EXPECT_EQ(ToValue(std::chrono::milliseconds(1500)).kind, internal::Value::Kind::kString);
}

}  // namespace
}  // namespace kcm::klog
