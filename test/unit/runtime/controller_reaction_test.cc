// Controller runtime: the reaction-latency metrics a reconcile records (controller_reaction_*
// seconds), on the fake clock.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "pkg/metrics/first_write.h"
#include "pkg/metrics/metrics.h"
#include "pkg/runtime/channel_source.h"
#include "pkg/runtime/controller.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/runtime/controller_harness.h"

namespace kcm::runtime {
namespace {

using namespace std::chrono_literals;
using namespace harness;

// controller_reaction_duration_seconds: a reconcile an event queued observes the time from that
// enqueue (not from its own start) to its first write; later writes add nothing. A reconcile a
// requeue-after queued, and one that writes nothing, observe nothing.
TEST(ControllerTest, ReactionTimeRunsFromEnqueueToFirstWrite) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  Queue* queue = nullptr;
  rec->script = [&](const Request& r, int call) -> Result<ReconcileResult> {
    if (r.name == "first") {  // Holds the only worker 4 ms once "second" waits; writes nothing.
      EXPECT_TRUE(Eventually([&] { return queue->Len() == 1; }));
      clock.Step(4ms);
      return Done();
    }
    if (call == 2) {  // "second", 4 ms after its enqueue.
      clock.Step(7ms);
      metrics::NoteWriteSent();
      clock.Step(5ms);
      metrics::NoteWriteSent();
      return RequeueAfter(30s);
    }
    metrics::NoteWriteSent();  // "second" again, queued by the requeue-after: no event caused it.
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-reaction", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  metrics::Histogram reaction =
      metrics::HistogramVec("controller_reaction_duration_seconds", "", {"controller"}, {})
          .With({"ctl-reaction"});
  // Deltas, so the test also passes when repeated in one process (the registry is global).
  const uint64_t count0 = reaction.Count();
  const double sum0 = reaction.Sum();
  auto successes = [] {
    return CounterValue("controller_runtime_reconcile_total", {"ctl-reaction", "success"},
                        {"controller", "result"});
  };
  const double success0 = successes();
  h.Run();
  queue = h.ctrl.queue();
  src->Send({Obj("ns", "first")});
  src->Send({Obj("ns", "second")});
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  EXPECT_EQ(rec->Seen(), (std::vector<std::string>{"ns/first", "ns/second"}));
  EXPECT_EQ(reaction.Count() - count0, 1u);
  EXPECT_NEAR(reaction.Sum() - sum0, 0.011, 1e-9);
  clock.Step(30s);
  ASSERT_TRUE(Eventually([&] { return rec->calls == 3; }));
  ASSERT_TRUE(Eventually([&] { return successes() - success0 == 2; }));
  EXPECT_EQ(reaction.Count() - count0, 1u);
  EXPECT_NEAR(reaction.Sum() - sum0, 0.011, 1e-9);
}

// A reconcile that writes nothing and asks for a rate-limited retry (a stale cache) leaves the
// reaction running: the retry's first write observes the time since the original event.
TEST(ControllerTest, ReactionTimeSpansRetriesThatWroteNothing) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [&](const Request&, int call) -> Result<ReconcileResult> {
    if (call == 1) {
      clock.Step(3ms);
      return RequeueRateLimited();
    }
    clock.Step(2ms);
    metrics::NoteWriteSent();
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-reaction-retry", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  metrics::Histogram reaction =
      metrics::HistogramVec("controller_reaction_duration_seconds", "", {"controller"}, {})
          .With({"ctl-reaction-retry"});
  const uint64_t count0 = reaction.Count();
  const double sum0 = reaction.Sum();
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  EXPECT_EQ(reaction.Count() - count0, 0u);
  clock.Step(10ms);  // Past the rate limiter's first delay (5 ms).
  ASSERT_TRUE(Eventually([&] { return reaction.Count() - count0 == 1; }));
  EXPECT_EQ(rec->calls, 2);
  EXPECT_NEAR(reaction.Sum() - sum0, 0.015, 1e-9);
}

// AwaitWake (a stale cache, with the ConsistencyStore to wake the key): nothing of the
// rate limiter's — no delayed requeue, no failure counted — and the reconcile that the
// Enqueuer's add starts continues the reaction from the original event. This is where ours
// departs from upstream on purpose: its syncReplicaSet returns the stale-cache error, which
// processNextWorkItem counts as a failure and requeues through AddRateLimited.
TEST(ControllerTest, AwaitingWakeComesBackThroughTheEnqueuerOnly) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [&](const Request&, int call) -> Result<ReconcileResult> {
    if (call == 1) {
      clock.Step(3ms);
      return AwaitWake();
    }
    clock.Step(2ms);
    metrics::NoteWriteSent();
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-wake", &clock), rec);
  std::function<void(const std::string&)> enqueue = h.ctrl.Enqueuer();
  enqueue("ns/a");  // before Start: nothing to add to
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  metrics::Histogram reaction =
      metrics::HistogramVec("controller_reaction_duration_seconds", "", {"controller"}, {})
          .With({"ctl-wake"});
  const uint64_t count0 = reaction.Count();
  const double sum0 = reaction.Sum();
  auto requeues = [] {
    return CounterValue("controller_runtime_reconcile_total", {"ctl-wake", "requeue"},
                        {"controller", "result"});
  };
  const double requeues0 = requeues();  // the registry is process-wide (--gtest_repeat)
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return requeues() == requeues0 + 1; }));
  EXPECT_EQ(h.ctrl.queue()->NumWaiting(), 0);
  EXPECT_EQ(h.ctrl.queue()->NumRequeues("ns/a"), 0);
  clock.Step(10ms);  // past any rate-limited delay: still nothing queued
  EXPECT_EQ(h.ctrl.queue()->Len(), 0);
  EXPECT_EQ(rec->calls, 1);

  enqueue("ns/a");
  ASSERT_TRUE(Eventually([&] { return reaction.Count() - count0 == 1; }));
  EXPECT_EQ(rec->calls, 2);
  EXPECT_NEAR(reaction.Sum() - sum0, 0.015, 1e-9);  // 3 + 10 + 2 ms since the event
}

// The histogram's per-bucket counts added since `before` (a Buckets() result), keyed by upper
// bound; empty buckets left out.
std::map<double, uint64_t> NewPerBucket(const metrics::Histogram& h,
                                        const std::vector<std::pair<double, uint64_t>>& before) {
  std::map<double, uint64_t> out;
  const auto now = h.Buckets();
  uint64_t prev = 0;
  for (size_t i = 0; i < now.size(); ++i) {
    const uint64_t cumulative = now[i].second - (i < before.size() ? before[i].second : 0);
    if (cumulative > prev) out[now[i].first] = cumulative - prev;
    prev = cumulative;
  }
  return out;
}

// controller_reaction_sli_duration_seconds is the reaction less the waits that are not the
// controller's own time, and controller_reaction_wait_duration_seconds{reason} shows those waits:
// behind a reconcile of the same key already running (key_in_flight), parked until the informers
// apply our own writes (stale_cache, an AwaitWake reconcile and its wake), parked in a
// rate-limited requeue (retry_backoff). Waiting for a free worker behind other keys is ours.
// Every time below is set by the fake clock, mid-bucket, so the asserted buckets are exact.
TEST(ControllerTest, ReactionSliLeavesOutTheWaits) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  Queue* queue = nullptr;
  std::atomic<int> calls_a{0}, calls_b{0};
  rec->script = [&](const Request& r, int) -> Result<ReconcileResult> {
    if (r.name == "a") {
      switch (++calls_a) {
        case 1:  // event E1 at t=0
          clock.Step(1500us);
          metrics::NoteWriteSent();  // E1: 1.5 ms, all ours
          queue->Add("ns/a");        // event E2 at t=1.5 ms, while this reconcile runs
          clock.Step(6500us);        // done at t=8 ms: E2 waited 6.5 ms behind it
          return Done();
        case 2:  // E2's reconcile, t=8 ms: a stale cache, parked at t=9 ms
          clock.Step(1ms);
          return AwaitWake();
        default:  // woken at t=26 ms
          clock.Step(1500us);
          metrics::NoteWriteSent();  // E2: 26 ms = 6.5 in flight + 17 stale + 2.5 ours
          return Done();
      }
    }
    if (r.name == "b") {
      if (++calls_b == 1) {  // event at t=27.5 ms; fails at t=31 ms
        clock.Step(3500us);
        return Error::Local("TryAgain", "try again");
      }
      clock.Step(700us);         // the retry, at t=43 ms
      metrics::NoteWriteSent();  // 16.2 ms = 12 backoff + 4.2 ours
      return Done();
    }
    if (r.name == "c") {  // c and d queued together at t=43.7 ms; one worker
      EXPECT_TRUE(Eventually([&] { return queue->Len() == 1; }));  // d is queued
      clock.Step(3200us);
      metrics::NoteWriteSent();  // 3.2 ms
      return Done();
    }
    clock.Step(600us);
    metrics::NoteWriteSent();  // d: 3.8 ms, 3.2 of them waiting for the worker: ours
    return Done();
  };
  const std::string name = "ctl-reaction-sli";
  Harness h(Options(name, &clock), rec);
  std::function<void(const std::string&)> enqueue = h.ctrl.Enqueuer();
  auto hist = [&](const char* family, std::vector<std::string> labels) {
    std::vector<std::string> names = {"controller"};
    if (labels.size() == 2) names.push_back("reason");
    return metrics::HistogramVec(family, "", names, {}).With(labels);
  };
  const metrics::Histogram total = hist("controller_reaction_duration_seconds", {name});
  const metrics::Histogram sli = hist("controller_reaction_sli_duration_seconds", {name});
  const metrics::Histogram in_flight =
      hist("controller_reaction_wait_duration_seconds", {name, "key_in_flight"});
  const metrics::Histogram stale =
      hist("controller_reaction_wait_duration_seconds", {name, "stale_cache"});
  const metrics::Histogram backoff =
      hist("controller_reaction_wait_duration_seconds", {name, "retry_backoff"});
  // Deltas: the registry is process-wide (--gtest_repeat).
  const auto total0 = total.Buckets(), sli0 = sli.Buckets(), in_flight0 = in_flight.Buckets(),
             stale0 = stale.Buckets(), backoff0 = backoff.Buckets();
  const double total_sum0 = total.Sum(), sli_sum0 = sli.Sum(), in_flight_sum0 = in_flight.Sum(),
               stale_sum0 = stale.Sum(), backoff_sum0 = backoff.Sum();
  auto count = [&](const char* result) {
    return CounterValue("controller_runtime_reconcile_total", {name, result},
                        {"controller", "result"});
  };
  const double success0 = count("success"), requeue0 = count("requeue"), error0 = count("error");
  h.Run();
  queue = h.ctrl.queue();

  queue->Add("ns/a");
  ASSERT_TRUE(Eventually([&] { return count("requeue") - requeue0 == 1; }));  // parked, t=9 ms
  clock.Step(17ms);
  enqueue("ns/a");  // the wake, t=26 ms
  ASSERT_TRUE(Eventually([&] { return count("success") - success0 == 2; }));

  queue->Add("ns/b");  // t=27.5 ms
  ASSERT_TRUE(Eventually([&] { return count("error") - error0 == 1 && queue->NumWaiting() == 1; }));
  clock.Step(12ms);  // past the 5 ms backoff: the timer adds b at t=43 ms
  ASSERT_TRUE(Eventually([&] { return count("success") - success0 == 3; }));

  queue->Add("ns/c");  // t=43.7 ms
  queue->Add("ns/d");
  ASSERT_TRUE(Eventually([&] { return count("success") - success0 == 5; }));

  // Observations (ms): total 1.5, 26, 16.2, 3.2, 3.8; sli 1.5, 2.5, 4.2, 3.2, 3.8.
  EXPECT_EQ(NewPerBucket(total, total0),
            (std::map<double, uint64_t>{{0.002, 1}, {0.004, 2}, {0.02, 1}, {0.03, 1}}));
  EXPECT_EQ(NewPerBucket(sli, sli0),
            (std::map<double, uint64_t>{{0.002, 1}, {0.003, 1}, {0.004, 2}, {0.005, 1}}));
  EXPECT_EQ(NewPerBucket(in_flight, in_flight0), (std::map<double, uint64_t>{{0.0075, 1}}));
  EXPECT_EQ(NewPerBucket(stale, stale0), (std::map<double, uint64_t>{{0.02, 1}}));
  EXPECT_EQ(NewPerBucket(backoff, backoff0), (std::map<double, uint64_t>{{0.015, 1}}));
  EXPECT_NEAR(total.Sum() - total_sum0, 0.0507, 1e-9);
  EXPECT_NEAR(sli.Sum() - sli_sum0, 0.0152, 1e-9);
  EXPECT_NEAR(in_flight.Sum() - in_flight_sum0, 0.0065, 1e-9);
  EXPECT_NEAR(stale.Sum() - stale_sum0, 0.017, 1e-9);
  EXPECT_NEAR(backoff.Sum() - backoff_sum0, 0.012, 1e-9);
}

TEST(ControllerTest, EnqueuerOutlivesTheController) {
  std::function<void(const std::string&)> enqueue;
  {
    FakeClock clock;
    auto rec = std::make_shared<ScriptedReconciler>();
    Harness h(Options("ctl-enqueuer", &clock), rec);
    enqueue = h.ctrl.Enqueuer();
    h.Run();
    enqueue("ns/a");
    ASSERT_TRUE(Eventually([&] { return rec->calls == 1; }));
  }
  enqueue("ns/a");  // the controller and its queue are gone: a no-op
}

}  // namespace
}  // namespace kcm::runtime
