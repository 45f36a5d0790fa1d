// Bad input never crashes: every malformed, mistyped, out-of-range or truncated document gives a
// DecodeError naming the field path.
#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/deployment.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

void ExpectDecodeError(const Result<ObjectPtr>& r, const std::string& path_fragment) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "DecodeError");
  EXPECT_NE(r.error().message.find(path_fragment), std::string::npos) << r.error().message;
}

TEST(BadInputTest, WrongTypesNameTheField) {
  Decoder d;
  ExpectDecodeError(PodCodec().decode(d, R"({"metadata":{"name":"p","labels":{"a":1}}})"),
                    "metadata.labels.a");
  ExpectDecodeError(PodCodec().decode(d, R"({"metadata":{"name":"p"},"status":{"phase":3}})"),
                    "status.phase");
  ExpectDecodeError(PodCodec().decode(d, R"({"metadata":"x"})"), "metadata");
  ExpectDecodeError(
      ReplicaSetCodec().decode(d, R"({"metadata":{"name":"r"},"spec":{"replicas":"3"}})"),
      "spec.replicas");
  ExpectDecodeError(
      DeploymentCodec().decode(
          d,
          R"({"metadata":{"name":"d"},"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}})"),
      "spec.strategy.rollingUpdate.maxSurge");
  ExpectDecodeError(
      PodCodec().decode(d, R"({"metadata":{"name":"p","creationTimestamp":"yesterday"}})"),
      "metadata.creationTimestamp");
}

TEST(BadInputTest, OutOfRangeNumbers) {
  Decoder d;
  ExpectDecodeError(
      ReplicaSetCodec().decode(d, R"({"metadata":{"name":"r"},"spec":{"replicas":2147483648}})"),
      "spec.replicas");
  ExpectDecodeError(
      ReplicaSetCodec().decode(d, R"({"metadata":{"name":"r"},"spec":{"replicas":1.5}})"),
      "spec.replicas");
  ExpectDecodeError(
      PodCodec().decode(d, R"({"metadata":{"name":"p","generation":99999999999999999999}})"),
      "metadata.generation");
  ExpectDecodeError(
      PodCodec().decode(
          d,
          R"({"metadata":{"name":"p"},"status":{"containerStatuses":[{"restartCount":-2147483649}]}})"),
      "restartCount");
}

TEST(BadInputTest, MissingRequiredName) {
  Decoder d;
  ExpectDecodeError(PodCodec().decode(d, R"({"metadata":{}})"), "metadata.name");
  ExpectDecodeError(DeploymentCodec().decode(d, R"({"spec":{}})"), "metadata.name");
}

TEST(BadInputTest, MalformedJson) {
  Decoder d;
  for (const char* bad : {"", "{", "[", "nul", "{\"metadata\":{\"name\":\"p\"}", "{\"a\" 1}",
                          "{\"metadata\":{\"name\":\"p\"}}}", "\"str\"", "42"}) {
    auto r = PodCodec().decode(d, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().reason, "DecodeError") << bad;
    auto rs = ReplicaSetCodec().decode(d, bad);
    ASSERT_FALSE(rs.ok()) << bad;
  }
}

// Every prefix of real documents: a clean error (or, for whitespace-only cuts, success), never UB.
TEST(BadInputTest, TruncatedDocumentsAreErrors) {
  Decoder d;
  std::string pod = R"({"type":"MODIFIED","object":)" + testing::ApiTestdata("pod-10k.json") + "}";
  for (size_t n = 0; n < pod.size(); n += 7) {
    auto ev = PodCodec().decode_watch_event(d, std::string_view(pod).substr(0, n));
    EXPECT_FALSE(ev.ok()) << n;
  }
  std::string rs = testing::ApiTestdata("replicaset.json");
  while (!rs.empty() && (rs.back() == '\n')) rs.pop_back();
  for (size_t n = 0; n < rs.size(); n += 5) {
    auto r = ReplicaSetCodec().decode(d, std::string_view(rs).substr(0, n));
    EXPECT_FALSE(r.ok()) << n;
  }
}

}  // namespace
}  // namespace kcm::api
