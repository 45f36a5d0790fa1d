// SuperviseControllers (cmd/kube-controller-manager/app/controller_context.h): every enabled
// controller runs until stop; one that returns early (its caches never synced, an error) fails
// the whole run — the others are stopped and the error names it, so the daemon exits 1 instead
// of staying leader — and /readyz's "controllers" check is ok only while every one runs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cmd/kube-controller-manager/app/controller_context.h"

namespace kcm::app {
namespace {

using namespace std::chrono_literals;

void BlockUntil(std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait(lock, stop, [] { return false; });
}

// Runs until stopped, or returns `early` once `fail` is requested.
class FakeController final {
 public:
  explicit FakeController(std::optional<Status> early = std::nullopt) : early_(std::move(early)) {}
  Status Run(std::stop_token stop) {
    runs_++;
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    std::stop_source either;
    std::stop_callback a(stop, [&] { either.request_stop(); });
    std::stop_callback b(fail_.get_token(), [&] { either.request_stop(); });
    cv.wait(lock, either.get_token(), [] { return false; });
    if (!stop.stop_requested() && early_) return *early_;
    stopped_by_caller_ = stop.stop_requested();
    return OkStatus();
  }
  void Fail() { fail_.request_stop(); }
  std::atomic<int> runs_{0};
  std::atomic<bool> stopped_by_caller_{false};

 private:
  std::optional<Status> early_;
  std::stop_source fail_;
};

std::vector<NamedController> Make(std::vector<std::pair<std::string, FakeController*>>& out,
                                  std::vector<std::optional<Status>> early) {
  std::vector<NamedController> v;
  const char* names[] = {"deployment", "replicaset"};
  for (size_t i = 0; i < early.size(); ++i) {
    auto c = std::make_unique<FakeController>(early[i]);
    out.emplace_back(names[i], c.get());
    v.emplace_back(names[i], std::make_unique<RunnableController>(std::move(c)));
  }
  return v;
}

TEST(SuperviseControllersTest, AllRunUntilStopThenOk) {
  std::vector<std::pair<std::string, FakeController*>> fakes;
  auto controllers = Make(fakes, {std::nullopt, std::nullopt});
  ControllerReadiness ready;
  std::stop_source stop;
  Status ready_in_hook = Error::Local("NotChecked", "");
  std::atomic<bool> hook_ran{false};
  Status result = Error::Local("NotReturned", "");
  std::jthread runner([&] {
    result = SuperviseControllers(
        controllers,
        [&](std::stop_token) {
          // Every Run was started before the hook: ready.
          ready_in_hook = ready.ControllersRunning();
          hook_ran = true;
        },
        ready, stop.get_token());
  });
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((fakes[0].second->runs_ == 0 || fakes[1].second->runs_ == 0 || !hook_ran) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(ready.ControllersRunning().ok());
  stop.request_stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_TRUE(ready_in_hook.ok()) << ready_in_hook.error().ToString();
  EXPECT_TRUE(fakes[0].second->stopped_by_caller_);
  EXPECT_TRUE(fakes[1].second->stopped_by_caller_);
  EXPECT_FALSE(ready.ControllersRunning().ok());  // nothing runs after the stop
}

// A controller whose Run returns an error before stop (e.g. CacheSyncTimeout): readiness drops
// (1 of 2 running), the other controller is stopped, and the run fails naming the controller —
// the daemon turns that into exit 1 rather than staying leader with a controller missing.
TEST(SuperviseControllersTest, EarlyErrorStopsTheOthersAndFailsNamingIt) {
  std::vector<std::pair<std::string, FakeController*>> fakes;
  auto controllers =
      Make(fakes, {std::nullopt, Status(Error::Local("CacheSyncTimeout", "caches not synced"))});
  ControllerReadiness ready;
  std::stop_source stop;  // never requested: the failure alone must end the run
  Status ready_after_failure = OkStatus();
  Status result = OkStatus();
  std::jthread runner([&] {
    result = SuperviseControllers(
        controllers,
        [&](std::stop_token running) {
          fakes[1].second->Fail();
          BlockUntil(running);  // ended by the failure, not by `stop`
          ready_after_failure = ready.ControllersRunning();
        },
        ready, stop.get_token());
  });
  runner.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, "ControllerFailed");
  EXPECT_NE(result.error().message.find("\"replicaset\""), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("caches not synced"), std::string::npos);
  ASSERT_FALSE(ready_after_failure.ok());
  EXPECT_NE(ready_after_failure.error().message.find("of 2 controllers running"), std::string::npos)
      << ready_after_failure.error().message;
  EXPECT_FALSE(stop.stop_requested());
  EXPECT_EQ(fakes[0].second->runs_.load(), 1);
}

// A Run that returns OK without being asked to stop has failed too.
TEST(SuperviseControllersTest, EarlyOkReturnIsAFailure) {
  std::vector<std::pair<std::string, FakeController*>> fakes;
  auto controllers = Make(fakes, {Status(OkStatus())});
  ControllerReadiness ready;
  std::stop_source stop;
  Status result = OkStatus();
  std::jthread runner([&] {
    result = SuperviseControllers(
        controllers, [&](std::stop_token) { fakes[0].second->Fail(); }, ready, stop.get_token());
  });
  runner.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, "ControllerStopped");
  EXPECT_NE(result.error().message.find("\"deployment\" returned before stop"), std::string::npos)
      << result.error().message;
}

TEST(ControllerReadinessTest, NeedsEveryEnabledController) {
  ControllerReadiness r;
  EXPECT_FALSE(r.ControllersRunning().ok());  // nothing enabled yet: not ready
  r.enabled = 2;
  r.running = 1;
  ASSERT_FALSE(r.ControllersRunning().ok());
  EXPECT_EQ(r.ControllersRunning().error().message, "1 of 2 controllers running");
  r.running = 2;
  EXPECT_TRUE(r.ControllersRunning().ok());
  EXPECT_FALSE(r.InformersSynced().ok());
  r.informers_synced = true;
  EXPECT_TRUE(r.InformersSynced().ok());
}

}  // namespace
}  // namespace kcm::app
