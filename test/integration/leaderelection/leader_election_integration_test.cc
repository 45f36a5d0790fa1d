// Leader election against a real kube-apiserver (L2, L3, E1, E2): two candidates in one
// process on one Lease in kube-system; the standby waits while the leader renews and takes over
// within about one retry period after the leader releases. Also checks that the Events the
// election records (through the real EventBroadcaster and ClientEventSink) land on the server,
// and that a repeat is patched to count 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "pkg/api/json.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/record/client_event_sink.h"
#include "pkg/record/event_broadcaster.h"
#include "test/integration/framework/testenv.h"

namespace kcm::leaderelection {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

auto* const kEnv = testenv::RegisterTestbed({});

const client::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
const client::GroupVersionResource kEvents{"", "v1", "events"};
constexpr const char* kNamespace = "kube-system";

std::shared_ptr<client::RestClient> AdminClient() {
  client::RestConfig config{.host = kEnv->info().server,
                            .ca_file = kEnv->info().ca_file,
                            .bearer_token = kEnv->info().admin_token,
                            .qps = -1};
  // As kube-controller-manager configures its leader-election client: no request outlives the
  // renew deadline.
  config.timeout = seconds(3);
  auto c = client::RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

bool WaitUntil(const std::function<bool()>& pred, std::chrono::seconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

api::json::Value GetJson(client::ResourceClient& rc, const std::string& name) {
  auto body = rc.Get(kNamespace, name);
  if (!body.ok()) return {};
  auto v = api::json::Parse(*body);
  return v.ok() ? std::move(v).value() : api::json::Value();
}

// One candidate: its lock, elector and the thread running it.
struct Candidate {
  Candidate(std::shared_ptr<client::RestClient> client, const std::string& lease,
            std::shared_ptr<record::EventRecorder> recorder = nullptr)
      : identity(*NewIdentity()) {
    lock = std::make_shared<LeaseLock>(std::move(client), kNamespace, lease, identity,
                                       std::move(recorder));
    LeaderElectionConfig config;
    config.lock = lock;
    config.lease_duration = seconds(4);
    config.renew_deadline = seconds(3);
    config.retry_period = milliseconds(500);
    config.release_on_cancel = true;
    config.name = lease;
    config.callbacks.on_started_leading = [this](std::stop_token) { leading = true; };
    config.callbacks.on_stopped_leading = [this] { stopped = true; };
    auto e = LeaderElector::Create(std::move(config));
    EXPECT_TRUE(e.ok()) << e.error().ToString();
    elector = std::move(e).value();
  }
  void Start() {
    runner = std::jthread([this](std::stop_token stop) { elector->Run(stop); });
  }
  void Stop() {
    runner.request_stop();
    runner.join();
  }

  std::string identity;
  std::shared_ptr<LeaseLock> lock;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<bool> leading{false}, stopped{false};
  std::jthread runner;  // last
};

std::string UniqueLeaseName(const std::string& prefix) {
  return prefix + "-" + std::to_string(::getpid());
}

TEST(LeaderElectionIntegration, StandbyWaitsThenTakesOverAfterRelease) {  // L2, L3
  KCM_REQUIRE_TESTBED();
  auto client = AdminClient();
  ASSERT_NE(client, nullptr);
  const std::string lease = UniqueLeaseName("le-takeover");
  client::ResourceClient leases(client, kLeases, true);
  (void)leases.Delete(kNamespace, lease);

  Candidate a(client, lease), b(client, lease);
  a.Start();
  ASSERT_TRUE(WaitUntil([&] { return a.leading.load(); }, seconds(10)));
  b.Start();
  // Longer than the lease duration: only a's renewals keep b out.
  std::this_thread::sleep_for(seconds(6));
  EXPECT_FALSE(b.leading);
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_EQ(b.elector->GetLeader(), a.identity);

  api::json::Value held = GetJson(leases, lease);
  ASSERT_NE(api::json::GetPath(held, {"spec", "holderIdentity"}), nullptr);
  EXPECT_EQ(api::json::GetPath(held, {"spec", "holderIdentity"})->as_string(), a.identity);
  EXPECT_EQ(api::json::GetPath(held, {"spec", "leaseDurationSeconds"})->as_int64(), 4);

  const auto released_at = std::chrono::steady_clock::now();
  a.Stop();  // graceful: releases the lease
  EXPECT_TRUE(a.stopped);
  ASSERT_TRUE(WaitUntil([&] { return b.leading.load(); }, seconds(10)));
  // b's next attempt comes within retryPeriod * 2.2; it must not wait out the 4 s lease.
  EXPECT_LT(std::chrono::steady_clock::now() - released_at, seconds(3));

  api::json::Value taken = GetJson(leases, lease);
  EXPECT_EQ(api::json::GetPath(taken, {"spec", "holderIdentity"})->as_string(), b.identity);
  EXPECT_EQ(api::json::GetPath(taken, {"spec", "leaseTransitions"})->as_int64(), 1);

  b.Stop();
  api::json::Value released = GetJson(leases, lease);
  EXPECT_EQ(api::json::GetPath(released, {"spec", "holderIdentity"})->as_string(), "");
  EXPECT_EQ(api::json::GetPath(released, {"spec", "leaseDurationSeconds"})->as_int64(), 1);
  (void)leases.Delete(kNamespace, lease);
}

// The events for the Lease, as (reason, message, count) from the server.
std::vector<std::tuple<std::string, std::string, int64_t>> LeaseEvents(
    client::ResourceClient& events, const std::string& lease) {
  std::vector<std::tuple<std::string, std::string, int64_t>> out;
  auto body = events.List(kNamespace, {.field_selector = "involvedObject.name=" + lease});
  if (!body.ok()) return out;
  auto list = api::json::Parse(*body);
  if (!list.ok()) return out;
  const api::json::Value* items = list->Find("items");
  if (items == nullptr || !items->is_array()) return out;
  for (const auto& item : items->as_array()) {
    const auto* reason = item.Find("reason");
    const auto* message = item.Find("message");
    const auto* count = item.Find("count");
    out.emplace_back(reason ? reason->as_string() : "", message ? message->as_string() : "",
                     count ? count->as_int64().value_or(0) : 0);
  }
  return out;
}

TEST(LeaderElectionIntegration, ElectionEventsReachTheServerAndRepeatsArePatched) {  // E1, E2
  KCM_REQUIRE_TESTBED();
  auto client = AdminClient();
  ASSERT_NE(client, nullptr);
  const std::string lease = UniqueLeaseName("le-events");
  client::ResourceClient leases(client, kLeases, true);
  client::ResourceClient events(client, kEvents, true);
  (void)leases.Delete(kNamespace, lease);

  record::EventBroadcaster broadcaster;
  broadcaster.StartRecordingToSink(std::make_shared<record::ClientEventSink>(client));
  auto recorder = broadcaster.NewRecorder({"leader-election-test", ""});

  Candidate a(client, lease, recorder);
  a.Start();
  ASSERT_TRUE(WaitUntil([&] { return a.leading.load(); }, seconds(10)));
  const std::string became = a.identity + " became leader";
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (const auto& [reason, message, count] : LeaseEvents(events, lease)) {
          if (reason == "LeaderElection" && message == became && count == 1) return true;
        }
        return false;
      },
      seconds(10)))
      << "no LeaderElection event for " << lease;

  // The same event again: the correlator patches the stored Event to count 2.
  a.lock->RecordEvent("became leader");
  EXPECT_TRUE(WaitUntil(
      [&] {
        for (const auto& [reason, message, count] : LeaseEvents(events, lease)) {
          if (reason == "LeaderElection" && message == became && count == 2) return true;
        }
        return false;
      },
      seconds(10)))
      << "the repeated event was not patched to count 2";

  a.Stop();
  broadcaster.Shutdown();
  (void)leases.Delete(kNamespace, lease);
}

}  // namespace
}  // namespace kcm::leaderelection
