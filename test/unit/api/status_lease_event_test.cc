#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/event.h"
#include "pkg/api/json.h"
#include "pkg/api/lease.h"
#include "pkg/api/status.h"
#include "pkg/api/time.h"

namespace kcm::api {
namespace {

// Behaviour 1.7: code, reason, message, details.causes[].reason.
TEST(StatusTest, DecodesStatusWithCauses) {
  auto err = DecodeStatus(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: ns terminating",)"
      R"("reason":"Forbidden","details":{"name":"p","kind":"pods","causes":[{"reason":"NamespaceTerminating","message":"x"},)"
      R"({"reason":"ResourceVersionTooLarge"}]},"code":403})");
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, 403);
  EXPECT_EQ(err->reason, "Forbidden");
  EXPECT_EQ(err->message, "forbidden: ns terminating");
  EXPECT_EQ(err->causes,
            (std::vector<std::string>{"NamespaceTerminating", "ResourceVersionTooLarge"}));
}

TEST(StatusTest, NonStatusBodiesAreNotStatuses) {
  EXPECT_FALSE(DecodeStatus("<html>502</html>").has_value());
  EXPECT_FALSE(DecodeStatus(R"({"kind":"Pod"})").has_value());
  EXPECT_FALSE(DecodeStatus("").has_value());
  EXPECT_FALSE(DecodeStatus("[]").has_value());
}

TEST(LeaseTest, DecodeAndEncodeMicroTimesKeepingUnknownFields) {
  Decoder d;
  auto lease = DecodeLease(
      d,
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kube-controller-manager",)"
      R"("namespace":"kube-system","resourceVersion":"10","labels":{"x":"y"}},"spec":{"holderIdentity":"a_1",)"
      R"("leaseDurationSeconds":15,"acquireTime":"2026-11-29T10:00:00.000001Z","renewTime":"2026-11-29T10:00:05.500000Z",)"
      R"("leaseTransitions":3,"strategy":"OldestEmulationVersion"}})");
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  const Lease& l = **lease;
  EXPECT_EQ(l.spec.holder_identity, "a_1");
  EXPECT_EQ(l.spec.lease_duration_seconds, 15);
  EXPECT_EQ(l.spec.lease_transitions, 3);
  EXPECT_EQ(FormatMicroTime(*l.spec.renew_time), "2026-11-29T10:00:05.500000Z");
  Lease next = l;
  next.spec.holder_identity = "b_2";
  next.spec.lease_transitions = 4;
  auto body = next.ToJson();
  ASSERT_TRUE(body.ok());
  auto v = json::Parse(*body);
  EXPECT_EQ(json::GetPath(*v, {"spec", "holderIdentity"})->as_string(), "b_2");
  EXPECT_EQ(json::GetPath(*v, {"spec", "leaseTransitions"})->as_int64(), 4);
  EXPECT_EQ(json::GetPath(*v, {"spec", "acquireTime"})->as_string(), "2026-11-29T10:00:00.000001Z");
  EXPECT_EQ(json::GetPath(*v, {"spec", "strategy"})->as_string(), "OldestEmulationVersion");
  EXPECT_EQ(json::GetPath(*v, {"metadata", "labels", "x"})->as_string(), "y");
  EXPECT_EQ(json::GetPath(*v, {"metadata", "resourceVersion"})->as_string(), "10");
}

TEST(LeaseTest, NewLeaseBody) {
  Lease l;
  l.metadata.name = "kcm";
  l.metadata.namespace_ = "kube-system";
  l.spec.holder_identity = "me";
  l.spec.lease_duration_seconds = 15;
  EXPECT_EQ(
      *l.ToJson(),
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kcm","namespace":"kube-system"},)"
      R"("spec":{"holderIdentity":"me","leaseDurationSeconds":15}})");
}

TEST(EventTest, EncodeThenDecode) {
  Event e;
  e.metadata.name = "web.1";
  e.metadata.namespace_ = "prod";
  e.involved_object = {"ReplicaSet", "prod", "web", "u1", "apps/v1", "5", ""};
  e.reason = "SuccessfulCreate";
  e.message = "Created pod: web-abc";
  e.source.component = "replicaset-controller";
  e.first_timestamp = *ParseRFC3339("2026-11-29T10:00:00Z");
  e.last_timestamp = e.first_timestamp;
  e.count = 1;
  e.type = "Normal";
  std::string body = e.ToJson();
  Decoder d;
  auto back = DecodeEvent(d, body);
  ASSERT_TRUE(back.ok()) << back.error().ToString() << body;
  EXPECT_EQ((*back)->involved_object.kind, "ReplicaSet");
  EXPECT_EQ((*back)->involved_object.uid, "u1");
  EXPECT_EQ((*back)->reason, "SuccessfulCreate");
  EXPECT_EQ((*back)->message, "Created pod: web-abc");
  EXPECT_EQ((*back)->source.component, "replicaset-controller");
  EXPECT_EQ((*back)->last_timestamp, e.first_timestamp);
  EXPECT_EQ((*back)->count, 1);
  EXPECT_EQ((*back)->type, "Normal");
}

}  // namespace
}  // namespace kcm::api
