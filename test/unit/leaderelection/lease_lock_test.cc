// LeaseLock over a scripted HTTP server (L1, L2): the record read from a Lease, updates
// conditional on the last resourceVersion seen, unknown fields kept, create, and lock events.
#include "pkg/leaderelection/lease_lock.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>

#include "pkg/api/json.h"
#include "pkg/api/time.h"
#include "pkg/client/api_errors.h"
#include "pkg/record/testing/fake_recorder.h"
#include "test/unit/client/test_server.h"

namespace kcm::leaderelection {
namespace {

using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;

constexpr const char* kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm";

const char* kStoredLease = R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
  "metadata":{"name":"kcm","namespace":"kube-system","uid":"u-1","resourceVersion":"41",
              "labels":{"team":"infra"}},
  "spec":{"holderIdentity":"other_1","leaseDurationSeconds":15,
          "acquireTime":"2023-11-14T22:13:20.000000Z","renewTime":"2023-11-14T22:13:25.123456Z",
          "leaseTransitions":3,"strategy":"OldestEmulationVersion"}})";

// Answers like an API server holding one Lease: GET returns it, PUT/POST store the body with
// the next resourceVersion.
class LeaseServer {
 public:
  explicit LeaseServer(bool exists)
      : stored_(exists ? kStoredLease : ""),
        server_([this](const RecordedRequest& r, Conn& c) { Handle(r, c); }) {}

  std::shared_ptr<client::RestClient> Client() {
    auto c = client::RestClient::Create(client::RestConfig{.host = server_.url(), .qps = -1});
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    return *c;
  }
  std::vector<RecordedRequest> requests() const { return server_.requests(); }

 private:
  void Handle(const RecordedRequest& r, Conn& c) {
    std::lock_guard lock(mu_);
    if (r.method == "GET") {
      if (stored_.empty()) {
        c.Respond(
            404,
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})");
      } else {
        c.Respond(200, stored_);
      }
      return;
    }
    auto body = api::json::Parse(r.body);
    ASSERT_TRUE(body.ok()) << r.body;
    ASSERT_TRUE(api::json::SetPath(*body, {"metadata", "resourceVersion"},
                                   api::json::Value::String(std::to_string(++rv_)))
                    .ok());
    stored_ = api::json::Serialize(*body);
    c.Respond(r.method == "POST" ? 201 : 200, stored_);
  }

  std::mutex mu_;
  std::string stored_;
  int rv_ = 41;
  TestServer server_;  // last: its threads call Handle
};

TEST(LeaseLockTest, GetReadsTheRecord) {  // L1
  LeaseServer server(/*exists=*/true);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "me");
  auto rec = lock.Get({});
  ASSERT_TRUE(rec.ok()) << rec.error().ToString();
  EXPECT_EQ(rec->holder_identity, "other_1");
  EXPECT_EQ(rec->lease_duration_seconds, 15);
  EXPECT_EQ(api::FormatMicroTime(*rec->acquire_time), "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(api::FormatMicroTime(*rec->renew_time), "2023-11-14T22:13:25.123456Z");
  EXPECT_EQ(rec->leader_transitions, 3);
  EXPECT_EQ(server.requests().at(0).path, kLeasePath);
}

TEST(LeaseLockTest, UpdateIsConditionalOnTheLastObjectAndKeepsUnknownFields) {  // L1, L2
  LeaseServer server(/*exists=*/true);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "me");
  ASSERT_TRUE(lock.Get({}).ok());
  LeaderElectionRecord rec;
  rec.holder_identity = "me";
  rec.lease_duration_seconds = 15;
  rec.acquire_time = rec.renew_time = api::Time{} + std::chrono::microseconds(1700000100000001);
  rec.leader_transitions = 4;
  ASSERT_TRUE(lock.Update(rec, {}).ok());
  rec.renew_time = *rec.renew_time + std::chrono::seconds(2);
  ASSERT_TRUE(lock.Update(rec, {}).ok());

  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].method, "PUT");
  EXPECT_EQ(reqs[1].path, kLeasePath);
  auto first = api::json::Parse(reqs[1].body);
  ASSERT_TRUE(first.ok());
  using api::json::GetPath;
  EXPECT_EQ(GetPath(*first, {"metadata", "resourceVersion"})->as_string(), "41");
  EXPECT_EQ(GetPath(*first, {"metadata", "labels", "team"})->as_string(), "infra");
  EXPECT_EQ(GetPath(*first, {"spec", "strategy"})->as_string(), "OldestEmulationVersion");
  EXPECT_EQ(GetPath(*first, {"spec", "holderIdentity"})->as_string(), "me");
  EXPECT_EQ(GetPath(*first, {"spec", "leaseTransitions"})->as_int64(), 4);
  EXPECT_EQ(GetPath(*first, {"spec", "renewTime"})->as_string(), "2023-11-14T22:15:00.000001Z");
  // The second update builds on the server's answer to the first.
  auto second = api::json::Parse(reqs[2].body);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(GetPath(*second, {"metadata", "resourceVersion"})->as_string(), "42");
  EXPECT_EQ(GetPath(*second, {"spec", "renewTime"})->as_string(), "2023-11-14T22:15:02.000001Z");
}

// What a holder publishes about itself (the shard-work of docs/design/sharding.md) rides on its
// renewals; the object's other metadata is kept.
TEST(LeaseLockTest, AnnotationsSetAreWrittenWithTheNextUpdate) {
  LeaseServer server(/*exists=*/true);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "me");
  ASSERT_TRUE(lock.Get({}).ok());
  lock.SetAnnotations({{"example.com/work", "{\"rest\":7}"}});
  LeaderElectionRecord rec;
  rec.holder_identity = "me";
  ASSERT_TRUE(lock.Update(rec, {}).ok());
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  auto body = api::json::Parse(reqs[1].body);
  ASSERT_TRUE(body.ok());
  using api::json::GetPath;
  ASSERT_NE(GetPath(*body, {"metadata", "annotations", "example.com/work"}), nullptr);
  EXPECT_EQ(GetPath(*body, {"metadata", "annotations", "example.com/work"})->as_string(),
            "{\"rest\":7}");
  EXPECT_EQ(GetPath(*body, {"metadata", "labels", "team"})->as_string(), "infra");
}

TEST(LeaseLockTest, UpdateBeforeGetOrCreateFailsWithoutARequest) {  // L2
  LeaseServer server(/*exists=*/true);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "me");
  EXPECT_FALSE(lock.Update(LeaderElectionRecord{}, {}).ok());
  EXPECT_TRUE(server.requests().empty());
}

TEST(LeaseLockTest, AbsentLeaseIsNotFoundThenCreated) {  // L2
  LeaseServer server(/*exists=*/false);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "me");
  auto got = lock.Get({});
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(errors::IsNotFound(got.error())) << got.error().ToString();
  LeaderElectionRecord rec;
  rec.holder_identity = "me";
  rec.lease_duration_seconds = 15;
  ASSERT_TRUE(lock.Create(rec, {}).ok());
  const auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].method, "POST");
  EXPECT_EQ(reqs[1].path, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases");
  auto body = api::json::Parse(reqs[1].body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(api::json::GetPath(*body, {"metadata", "name"})->as_string(), "kcm");
  EXPECT_EQ(api::json::GetPath(*body, {"spec", "holderIdentity"})->as_string(), "me");
  // The created object is the base of the next update.
  ASSERT_TRUE(lock.Update(rec, {}).ok());
  auto update = api::json::Parse(server.requests().at(2).body);
  ASSERT_TRUE(update.ok());
  EXPECT_EQ(api::json::GetPath(*update, {"metadata", "resourceVersion"})->as_string(), "42");
}

TEST(LeaseLockTest, RecordEventNamesTheLease) {  // L2
  LeaseServer server(/*exists=*/true);
  auto recorder = std::make_shared<record::FakeRecorder>(/*include_object=*/true);
  LeaseLock lock(server.Client(), "kube-system", "kcm", "host_1", recorder);
  lock.RecordEvent("became leader");
  EXPECT_EQ(
      recorder->Events(),
      std::vector<std::string>{"Normal LeaderElection host_1 became leader "
                               "involvedObject{kind=Lease,apiVersion=coordination.k8s.io/v1}"});
  EXPECT_EQ(lock.Describe(), "kube-system/kcm");
}

}  // namespace
}  // namespace kcm::leaderelection
