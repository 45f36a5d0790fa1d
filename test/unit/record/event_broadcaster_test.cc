// EventBroadcaster end to end over a FakeEventSink and a FakeClock (E1-E3): the Event as
// written, repeats sent as patches, the bounded non-blocking queue, retries and fallbacks.
#include "pkg/record/event_broadcaster.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "pkg/client/api_errors.h"
#include "pkg/record/testing/fake_sink.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::record {
namespace {

using std::chrono::seconds;

const ObjectReference kDeployment{"Deployment", "prod", "web", "uid-1", "apps/v1", "42", ""};

Error TransportError() {
  return Error::Transport(TransportCause::kConnectionRefused, "connection refused");
}
Error ApiError(int code, std::string_view reason) {
  return Error{code, std::string(reason), "from the server", {}};
}

class EventBroadcasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sink_ = std::make_shared<FakeEventSink>();
    broadcaster_ = std::make_unique<EventBroadcaster>(BroadcasterOptions{.clock = &clock_});
    recorder_ = broadcaster_->NewRecorder({"deployment-controller", ""});
  }

  FakeClock clock_;
  std::shared_ptr<FakeEventSink> sink_;
  std::unique_ptr<EventBroadcaster> broadcaster_;
  std::shared_ptr<EventRecorder> recorder_;
};

TEST_F(EventBroadcasterTest, WritesACoreV1EventWithUpstreamFields) {  // E1
  broadcaster_->StartRecordingToSink(sink_);
  const api::Time now = clock_.WallNow();
  recorder_->Eventf(kDeployment, "Normal", "ScalingReplicaSet", "Scaled up replica set %s to %d",
                    "web-5d8f", 3);
  ASSERT_TRUE(sink_->WaitForCalls(1));
  const SinkCall call = sink_->Calls()[0];
  EXPECT_EQ(call.verb, "create");
  const api::Event& e = call.event;
  EXPECT_EQ(e.metadata.name, EventName("web", now));
  EXPECT_EQ(e.metadata.namespace_, "prod");
  EXPECT_EQ(e.metadata.resource_version, "");
  EXPECT_EQ(e.involved_object.kind, "Deployment");
  EXPECT_EQ(e.involved_object.namespace_, "prod");
  EXPECT_EQ(e.involved_object.name, "web");
  EXPECT_EQ(e.involved_object.uid, "uid-1");
  EXPECT_EQ(e.involved_object.api_version, "apps/v1");
  EXPECT_EQ(e.involved_object.resource_version, "42");
  EXPECT_EQ(e.reason, "ScalingReplicaSet");
  EXPECT_EQ(e.message, "Scaled up replica set web-5d8f to 3");
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.first_timestamp, now);
  EXPECT_EQ(e.last_timestamp, now);
  EXPECT_EQ(e.source.component, "deployment-controller");
  EXPECT_EQ(e.reporting_component, "deployment-controller");
  EXPECT_FALSE(e.event_time.has_value());
}

TEST_F(EventBroadcasterTest, ClusterScopedObjectsGetEventsInDefault) {  // E1
  broadcaster_->StartRecordingToSink(sink_);
  recorder_->Event({"Node", "", "node-1", "uid-n", "v1", "", ""}, "Warning", "NodeNotReady", "x");
  ASSERT_TRUE(sink_->WaitForCalls(1));
  EXPECT_EQ(sink_->Calls()[0].event.metadata.namespace_, "default");
  EXPECT_EQ(sink_->Calls()[0].event.type, "Warning");
}

TEST_F(EventBroadcasterTest, UnsupportedTypeIsDropped) {  // E1
  broadcaster_->StartRecordingToSink(sink_);
  recorder_->Event(kDeployment, "Fancy", "R", "dropped");
  recorder_->Event(kDeployment, "Normal", "R", "kept");
  ASSERT_TRUE(sink_->WaitForCalls(1));
  broadcaster_->Shutdown();
  ASSERT_EQ(sink_->Calls().size(), 1u);
  EXPECT_EQ(sink_->Calls()[0].event.message, "kept");
}

TEST_F(EventBroadcasterTest, RepeatIsPatchedOnTheExistingEvent) {  // E2
  broadcaster_->StartRecordingToSink(sink_);
  recorder_->Event(kDeployment, "Normal", "ScalingReplicaSet", "same");
  ASSERT_TRUE(sink_->WaitForCalls(1));
  clock_.Step(seconds(5));
  recorder_->Event(kDeployment, "Normal", "ScalingReplicaSet", "same");
  ASSERT_TRUE(sink_->WaitForCalls(2));
  const auto calls = sink_->Calls();
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[1].event.metadata.name, calls[0].event.metadata.name);
  EXPECT_EQ(calls[1].event.count, 2);
  EXPECT_NE(calls[1].patch.find(R"("count":2)"), std::string::npos) << calls[1].patch;
  EXPECT_NE(calls[1].patch.find(R"("lastTimestamp")"), std::string::npos) << calls[1].patch;
}

TEST_F(EventBroadcasterTest, PatchAnswered404CreatesInstead) {  // E3
  broadcaster_->StartRecordingToSink(sink_);
  recorder_->Event(kDeployment, "Normal", "ScalingReplicaSet", "same");
  ASSERT_TRUE(sink_->WaitForCalls(1));
  sink_->FailNext("patch", ApiError(404, errors::reason::kNotFound));
  recorder_->Event(kDeployment, "Normal", "ScalingReplicaSet", "same");
  ASSERT_TRUE(sink_->WaitForCalls(3));
  const auto calls = sink_->Calls();
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[2].verb, "create");
  EXPECT_EQ(calls[2].event.metadata.resource_version, "");
  EXPECT_EQ(calls[2].event.count, 2);
}

TEST_F(EventBroadcasterTest, TransportErrorsAreRetriedOnTheClock) {  // E3
  broadcaster_->StartRecordingToSink(sink_);
  sink_->FailNext("create", TransportError());
  sink_->FailNext("create", TransportError());
  recorder_->Event(kDeployment, "Normal", "R", "m");
  ASSERT_TRUE(sink_->WaitForCalls(1));
  // The first wait is a random fraction of 10 s, the next ones 10 s.
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  EXPECT_EQ(sink_->Calls().size(), 1u);
  clock_.Step(seconds(10));
  ASSERT_TRUE(sink_->WaitForCalls(2));
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(seconds(9));
  EXPECT_EQ(sink_->Calls().size(), 2u);
  clock_.Step(seconds(1));
  ASSERT_TRUE(sink_->WaitForCalls(3));
  broadcaster_->Shutdown();
  EXPECT_EQ(sink_->Calls().size(), 3u);
}

TEST_F(EventBroadcasterTest, GivesUpAfterTwelveTries) {  // E3
  broadcaster_->StartRecordingToSink(sink_);
  for (int i = 0; i < 12; ++i) sink_->FailNext("create", TransportError());
  recorder_->Event(kDeployment, "Normal", "R", "m");
  for (int i = 1; i < 12; ++i) {
    ASSERT_TRUE(sink_->WaitForCalls(i));
    ASSERT_TRUE(clock_.WaitForWaiters(1));
    clock_.Step(seconds(10));
  }
  ASSERT_TRUE(sink_->WaitForCalls(12));
  // The worker moves on: a new event is written at once.
  recorder_->Event(kDeployment, "Normal", "Other", "m");
  ASSERT_TRUE(sink_->WaitForCalls(13));
  EXPECT_EQ(sink_->Calls()[12].event.reason, "Other");
  EXPECT_EQ(clock_.Waiters(), 0);
}

TEST_F(EventBroadcasterTest, ServerRejectionsAreNotRetried) {  // E3
  broadcaster_->StartRecordingToSink(sink_);
  sink_->FailNext("create", ApiError(409, errors::reason::kAlreadyExists));
  sink_->FailNext("create", ApiError(422, errors::reason::kInvalid));
  recorder_->Event(kDeployment, "Normal", "A", "m");
  recorder_->Event(kDeployment, "Normal", "B", "m");
  recorder_->Event(kDeployment, "Normal", "C", "m");
  ASSERT_TRUE(sink_->WaitForCalls(3));
  const auto calls = sink_->Calls();
  EXPECT_EQ(calls[0].event.reason, "A");
  EXPECT_EQ(calls[1].event.reason, "B");
  EXPECT_EQ(calls[2].event.reason, "C");
  EXPECT_EQ(clock_.Waiters(), 0);
}

TEST_F(EventBroadcasterTest, FullQueueDropsWithoutBlocking) {  // E3
  // No sink yet: nothing drains the queue of 1000.
  for (int i = 0; i < 1010; ++i) {
    recorder_->Event(kDeployment, "Normal", "R", "m" + std::to_string(i));
  }
  EXPECT_EQ(broadcaster_->dropped(), 10u);
  broadcaster_->Shutdown();
  recorder_->Event(kDeployment, "Normal", "R", "after shutdown");
  EXPECT_EQ(broadcaster_->dropped(), 11u);
}

// A full queue sheds per-pod repeats (same object, same reason), never a Deployment's
// ScalingReplicaSet or a Warning: the 1000 x 10 rollout lost 455 of 1000 ScalingReplicaSet events
// to a queue full of SuccessfulCreate lines while every event was dropped alike.
TEST(EventBroadcasterQueueTest, FullQueueShedsRepeatsAndKeepsScalingAndWarnings) {
  FakeClock clock;
  auto sink = std::make_shared<FakeEventSink>();
  EventBroadcaster broadcaster(BroadcasterOptions{.clock = &clock, .queue_size = 10});
  auto rs_recorder = broadcaster.NewRecorder({"replicaset-controller", ""});
  auto d_recorder = broadcaster.NewRecorder({"deployment-controller", ""});
  auto rs = [](int i) {
    return ObjectReference{
        "ReplicaSet", "prod", "web-" + std::to_string(i), "rs-uid-" + std::to_string(i), "apps/v1",
        "1",          ""};
  };
  auto deployment = [](int i) {
    return ObjectReference{
        "Deployment", "prod", "web-" + std::to_string(i), "d-uid-" + std::to_string(i), "apps/v1",
        "1",          ""};
  };
  // Nothing drains the queue yet: two ReplicaSets' pod creations fill it.
  for (int pod = 0; pod < 5; ++pod) {
    for (int r = 0; r < 2; ++r) {
      rs_recorder->Eventf(rs(r), "Normal", "SuccessfulCreate", "Created pod: web-%d-%d", r, pod);
    }
  }
  EXPECT_EQ(broadcaster.dropped(), 0u);
  for (int d = 0; d < 4; ++d) {
    d_recorder->Eventf(deployment(d), "Normal", "ScalingReplicaSet",
                       "Scaled up replica set web-%d to 10", d);
  }
  rs_recorder->Event(rs(2), "Warning", "FailedCreate", "pods \"web-2-x\" is forbidden");
  for (int pod = 5; pod < 100; ++pod) {  // more repeats: dropped on arrival
    rs_recorder->Eventf(rs(0), "Normal", "SuccessfulCreate", "Created pod: web-0-%d", pod);
  }
  EXPECT_EQ(broadcaster.dropped(), 5u + 95u);

  // Written before the Shutdown, which drops what is still queued.
  broadcaster.StartRecordingToSink(sink);
  ASSERT_TRUE(sink->WaitForCalls(10));
  broadcaster.Shutdown();
  std::map<std::string, int> written;  // reason -> count
  std::set<std::string> objects_with_creates;
  for (const auto& call : sink->Calls()) {
    ++written[call.event.reason];
    if (call.event.reason == "SuccessfulCreate") {
      objects_with_creates.insert(call.event.involved_object.name);
    }
  }
  EXPECT_EQ(written["ScalingReplicaSet"], 4);
  EXPECT_EQ(written["FailedCreate"], 1);
  EXPECT_EQ(written["SuccessfulCreate"], 5);
  // Each ReplicaSet keeps some of its creations: repeats were shed, not whole objects.
  EXPECT_EQ(objects_with_creates, (std::set<std::string>{"web-0", "web-1"}));
}

// Warnings compete only with each other once no Normal event is queued: then the incoming one is
// dropped, as upstream's DropIfChannelFull.
TEST(EventBroadcasterQueueTest, QueueFullOfWarningsDropsTheIncomingEvent) {
  FakeClock clock;
  auto sink = std::make_shared<FakeEventSink>();
  EventBroadcaster broadcaster(BroadcasterOptions{.clock = &clock, .queue_size = 3});
  auto recorder = broadcaster.NewRecorder({"replicaset-controller", ""});
  for (const char* reason : {"FailedCreate", "FailedDelete", "FailedUpdate", "FailedLate"}) {
    recorder->Event(kDeployment, "Warning", reason, "m");
  }
  recorder->Event(kDeployment, "Normal", "Late", "m");
  EXPECT_EQ(broadcaster.dropped(), 2u);
  broadcaster.StartRecordingToSink(sink);
  ASSERT_TRUE(sink->WaitForCalls(3));
  broadcaster.Shutdown();
  std::vector<std::string> reasons;
  for (const auto& call : sink->Calls()) reasons.push_back(call.event.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"FailedCreate", "FailedDelete", "FailedUpdate"}));
}

// Upstream's eventBroadcasterImpl.Shutdown cancels its context: the watcher goroutine stops and
// what its channel still holds is never written. A replica that stops serving or stops must
// not wait for a backlog of writes behind the rate limiter, nor for a server that does not answer.
TEST_F(EventBroadcasterTest, ShutdownCancelsTheWriteUnderWayAndDropsTheQueue) {  // E3
  sink_->HoldWrites();
  recorder_->Event(kDeployment, "Normal", "A", "m");
  recorder_->Event(kDeployment, "Normal", "B", "m");
  recorder_->Event(kDeployment, "Warning", "C", "m");
  broadcaster_->StartRecordingToSink(sink_);
  ASSERT_TRUE(sink_->WaitForCalls(1));  // A is on its way and never answered
  broadcaster_->Shutdown();             // returns: A canceled (not retried), B and C dropped
  ASSERT_EQ(sink_->Calls().size(), 1u);
  EXPECT_EQ(sink_->Calls()[0].event.reason, "A");
  EXPECT_EQ(broadcaster_->dropped(), 2u);
  recorder_->Event(kDeployment, "Normal", "D", "after shutdown");
  EXPECT_EQ(broadcaster_->dropped(), 3u);
}

TEST_F(EventBroadcasterTest, RecorderOutlivesBroadcaster) {  // E3
  broadcaster_.reset();
  recorder_->Event(kDeployment, "Normal", "R", "dropped, not a crash");
}

}  // namespace
}  // namespace kcm::record
