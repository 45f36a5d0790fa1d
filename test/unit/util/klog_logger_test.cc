#include "pkg/util/klog_logger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/util/testing/log_capture.h"

namespace kcm::klog {
namespace {

using namespace std::string_literals;

using CapturingSink = LogCapture;

// The JSON form goes straight to stderr; the format is a process-wide choice, put back after.
class JsonFormat {
 public:
  JsonFormat() { internal::SetFormat(Format::kJson); }
  ~JsonFormat() { internal::SetFormat(Format::kText); }
};

std::string CaptureJson(const std::function<void()>& log) {
  JsonFormat json;
  testing::internal::CaptureStderr();
  log();
  return testing::internal::GetCapturedStderr();
}

// klogr's WithName: logger="name" comes first among the pairs; names nest with ".". The caller
// in the header is the file that called Info, not the logger's header.
TEST(KlogLoggerTest, TextFormWritesTheNameFirstThenValuesThenTheCallsPairs) {
  CapturingSink sink;
  Logger logger = Background().WithName("deployment-controller").WithValues("shard", 2);
  logger.Info("Starting controller", "controller", "deployment");
  logger.WithName("sync").Error("boom", "Sync failed", "deployment", KRef("ns", "web"));
  Background().Info("plain");
  EXPECT_EQ(sink.lines(),
            (std::vector<std::string>{
                "I klog_logger_test.cc \"Starting controller\" logger=\"deployment-controller\" "
                "shard=2 controller=\"deployment\"",
                "E klog_logger_test.cc \"Sync failed\" err=\"boom\" "
                "logger=\"deployment-controller.sync\" shard=2 deployment=\"ns/web\"",
                "I klog_logger_test.cc \"plain\""}));
}

// klog's serialize.FormatKVs: a key given again (by WithValues or the call) is written once,
// the last value winning in its own place; the same pair again stays where it was first.
TEST(KlogLoggerTest, RepeatedKeysAreWrittenOnceTheLastValueWinning) {
  CapturingSink sink;
  Logger logger = Background().WithValues("shard", 2, "replicaSet", "a");
  logger.Info("m", "shard", 3, "pods", 1);
  logger.Info("m", "shard", 2, "pods", 1);
  logger.WithValues("pods", 0).Info("m", "pods", 5, "pods", 6);
  EXPECT_EQ(sink.lines(), (std::vector<std::string>{
                              "I klog_logger_test.cc \"m\" replicaSet=\"a\" shard=3 pods=1",
                              "I klog_logger_test.cc \"m\" shard=2 replicaSet=\"a\" pods=1",
                              "I klog_logger_test.cc \"m\" shard=2 replicaSet=\"a\" pods=6"}));
}

// zapr's JSON (component-base/logs/json): "logger" right after "ts", the values as fields.
TEST(KlogLoggerTest, JsonFormPutsTheNameAfterTs) {
  Logger logger = Background().WithName("replicaset-controller").WithValues("shard", 2);
  std::string out = CaptureJson([&] { logger.Info("Starting workers", "count", 5); });
  ASSERT_EQ(out.rfind("{\"ts\":", 0), 0u) << out;
  auto logger_at =
      out.find(",\"logger\":\"replicaset-controller\",\"caller\":\"klog_logger_test.cc:");
  EXPECT_NE(logger_at, std::string::npos) << out;
  EXPECT_NE(out.find("\"msg\":\"Starting workers\",\"v\":0,\"shard\":2,\"count\":5}\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;
}

// V(n) writes only when -v is at least n, and says "v":n in JSON.
TEST(KlogLoggerTest, VerbosityFollowsV) {
  CapturingSink sink;
  const int32_t saved = FLAGS_v;
  FLAGS_v = 2;
  Background().V(4).Info("hidden");
  Background().V(2).Info("shown");
  EXPECT_FALSE(Background().V(3).Enabled());
  std::string out = CaptureJson([] { Background().V(2).Info("json"); });
  FLAGS_v = saved;
  EXPECT_EQ(sink.lines(), (std::vector<std::string>{"I klog_logger_test.cc \"shown\""}));
  EXPECT_NE(out.find("\"msg\":\"json\",\"v\":2}"), std::string::npos) << out;
}

// --vmodule gives a file its own level for a contextual logger's V, as for KLOG_V_INFOS: the
// caller's file (its base name without extension) against glog's patterns, either way from -v,
// and a pattern set after a file was first asked about applies to it too.
TEST(KlogLoggerTest, VModuleGivesTheCallersFileItsOwnLevel) {
  const int32_t saved = FLAGS_v;
  FLAGS_v = 0;
  EXPECT_FALSE(Background().V(2, "pkg/x/vmodule_later.cc").Enabled());
  SetVModule("vmodule_target*", 4);
  SetVModule("vmodule_quiet", 0);
  EXPECT_TRUE(Background().V(4, "pkg/x/vmodule_target_file.cc").Enabled());
  EXPECT_FALSE(Background().V(5, "pkg/x/vmodule_target_file.cc").Enabled());
  EXPECT_FALSE(Background().V(1, "pkg/x/vmodule_other.cc").Enabled());
  SetVModule("vmodule_later", 2);
  EXPECT_TRUE(Background().V(2, "pkg/x/vmodule_later.cc").Enabled());
  FLAGS_v = 3;
  EXPECT_TRUE(Background().V(3, "pkg/x/vmodule_other.cc").Enabled());
  EXPECT_FALSE(Background().V(1, "pkg/x/vmodule_quiet.cc").Enabled());
  {
    CapturingSink sink;
    Background().WithName("n").V(4, "pkg/x/vmodule_target_file.cc").Info("shown");
    Background().V(4).Info("hidden");
    EXPECT_EQ(sink.lines(),
              (std::vector<std::string>{"I klog_logger_test.cc \"shown\" logger=\"n\""}));
  }
  FLAGS_v = saved;
}

// A peer's bytes in the name, a value or the error never break the line, in either form.
const std::string kHostile = "x\nE1206 00:00:00.000000 1 forged.go:1] \"FORGED\"\x1b[31m\xff\"\\"s;

TEST(KlogLoggerTest, HostileNamesValuesAndErrorsAreEscapedInText) {
  CapturingSink sink;
  Background().WithName(kHostile).WithValues("k", kHostile).Error(kHostile, "m", "v", kHostile);
  const std::string q =
      "\"x\\nE1206 00:00:00.000000 1 forged.go:1] \\\"FORGED\\\"\\x1b[31m\\xff\\\"\\\\\"";
  EXPECT_EQ(sink.lines(), (std::vector<std::string>{"E klog_logger_test.cc \"m\" err=" + q +
                                                    " logger=" + q + " k=" + q + " v=" + q}));
}

TEST(KlogLoggerTest, HostileNamesValuesAndErrorsAreEscapedInJson) {
  std::string out = CaptureJson([] {
    Background().WithName(kHostile).WithValues("k", kHostile).Error(kHostile, "m", "v", kHostile);
  });
  const std::string q =
      "\"x\\nE1206 00:00:00.000000 1 forged.go:1] \\\"FORGED\\\"\\u001b[31m\\ufffd\\\"\\\\\"";
  EXPECT_NE(out.find("\"logger\":" + q + ","), std::string::npos) << out;
  EXPECT_NE(out.find("\"err\":" + q + ",\"k\":" + q + ",\"v\":" + q + "}\n"), std::string::npos)
      << out;
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;
}

}  // namespace
}  // namespace kcm::klog
