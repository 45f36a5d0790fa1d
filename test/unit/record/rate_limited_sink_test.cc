// RateLimitedEventSink: events spend the tokens of the controller's own client limiter, as
// upstream's Deployment and ReplicaSet controllers' events do (DeploymentController.Run and
// ReplicaSetController.Run call StartRecordingToSink with the controller's own clientset, one
// --kube-api-qps budget for its API writes and its events).
#include "pkg/record/rate_limited_sink.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stop_token>
#include <thread>

#include "pkg/client/rate_limiter.h"
#include "pkg/record/testing/fake_sink.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::record {
namespace {

api::Event NamedEvent(const std::string& name) {
  api::Event e;
  e.metadata.name = name;
  e.metadata.namespace_ = "default";
  return e;
}

TEST(RateLimitedEventSinkTest, EventsSpendTheControllersTokens) {
  FakeClock clock;
  auto limiter = std::make_shared<client::TokenBucketRateLimiter>(1.0, 2, clock);
  auto inner = std::make_shared<FakeEventSink>();
  std::stop_source stop;
  RateLimitedEventSink sink(inner, *limiter, limiter, stop.get_token());

  // The burst of two goes to two events: the controller has no token left for its own write.
  ASSERT_TRUE(sink.Create(NamedEvent("a"), {}).ok());
  ASSERT_TRUE(sink.Patch(NamedEvent("a"), "{}", {}).ok());
  EXPECT_FALSE(limiter->TryAccept());

  // The next event waits for the bucket to refill (1 token a second on the fake clock).
  std::jthread writer([&] { (void)sink.Update(NamedEvent("b"), {}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(inner->Calls().size(), 2u) << "written before a token was available";
  clock.Step(std::chrono::seconds(1));
  ASSERT_TRUE(inner->WaitForCalls(3));
  writer.join();

  // Stopped (lease lost, shutdown): the queued events still go out, without a token.
  EXPECT_FALSE(limiter->TryAccept());
  stop.request_stop();
  ASSERT_TRUE(sink.Create(NamedEvent("c"), {}).ok());
  EXPECT_EQ(inner->Calls().size(), 4u);
}

// The broadcaster's Shutdown stops its call: the wait for a token ends and the write is canceled,
// so a replica's stop does not wait behind the client's queue of reserved tokens.
TEST(RateLimitedEventSinkTest, TheCallsStopEndsItsWaitAndCancelsItsWrite) {
  FakeClock clock;
  auto limiter = std::make_shared<client::TokenBucketRateLimiter>(1.0, 1, clock);
  ASSERT_TRUE(limiter->TryAccept());  // no token left, and the fake clock never refills one
  auto inner = std::make_shared<FakeEventSink>();
  inner->HoldWrites();
  RateLimitedEventSink sink(inner, *limiter, limiter, std::stop_token{});
  std::stop_source call;
  Result<api::Event> written = Error::Local("NotYet", "");
  std::jthread writer([&] { written = sink.Create(NamedEvent("a"), call.get_token()); });
  call.request_stop();
  writer.join();  // hangs (the test times out) if the stop does not end the wait
  ASSERT_FALSE(written.ok());
  EXPECT_TRUE(errors::IsCanceled(written.error())) << written.error().ToString();
  EXPECT_LE(inner->Calls().size(), 1u);
}

}  // namespace
}  // namespace kcm::record
