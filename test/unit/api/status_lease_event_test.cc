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

// The body as a json::Value document serialized, the way Event::ToJson built it before it wrote
// the text directly: the reference the direct writer must match byte for byte.
std::string EventDocument(const Event& e) {
  using json::Value;
  Value obj = Value::MakeObject();
  obj.Set("apiVersion", Value::String("v1"));
  obj.Set("kind", Value::String("Event"));
  auto opt = [](Value& o, const char* k, const std::string& v) {
    if (!v.empty()) o.Set(k, Value::String(v));
  };
  Value meta = Value::MakeObject();
  opt(meta, "name", e.metadata.name);
  opt(meta, "generateName", e.generate_name);
  opt(meta, "namespace", e.metadata.namespace_);
  opt(meta, "resourceVersion", e.metadata.resource_version);
  obj.Set("metadata", std::move(meta));
  Value ref = Value::MakeObject();
  opt(ref, "kind", e.involved_object.kind);
  opt(ref, "namespace", e.involved_object.namespace_);
  opt(ref, "name", e.involved_object.name);
  opt(ref, "uid", e.involved_object.uid);
  opt(ref, "apiVersion", e.involved_object.api_version);
  opt(ref, "resourceVersion", e.involved_object.resource_version);
  opt(ref, "fieldPath", e.involved_object.field_path);
  obj.Set("involvedObject", std::move(ref));
  opt(obj, "reason", e.reason);
  opt(obj, "message", e.message);
  Value src = Value::MakeObject();
  opt(src, "component", e.source.component);
  opt(src, "host", e.source.host);
  obj.Set("source", std::move(src));
  if (e.first_timestamp) obj.Set("firstTimestamp", Value::String(FormatTime(*e.first_timestamp)));
  if (e.last_timestamp) obj.Set("lastTimestamp", Value::String(FormatTime(*e.last_timestamp)));
  if (e.count != 0) obj.Set("count", Value::Int(e.count));
  opt(obj, "type", e.type);
  if (e.event_time) obj.Set("eventTime", Value::String(FormatMicroTime(*e.event_time)));
  opt(obj, "reportingComponent", e.reporting_component);
  opt(obj, "reportingInstance", e.reporting_instance);
  opt(obj, "action", e.action);
  return json::Serialize(obj);
}

// ToJson writes the text itself; it is the document's serialization byte for byte, with every
// optional member absent or present, and strings that need escapes.
TEST(EventTest, BodyIsTheDocumentsSerialization) {
  Event empty;
  EXPECT_EQ(empty.ToJson(), EventDocument(empty));
  EXPECT_EQ(empty.ToJson(),
            R"({"apiVersion":"v1","kind":"Event","metadata":{},"involvedObject":{},"source":{}})");

  Event full;
  full.metadata.name = "web.17a";
  full.generate_name = "web-";
  full.metadata.namespace_ = "prod";
  full.metadata.resource_version = "77";
  full.involved_object = {"Pod", "prod", "web-1", "u-1", "v1", "42", "spec.containers{c}"};
  full.reason = "Failed";
  full.message = "quote \" backslash \\ newline \n tab \t control \x01 utf-8 \u00e9";
  full.source = {"kubelet", "node-1"};
  full.first_timestamp = *ParseRFC3339("2026-11-29T10:00:00Z");
  full.last_timestamp = *ParseRFC3339("2026-11-29T10:05:00Z");
  full.count = -3;
  full.type = "Warning";
  full.event_time = *ParseRFC3339("2026-11-29T10:05:00.123456Z");
  full.reporting_component = "kubelet";
  full.reporting_instance = "node-1";
  full.action = "Pull";
  EXPECT_EQ(full.ToJson(), EventDocument(full));

  // One member of each group alone.
  Event some;
  some.involved_object.uid = "u";
  some.source.host = "h";
  some.count = 2147483647;
  some.action = "a";
  EXPECT_EQ(some.ToJson(), EventDocument(some));
  EXPECT_TRUE(json::Parse(full.ToJson()).ok());
}

}  // namespace
}  // namespace kcm::api
