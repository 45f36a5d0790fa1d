// FakeRecorder, Eventf formatting, GetReference and the Event wire body (E1).
#include <gtest/gtest.h>

#include "pkg/api/json.h"
#include "pkg/api/replicaset.h"
#include "pkg/record/client_event_sink.h"
#include "pkg/record/reference.h"
#include "pkg/record/testing/fake_recorder.h"

namespace kcm::record {
namespace {

TEST(FakeRecorderTest, RecordsTypeReasonMessage) {  // E1
  FakeRecorder recorder;
  recorder.Eventf({}, "Normal", "SuccessfulCreate", "Created pod: %s", "web-abc");
  recorder.Event({}, "Warning", "FailedCreate", "quota");
  EXPECT_EQ(recorder.Events(),
            (std::vector<std::string>{"Normal SuccessfulCreate Created pod: web-abc",
                                      "Warning FailedCreate quota"}));
  EXPECT_EQ(recorder.TakeEvents().size(), 2u);
  EXPECT_TRUE(recorder.Events().empty());
}

TEST(FakeRecorderTest, IncludeObject) {  // E1
  FakeRecorder recorder(/*include_object=*/true);
  recorder.Event({"ReplicaSet", "ns", "rs", "", "apps/v1", "", ""}, "Normal", "R", "m");
  EXPECT_EQ(recorder.Events()[0], "Normal R m involvedObject{kind=ReplicaSet,apiVersion=apps/v1}");
}

TEST(EventfTest, LongMessagesAreNotTruncated) {  // E1
  FakeRecorder recorder;
  const std::string long_name(5000, 'x');
  recorder.Eventf({}, "Normal", "R", "%s!", long_name.c_str());
  EXPECT_EQ(recorder.Events()[0], "Normal R " + long_name + "!");
}

TEST(GetReferenceTest, FromObjectMetadata) {  // E1
  api::ReplicaSet rs;
  rs.metadata.name = "web-5d8f";
  rs.metadata.namespace_ = "prod";
  rs.metadata.uid = "uid-9";
  rs.metadata.resource_version = "77";
  const ObjectReference ref = GetReference(rs, "apps/v1");
  EXPECT_EQ(ref.kind, "ReplicaSet");
  EXPECT_EQ(ref.namespace_, "prod");
  EXPECT_EQ(ref.name, "web-5d8f");
  EXPECT_EQ(ref.uid, "uid-9");
  EXPECT_EQ(ref.api_version, "apps/v1");
  EXPECT_EQ(ref.resource_version, "77");
}

TEST(EncodeEventTest, CoreV1BodyWithNullEventTime) {  // E1
  api::Event e;
  e.metadata.name = "web.17a";
  e.metadata.namespace_ = "prod";
  e.involved_object = {"Deployment", "prod", "web", "uid-1", "apps/v1", "42", ""};
  e.reason = "ScalingReplicaSet";
  e.message = "Scaled up";
  e.type = "Normal";
  e.count = 1;
  e.source.component = "deployment-controller";
  e.reporting_component = "deployment-controller";
  e.first_timestamp = e.last_timestamp = api::Time{} + std::chrono::seconds(1700000000);
  auto body = EncodeEvent(e);
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  auto v = api::json::Parse(*body);
  ASSERT_TRUE(v.ok());
  using api::json::GetPath;
  EXPECT_EQ(GetPath(*v, {"apiVersion"})->as_string(), "v1");
  EXPECT_EQ(GetPath(*v, {"kind"})->as_string(), "Event");
  EXPECT_EQ(GetPath(*v, {"metadata", "name"})->as_string(), "web.17a");
  EXPECT_EQ(GetPath(*v, {"metadata", "namespace"})->as_string(), "prod");
  EXPECT_EQ(GetPath(*v, {"involvedObject", "uid"})->as_string(), "uid-1");
  EXPECT_EQ(GetPath(*v, {"source", "component"})->as_string(), "deployment-controller");
  EXPECT_EQ(GetPath(*v, {"reportingComponent"})->as_string(), "deployment-controller");
  EXPECT_EQ(GetPath(*v, {"firstTimestamp"})->as_string(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(GetPath(*v, {"lastTimestamp"})->as_string(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(GetPath(*v, {"count"})->as_int64(), 1);
  ASSERT_NE(GetPath(*v, {"eventTime"}), nullptr);
  EXPECT_TRUE(GetPath(*v, {"eventTime"})->is_null());
}

}  // namespace
}  // namespace kcm::record
