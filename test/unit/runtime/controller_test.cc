// Controller runtime: requeue paths, dedup, exclusivity, recovery, shutdown, cache sync.
#include "pkg/runtime/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "pkg/metrics/first_write.h"
#include "pkg/metrics/metrics.h"
#include "pkg/runtime/channel_source.h"
#include "pkg/util/testing/fake_clock.h"
#include "pkg/util/testing/log_capture.h"
#include "test/unit/runtime/controller_harness.h"

namespace kcm::runtime {
namespace {

using namespace std::chrono_literals;
using namespace harness;

TEST(ControllerTest, SuccessForgetsAndCountsSuccess) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-success", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return rec->calls == 1; }));
  ASSERT_TRUE(Eventually([&] {
    return CounterValue("controller_runtime_reconcile_total", {"ctl-success", "success"},
                        {"controller", "result"}) == 1;
  }));
  EXPECT_EQ(h.ctrl.queue()->NumRequeues("ns/a"), 0);
  EXPECT_EQ(rec->Seen(), std::vector<std::string>{"ns/a"});
}

// Every line the runtime writes for a controller carries the controller's logger name, as
// upstream's processNextWorkItem and syncHandler lines do (logger="deployment-controller").
TEST(ControllerTest, LinesCarryTheControllersLoggerName) {
  LogCapture capture;
  const int32_t saved_v = FLAGS_v;
  FLAGS_v = 4;
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = FailsFirstCall;
  auto src = std::make_shared<ChannelSource>();
  ControllerOptions options = Options("ctl-logger", &clock);
  options.logger = klog::Background().WithName("deployment-controller");
  {
    Harness h(std::move(options), rec);
    ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
    h.Run();
    src->Send({Obj("ns", "a")});
    ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
    clock.Step(10ms);
    ASSERT_TRUE(Eventually([&] { return rec->calls == 2; }));
    ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 0; }));
    h.runner.request_stop();
  }
  FLAGS_v = saved_v;
  std::vector<std::string> ours;
  for (const std::string& line : capture.lines()) {
    if (line.find(" controller.cc ") != std::string::npos) ours.push_back(line);
  }
  // controller-runtime's Controller.Start logs "Shutdown signal received" once the stop comes;
  // ours logs it from the stop's callback, on the stopping thread, with the same keys.
  const char* kWanted[] = {"\"Starting workers\"", "\"Reconciler error\"", "\"Finished syncing\"",
                           "\"Shutdown signal received, waiting for all workers to finish\"",
                           "\"All workers finished\""};
  for (const char* wanted : kWanted) {
    EXPECT_TRUE(std::any_of(ours.begin(), ours.end(), [&](const std::string& line) {
      return line.find(wanted) != std::string::npos;
    })) << wanted;
  }
  for (const std::string& line : ours) {
    EXPECT_NE(line.find(" logger=\"deployment-controller\" controller=\"ctl-logger\""),
              std::string::npos)
        << line;
  }
}

// Error -> AddRateLimited and the error counted; the retry waits for the rate limiter's delay.
TEST(ControllerTest, ErrorRequeuesRateLimited) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = FailsFirstCall;
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-error", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rec->calls, 1);  // Not retried before the clock moves past the 5 ms backoff.
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  clock.Step(10ms);
  ASSERT_TRUE(Eventually([&] { return rec->calls == 2; }));
  EXPECT_EQ(
      CounterValue("controller_runtime_reconcile_errors_total", {"ctl-error"}, {"controller"}), 1);
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 0; }));
}

// RequeueAfter > 0 -> Forget, then AddAfter exactly that delay.
TEST(ControllerTest, RequeueAfterForgetsThenAddsAfter) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [](const Request&, int call) -> Result<ReconcileResult> {
    if (call == 1) return RequeueAfter(30s);
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-after", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return rec->calls == 1; }));
  // Step only once the key waits in the queue: its deadline is taken from the clock when added.
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  clock.Step(29s);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rec->calls, 1);
  EXPECT_EQ(h.ctrl.queue()->NumRequeues("ns/a"), 0);
  clock.Step(1s);
  ASSERT_TRUE(Eventually([&] { return rec->calls == 2; }));
  EXPECT_EQ(CounterValue("controller_runtime_reconcile_total", {"ctl-after", "requeue_after"},
                         {"controller", "result"}),
            1);
}

// RequeueRateLimited -> AddRateLimited without an error.
TEST(ControllerTest, RequeueGoesThroughRateLimiter) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [](const Request&, int call) -> Result<ReconcileResult> {
    if (call == 1) return RequeueRateLimited();
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-requeue", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 1; }));
  // NumRequeues counts before the key is added to the waiting set: step once it waits there.
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  clock.Step(5ms);
  ASSERT_TRUE(Eventually([&] { return rec->calls == 2; }));
  EXPECT_EQ(CounterValue("controller_runtime_reconcile_total", {"ctl-requeue", "requeue"},
                         {"controller", "result"}),
            1);
  EXPECT_EQ(
      CounterValue("controller_runtime_reconcile_errors_total", {"ctl-requeue"}, {"controller"}),
      0);
}

// The retry cap (the Deployment controller's 15): after max_retries the key is dropped.
TEST(ControllerTest, MaxRetriesDropsKey) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [](const Request&, int) -> Result<ReconcileResult> {
    return Error::Local("Boom", "always fails");
  };
  auto src = std::make_shared<ChannelSource>();
  ControllerOptions o = Options("ctl-maxretries", &clock);
  o.max_retries = 3;
  Harness h(std::move(o), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE(Eventually([&] { return rec->calls == i; })) << i;
    // The failed key is added after Reconcile returns; step once it waits (not after call 4:
    // that one drops the key).
    if (i < 4) {
      ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; })) << i;
    }
    clock.Step(1s);
  }
  // Call 4 saw NumRequeues == 3: dropped, forgotten, no fifth call.
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 0; }));
  clock.Step(1h);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(rec->calls, 4);
}

TEST(ControllerTest, TerminalErrorIsNotRetried) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [](const Request&, int) -> Result<ReconcileResult> {
    return TerminalError("cannot be fixed by retrying");
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-terminal", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] {
    return CounterValue("controller_runtime_terminal_reconcile_errors_total", {"ctl-terminal"},
                        {"controller"}) == 1;
  }));
  clock.Step(1h);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(rec->calls, 1);
}

// An exception is caught, counted, and requeued rate-limited; the worker survives.
TEST(ControllerTest, ExceptionIsRecoveredAndRequeued) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  rec->script = [](const Request&, int call) -> Result<ReconcileResult> {
    if (call == 1) throw std::runtime_error("nil pointer");
    return Done();
  };
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-panic", &clock), rec);
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  h.Run();
  src->Send({Obj("ns", "a")});
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumRequeues("ns/a") == 1; }));
  EXPECT_EQ(
      CounterValue("controller_runtime_reconcile_panics_total", {"ctl-panic"}, {"controller"}), 1);
  ASSERT_TRUE(Eventually([&] { return h.ctrl.queue()->NumWaiting() == 1; }));
  clock.Step(10ms);
  ASSERT_TRUE(Eventually([&] { return rec->calls == 2; }));
}

// A key is never reconciled by two workers at once, even when re-added while in flight; a key
// added twice while waiting is reconciled once.
TEST(ControllerTest, KeyNeverReconciledConcurrentlyAndDeduplicated) {
  FakeClock clock;
  std::mutex mu;
  std::map<std::string, int> in_flight;
  std::atomic<bool> overlap{false};
  std::atomic<int> calls{0};
  auto rec = std::make_shared<ReconcilerFunc>([&](const Request& r, std::stop_token) {
    {
      std::lock_guard lock(mu);
      if (++in_flight[r.Key()] > 1) overlap = true;
    }
    std::this_thread::sleep_for(2ms);
    {
      std::lock_guard lock(mu);
      --in_flight[r.Key()];
    }
    ++calls;
    return Result<ReconcileResult>(Done());
  });
  Harness h(Options("ctl-exclusive", &clock, 4), rec);
  h.Run();
  Queue* q = h.ctrl.queue();
  for (int round = 0; round < 50; ++round) {
    for (const char* k : {"ns/a", "ns/b", "ns/a", "ns/c"}) q->Add(k);
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(Eventually([&] { return q->Len() == 0 && calls > 0; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(overlap.load());
  EXPECT_LT(calls.load(), 200);  // Dedup: far fewer calls than the 200 adds.
}

TEST(ControllerTest, PredicatesFilterEvents) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  auto src = std::make_shared<ChannelSource>();
  Harness h(Options("ctl-pred", &clock), rec);
  ASSERT_TRUE(
      h.ctrl
          .Watch(src, EnqueueRequestForObject(),
                 {NewPredicateFuncs([](const api::Object& o) { return o.Meta().name != "skip"; })})
          .ok());
  h.Run();
  src->Send({Obj("ns", "skip")});
  src->Send({Obj("ns", "keep")});
  ASSERT_TRUE(Eventually([&] { return rec->calls == 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(rec->calls, 1);
  EXPECT_EQ(rec->Seen(), std::vector<std::string>{"ns/keep"});
}

// A watch added after Start is started at once.
TEST(ControllerTest, WatchAfterStartStartsAtOnce) {
  FakeClock clock;
  auto rec = std::make_shared<ScriptedReconciler>();
  Harness h(Options("ctl-late", &clock), rec);
  h.Run();
  auto src = std::make_shared<ChannelSource>();
  ASSERT_TRUE(h.ctrl.Watch(src, EnqueueRequestForObject()).ok());
  src->Send({Obj("ns", "late")});
  ASSERT_TRUE(Eventually([&] { return rec->calls == 1; }));
}

// Shutdown: Start returns only after the in-flight reconcile finished; queued work is dropped.
TEST(ControllerTest, ShutdownWaitsForInFlightReconcile) {
  FakeClock clock;
  std::atomic<bool> entered{false}, release{false}, finished{false};
  std::atomic<int> calls{0};
  auto rec = std::make_shared<ReconcilerFunc>([&](const Request&, std::stop_token) {
    ++calls;
    entered = true;
    while (!release) std::this_thread::sleep_for(1ms);
    finished = true;
    return Result<ReconcileResult>(Done());
  });
  auto h = std::make_unique<Harness>(Options("ctl-shutdown", &clock), rec);
  h->Run();
  h->ctrl.queue()->Add("ns/a");
  ASSERT_TRUE(Eventually([&] { return entered.load(); }));
  h->ctrl.queue()->Add("ns/b");  // Waiting when shutdown comes: never reconciled.
  h->runner.request_stop();
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(finished.load());
  release = true;
  h->runner.join();
  EXPECT_TRUE(finished.load());
  EXPECT_TRUE(h->start_status.ok());
  EXPECT_EQ(calls.load(), 1);
}

// The thread that runs Start is one of the workers (it needs none of its own to wait for the stop):
// two workers reconcile two keys at once, one of them on the starting thread.
TEST(ControllerTest, TheStartingThreadIsTheLastWorker) {
  FakeClock clock;
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::atomic<int> inside{0};
  auto rec = std::make_shared<ReconcilerFunc>([&](const Request&, std::stop_token) {
    {
      std::lock_guard lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    ++inside;
    // Both keys are in reconciles at once before either returns: two threads.
    for (int i = 0; i < 5000 && inside.load() < 2; ++i) std::this_thread::sleep_for(1ms);
    return Result<ReconcileResult>(Done());
  });
  auto h = std::make_unique<Harness>(Options("ctl-last-worker", &clock, /*workers=*/2), rec);
  h->Run();
  h->ctrl.queue()->Add("ns/a");
  h->ctrl.queue()->Add("ns/b");
  ASSERT_TRUE(Eventually([&] { return inside.load() == 2; }));
  const std::thread::id runner = h->runner.get_id();
  h->runner.request_stop();
  h->runner.join();
  EXPECT_TRUE(h->start_status.ok());
  std::lock_guard lock(mu);
  EXPECT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads.count(runner), 1u);
}

class NeverSyncs final : public Source {
 public:
  Status Start(std::stop_token, std::shared_ptr<EventHandler>, std::vector<Predicate>,
               Queue&) override {
    return OkStatus();
  }
  bool WaitForSync(std::stop_token stop) override {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, stop, [] { return false; });
    return false;
  }
};

TEST(ControllerTest, CacheSyncTimeoutFailsClearly) {
  FakeClock clock;
  ControllerOptions o = Options("ctl-sync", &clock);
  o.cache_sync_timeout = 10s;
  Controller ctrl(std::move(o), std::make_shared<ScriptedReconciler>());
  ASSERT_TRUE(ctrl.Watch(std::make_shared<NeverSyncs>(), EnqueueRequestForObject()).ok());
  Status result;
  std::atomic<bool> returned{false};
  std::jthread runner([&](std::stop_token st) {
    result = ctrl.Start(st);
    returned = true;
  });
  // Other threads (the queue's) also sleep on the clock, so no waiter count tells when the sync
  // timer is armed: keep moving time until Start gives up (bounded in real time).
  for (int i = 0; i < 1000 && !returned; ++i) {
    clock.Step(1s);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(returned.load()) << "Start did not give up on the unsynced source";
  if (!returned) runner.request_stop();  // Fail, rather than hang, without a sync timeout.
  runner.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, "CacheSyncTimeout");
  EXPECT_NE(result.error().message.find("ctl-sync"), std::string::npos);
}

// Zero cache_sync_timeout (what the daemon's controllers use): Start waits for the caches until
// stopped, as upstream's WaitForNamedCacheSync, however much time passes (here 20 min on the
// fake clock, well past the 2 min default); the stop then ends it without an error.
TEST(ControllerTest, ZeroCacheSyncTimeoutWaitsUntilStopped) {
  FakeClock clock;
  ControllerOptions o = Options("ctl-sync-forever", &clock);
  o.cache_sync_timeout = std::chrono::nanoseconds(0);
  Controller ctrl(std::move(o), std::make_shared<ScriptedReconciler>());
  ASSERT_TRUE(ctrl.Watch(std::make_shared<NeverSyncs>(), EnqueueRequestForObject()).ok());
  Status result = Error::Local("NotReturned", "");
  std::atomic<bool> returned{false};
  std::jthread runner([&](std::stop_token st) {
    result = ctrl.Start(st);
    returned = true;
  });
  for (int i = 0; i < 1200 && !returned; ++i) {
    clock.Step(1s);
    if (i % 10 == 0) std::this_thread::sleep_for(1ms);
  }
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(returned.load()) << "Start gave up on the caches before it was stopped";
  runner.request_stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result.error().ToString();
}

TEST(ControllerTest, StartTwiceIsAnError) {
  FakeClock clock;
  Harness h(Options("ctl-twice", &clock), std::make_shared<ScriptedReconciler>());
  h.Run();
  std::stop_source s;
  Status second = h.ctrl.Start(s.get_token());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().reason, "AlreadyStarted");
}

TEST(ControllerTest, MetricsReportMaxConcurrentReconciles) {
  FakeClock clock;
  Harness h(Options("ctl-gauge", &clock, 3), std::make_shared<ScriptedReconciler>());
  h.Run();
  metrics::GaugeVec g("controller_runtime_max_concurrent_reconciles", "", {"controller"});
  ASSERT_TRUE(Eventually([&] { return g.With({"ctl-gauge"}).Value() == 3; }));
}

}  // namespace
}  // namespace kcm::runtime
