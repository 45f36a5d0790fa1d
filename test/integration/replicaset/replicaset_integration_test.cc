// The ReplicaSet controller (in-process, as the controller-manager user with the RBAC rights of
// deploy/rbac.yaml) against a real kube-apiserver + kube-scheduler + KWOK nodes: scaling, pod
// replacement, adoption/release, deletion order, minReadySeconds, quota failures and a
// ReplicaSet deleted mid-scale-up (R3–R15). Waits poll the API server with a generous
// deadline; no assertion depends on timing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controllers/replicaset/replica_set.h"
#include "pkg/api/json.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/controller/pod_control.h"
#include "pkg/controller/typed_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/record/client_event_sink.h"
#include "pkg/record/event_broadcaster.h"
#include "test/integration/framework/testenv.h"

namespace kcm::replicaset {
namespace {

using namespace std::chrono_literals;
namespace json = api::json;

auto* const kEnv = testenv::RegisterTestbed({});

const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kReplicaSets{"apps", "v1", "replicasets"};
const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const client::GroupVersionResource kEvents{"", "v1", "events"};
const client::GroupVersionResource kQuotas{"", "v1", "resourcequotas"};

std::shared_ptr<client::RestClient> MakeClient(const std::string& token, float qps = -1,
                                               int burst = 0) {
  client::RestConfig config{.host = kEnv->info().server,
                            .ca_file = kEnv->info().ca_file,
                            .bearer_token = token,
                            .qps = qps,
                            .burst = burst};
  auto c = client::RestClient::Create(config);
  return c.ok() ? *c : nullptr;
}

// Polls `done` every 100 ms until it holds or `limit` passes (a deadline for a hung test, not a
// performance assertion).
bool Eventually(const std::function<bool()>& done, std::chrono::seconds limit = 120s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

std::string RsManifest(const std::string& name, int replicas, int min_ready_seconds = 0) {
  return R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" + name +
         R"("},"spec":{"replicas":)" + std::to_string(replicas) + R"(,"minReadySeconds":)" +
         std::to_string(min_ready_seconds) + R"(,"selector":{"matchLabels":{"app":")" + name +
         R"("}},"template":{"metadata":{"labels":{"app":")" + name +
         R"("},"annotations":{"keep":"me"}},"spec":{"containers":[{"name":"c","image":"fake"}]}}}})";
}

// A pod labelled app=<app>; `extra_meta` and `extra_spec` are spliced into metadata / spec.
std::string PodManifest(const std::string& name, const std::string& app,
                        const std::string& extra_meta = "", const std::string& extra_spec = "") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":")" + app + R"("})" + extra_meta +
         R"(},"spec":{"containers":[{"name":"c","image":"fake"}])" + extra_spec + "}}";
}

struct PodInfo {
  std::string name;
  std::string uid;
  std::string owner_uid;  // controller ownerReference uid, "" for none
  std::string node;
  bool deleting = false;
  bool ready = false;
  int owner_refs = 0;
};

// A pod control that can hold creates at a gate (to delete the ReplicaSet mid-scale-up) and
// counts them.
class GatedPodControl final : public controller::PodControlInterface {
 public:
  explicit GatedPodControl(std::shared_ptr<controller::PodControlInterface> real)
      : real_(std::move(real)) {}
  Status CreatePods(std::string_view ns, const api::PodTemplate& t, const api::Object& obj,
                    const api::OwnerReference& ref) override {
    {
      std::unique_lock lock(mu_);
      ++calls_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return calls_ <= gate_; });
    }
    return real_->CreatePods(ns, t, obj, ref);
  }
  Status DeletePod(std::string_view ns, std::string_view name, const api::Object& obj) override {
    return real_->DeletePod(ns, name, obj);
  }
  Status PatchPod(std::string_view ns, std::string_view name, const std::string& p) override {
    return real_->PatchPod(ns, name, p);
  }
  // A slow-start batch arrives as one call: its creates are counted at once and the batch waits
  // at the gate when it reaches past it, then goes to the real batch (requests in flight).
  std::vector<controller::WriteOutcome> CreatePodsBatch(std::string_view ns,
                                                        const api::PodTemplate& t,
                                                        const api::Object& obj,
                                                        const api::OwnerReference& ref, int count,
                                                        std::stop_token stop) override {
    {
      std::unique_lock lock(mu_);
      calls_ += count;
      cv_.notify_all();
      cv_.wait(lock, [&] { return calls_ <= gate_; });
    }
    return real_->CreatePodsBatch(ns, t, obj, ref, count, std::move(stop));
  }
  std::vector<controller::WriteOutcome> DeletePodsBatch(std::string_view ns,
                                                        std::span<const std::string> names,
                                                        const api::Object& obj,
                                                        std::stop_token stop) override {
    return real_->DeletePodsBatch(ns, names, obj, std::move(stop));
  }
  // Creates beyond `n` wait until Open.
  void CloseAfter(int n) {
    std::lock_guard lock(mu_);
    gate_ = n;
  }
  void Open() {
    std::lock_guard lock(mu_);
    gate_ = 1 << 30;
    cv_.notify_all();
  }
  bool WaitForCalls(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 120s, [&] { return calls_ >= n; });
  }
  int calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::shared_ptr<controller::PodControlInterface> real_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int calls_ = 0;
  int gate_ = 1 << 30;
};

// Counts status writes (the last step of a sync); the rest goes straight through.
class CountingReplicaSetClient final : public ReplicaSetClient {
 public:
  explicit CountingReplicaSetClient(std::shared_ptr<ReplicaSetClient> real)
      : real_(std::move(real)) {}
  Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) override {
    return real_->Get(ns, name);
  }
  Result<ReplicaSetPtr> Create(std::string_view ns, std::string body) override {
    return real_->Create(ns, std::move(body));
  }
  Result<ReplicaSetPtr> Update(std::string_view ns, std::string_view name,
                               std::string body) override {
    return real_->Update(ns, name, std::move(body));
  }
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override {
    return real_->Patch(ns, name, patch);
  }
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override {
    return real_->Delete(ns, name, uid);
  }
  Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                     const api::ReplicaSetStatus& s) override {
    ++updates_;
    return real_->UpdateStatus(rs, s);
  }
  int updates() const { return updates_; }

 private:
  std::shared_ptr<ReplicaSetClient> real_;
  std::atomic<int> updates_{0};
};

class ReplicaSetIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    KCM_REQUIRE_TESTBED();
    admin_ = MakeClient(kEnv->info().admin_token);
    ASSERT_NE(admin_, nullptr);
    ns_ = "rs-" + std::to_string(::getpid()) + "-" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000);
    client::ResourceClient namespaces(admin_, kNamespaces, false);
    ASSERT_TRUE(namespaces
                    .Create("", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" +
                                    ns_ + R"("}})")
                    .ok());
    pods_ = std::make_unique<client::ResourceClient>(admin_, kPods, true);
    rss_ = std::make_unique<client::ResourceClient>(admin_, kReplicaSets, true);
    StartController();
  }

  void TearDown() override {
    StopController();
    if (!admin_) return;
    (void)rss_->DeleteCollection(ns_, {.grace_period_seconds = 0}, {});
    (void)pods_->DeleteCollection(ns_, {.grace_period_seconds = 0}, {});
    client::ResourceClient namespaces(admin_, kNamespaces, false);
    (void)namespaces.Delete("", ns_);
  }

  void StartController() {
    // The controller-manager user: only the rights deploy/rbac.yaml grants.
    auto rest = MakeClient(kEnv->info().kcm_token, 100, 200);
    ASSERT_NE(rest, nullptr);
    informers::SharedInformerFactoryOptions fo;
    fo.namespace_ = ns_;
    factory_ = std::make_unique<informers::SharedInformerFactory>(rest, 0s, fo);
    broadcaster_ = std::make_unique<record::EventBroadcaster>();
    broadcaster_->StartRecordingToSink(std::make_shared<record::ClientEventSink>(rest));
    recorder_ = broadcaster_->NewRecorder({"replicaset-controller", ""});
    auto real_control = std::make_shared<controller::RealPodControl>(
        std::make_shared<client::ResourceClient>(rest, kPods, true), *recorder_, "apps/v1");
    pod_control_ = std::make_shared<GatedPodControl>(real_control);
    rs_client_ = std::make_shared<CountingReplicaSetClient>(
        std::make_shared<controller::RestTypedClient<api::ReplicaSet>>(rest));
    rs_informer_ = factory_->ReplicaSets();
    controller_ = std::make_unique<ReplicaSetController>(
        *rs_informer_, factory_->Pods(), rs_client_, pod_control_,
        ReplicaSetControllerOptions{.concurrent_replicaset_syncs = 5});
    stop_ = std::stop_source();
    run_ = std::jthread([this, stop = stop_.get_token()] {
      Status s = controller_->Run(stop);
      EXPECT_TRUE(s.ok()) << s.error().ToString();
    });
    factory_->Start(stop_.get_token());
    for (const auto& [name, synced] : factory_->WaitForCacheSync(stop_.get_token())) {
      ASSERT_TRUE(synced) << name;
    }
  }

  void StopController() {
    stop_.request_stop();
    if (run_.joinable()) run_.join();
    if (factory_) factory_->Shutdown();
    if (broadcaster_) broadcaster_->Shutdown();
  }

  std::string CreateRS(const std::string& manifest) {
    auto r = rss_->Create(ns_, manifest);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    if (!r.ok()) return "";
    auto v = json::Parse(*r);
    return json::GetPath(*v, {"metadata", "uid"})->as_string();
  }
  void Scale(const std::string& name, int replicas) {
    auto r = rss_->Patch(ns_, name, client::PatchType::kMergePatch,
                         R"({"spec":{"replicas":)" + std::to_string(replicas) + "}}");
    ASSERT_TRUE(r.ok()) << r.error().ToString();
  }
  std::shared_ptr<const api::ReplicaSet> GetRS(const std::string& name) {
    auto body = rss_->Get(ns_, name);
    if (!body.ok()) return nullptr;
    api::Decoder decoder;
    auto rs = api::DecodeReplicaSet(decoder, api::JsonInput(*body));
    return rs.ok() ? *rs : nullptr;
  }
  std::vector<PodInfo> ListPods() {
    std::vector<PodInfo> out;
    auto body = pods_->List(ns_, {});
    if (!body.ok()) return out;
    auto v = json::Parse(*body);
    if (!v.ok()) return out;
    const json::Value* items = v->Find("items");
    if (items == nullptr || !items->is_array()) return out;
    for (const auto& item : items->as_array()) {
      PodInfo p;
      p.name = json::GetPath(item, {"metadata", "name"})->as_string();
      p.uid = json::GetPath(item, {"metadata", "uid"})->as_string();
      p.deleting = json::GetPath(item, {"metadata", "deletionTimestamp"}) != nullptr;
      if (const json::Value* n = json::GetPath(item, {"spec", "nodeName"}); n && n->is_string()) {
        p.node = n->as_string();
      }
      if (const json::Value* refs = json::GetPath(item, {"metadata", "ownerReferences"});
          refs && refs->is_array()) {
        p.owner_refs = static_cast<int>(refs->as_array().size());
        for (const auto& ref : refs->as_array()) {
          const json::Value* c = ref.Find("controller");
          if (c && c->is_bool() && c->as_bool()) p.owner_uid = ref.Find("uid")->as_string();
        }
      }
      if (const json::Value* conds = json::GetPath(item, {"status", "conditions"});
          conds && conds->is_array()) {
        for (const auto& c : conds->as_array()) {
          if (c.Find("type")->as_string() == "Ready" && c.Find("status")->as_string() == "True") {
            p.ready = true;
          }
        }
      }
      out.push_back(std::move(p));
    }
    return out;
  }
  // Live (not deleting) pods controlled by the ReplicaSet with `uid`.
  std::vector<PodInfo> OwnedPods(const std::string& uid) {
    std::vector<PodInfo> out;
    for (auto& p : ListPods()) {
      if (p.owner_uid == uid && !p.deleting) out.push_back(std::move(p));
    }
    return out;
  }
  // Waits until `name` has `n` live owned pods and a status saying so for the current generation.
  bool WaitForReplicas(const std::string& name, const std::string& uid, int n, bool ready = false) {
    return Eventually([&] {
      auto rs = GetRS(name);
      if (!rs || rs->status.observed_generation != rs->metadata.generation) return false;
      if (rs->status.replicas != n) return false;
      if (ready && rs->status.ready_replicas != n) return false;
      return static_cast<int>(OwnedPods(uid).size()) == n;
    });
  }
  std::vector<std::string> EventsFor(const std::string& name) {
    std::vector<std::string> out;
    client::ResourceClient events(admin_, kEvents, true);
    auto body = events.List(ns_, {});
    if (!body.ok()) return out;
    auto v = json::Parse(*body);
    for (const auto& e : v->Find("items")->as_array()) {
      if (json::GetPath(e, {"involvedObject", "name"})->as_string() != name) continue;
      const json::Value* src = json::GetPath(e, {"source", "component"});
      out.push_back((src ? src->as_string() : "") + " " + e.Find("type")->as_string() + " " +
                    e.Find("reason")->as_string() + " " + e.Find("message")->as_string());
    }
    return out;
  }

  std::shared_ptr<client::RestClient> admin_;
  std::string ns_;
  std::unique_ptr<client::ResourceClient> pods_, rss_;
  std::unique_ptr<informers::SharedInformerFactory> factory_;
  std::unique_ptr<record::EventBroadcaster> broadcaster_;
  std::shared_ptr<record::EventRecorder> recorder_;
  std::shared_ptr<GatedPodControl> pod_control_;
  std::shared_ptr<CountingReplicaSetClient> rs_client_;
  std::optional<informers::TypedInformer<api::ReplicaSet>> rs_informer_;
  std::unique_ptr<ReplicaSetController> controller_;
  std::stop_source stop_;
  std::jthread run_;
};

// R6, R7, R8, R11, R12, R14: 0 → 50 → 3 → 0, pods Running/Ready on KWOK nodes, template copied.
TEST_F(ReplicaSetIntegration, ScaleZeroFiftyThreeZero) {
  const std::string uid = CreateRS(RsManifest("web", 0));
  ASSERT_TRUE(WaitForReplicas("web", uid, 0));
  Scale("web", 50);
  ASSERT_TRUE(WaitForReplicas("web", uid, 50)) << OwnedPods(uid).size();
  Scale("web", 3);
  ASSERT_TRUE(WaitForReplicas("web", uid, 3, /*ready=*/true));
  auto rs = GetRS("web");
  EXPECT_EQ(rs->status.fully_labeled_replicas, 3);
  EXPECT_EQ(rs->status.available_replicas, 3);
  // The status writes came from cached copies without managedFields
  // (api/internal/strip_managed_fields.h): the API server kept the other managers' entries.
  auto raw = rss_->Get(ns_, "web");
  ASSERT_TRUE(raw.ok());
  auto parsed = json::Parse(*raw);
  ASSERT_TRUE(parsed.ok());
  const json::Value* managed = json::GetPath(*parsed, {"metadata", "managedFields"});
  ASSERT_NE(managed, nullptr);
  bool spec_manager = false;
  bool status_manager = false;
  for (const auto& entry : managed->as_array()) {
    const json::Value* sub = entry.Find("subresource");
    (sub != nullptr && sub->as_string() == "status" ? status_manager : spec_manager) = true;
  }
  EXPECT_TRUE(spec_manager) << *raw;
  EXPECT_TRUE(status_manager) << *raw;
  for (const auto& p : OwnedPods(uid)) {
    EXPECT_FALSE(p.node.empty()) << p.name << " scheduled";
    EXPECT_EQ(p.name.rfind("web-", 0), 0u) << "generateName <rs>-";
    auto body = pods_->Get(ns_, p.name);
    ASSERT_TRUE(body.ok());
    auto v = json::Parse(*body);
    EXPECT_EQ(json::GetPath(*v, {"metadata", "annotations", "keep"})->as_string(), "me");
    EXPECT_EQ(json::GetPath(*v, {"spec", "containers"})->as_array().size(), 1u);
  }
  Scale("web", 0);
  ASSERT_TRUE(WaitForReplicas("web", uid, 0));
  // Events are written asynchronously, and 50 creates exceed the per-object spam-filter burst
  // (25) as upstream's recorder does, so only the first ones are checked here.
  EXPECT_TRUE(Eventually([&] {
    for (const auto& e : EventsFor("web")) {
      if (e.rfind("replicaset-controller Normal SuccessfulCreate Created pod: web-", 0) == 0) {
        return true;
      }
    }
    return false;
  })) << ::testing::PrintToString(EventsFor("web"));
}

// R3, R8: deleted pods are replaced.
TEST_F(ReplicaSetIntegration, DeletedPodsReplaced) {
  const std::string uid = CreateRS(RsManifest("rep", 3));
  ASSERT_TRUE(WaitForReplicas("rep", uid, 3));
  auto before = OwnedPods(uid);
  ASSERT_TRUE(pods_->Delete(ns_, before[0].name).ok());
  ASSERT_TRUE(pods_->Delete(ns_, before[1].name).ok());
  ASSERT_TRUE(Eventually([&] {
    auto now = OwnedPods(uid);
    if (now.size() != 3) return false;
    for (const auto& p : now) {
      if (p.name == before[0].name || p.name == before[1].name) return false;
    }
    return true;
  }));
}

// R13: matching orphans are adopted, a relabelled pod is released (and replaced), a pod owned by
// another controller is left alone.
TEST_F(ReplicaSetIntegration, AdoptReleaseAndLeaveForeignPods) {
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("orphan-1", "adopt")).ok());
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("orphan-2", "adopt")).ok());
  const std::string foreign_meta =
      R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"other","uid":"11111111-2222-3333-4444-555555555555","controller":true}])";
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("foreign", "adopt", foreign_meta)).ok());
  const std::string uid = CreateRS(RsManifest("adopt", 3));
  ASSERT_TRUE(WaitForReplicas("adopt", uid, 3));
  std::set<std::string> names;
  for (const auto& p : OwnedPods(uid)) names.insert(p.name);
  EXPECT_TRUE(names.contains("orphan-1") && names.contains("orphan-2"));
  EXPECT_FALSE(names.contains("foreign"));
  for (const auto& p : ListPods()) {
    if (p.name == "foreign") {
      EXPECT_EQ(p.owner_uid, "11111111-2222-3333-4444-555555555555");
      EXPECT_EQ(p.owner_refs, 1);
    }
  }
  // Relabel an owned pod: released (no ownerReference left), and a replacement is created.
  ASSERT_TRUE(pods_
                  ->Patch(ns_, "orphan-1", client::PatchType::kMergePatch,
                          R"({"metadata":{"labels":{"app":"gone"}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    for (const auto& p : ListPods()) {
      if (p.name == "orphan-1") return p.owner_refs == 0;
    }
    return false;
  }));
  ASSERT_TRUE(WaitForReplicas("adopt", uid, 3));
  for (const auto& p : OwnedPods(uid)) EXPECT_NE(p.name, "orphan-1");
}

// R9: scale-down deletes unscheduled (and unready) pods first, then the lowest deletion cost.
TEST_F(ReplicaSetIntegration, DeletionOrderUnscheduledThenCost) {
  // No node has this label: these stay Pending, unscheduled, not Ready.
  const std::string unschedulable = R"(,"nodeSelector":{"no-such":"node"})";
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("pending-1", "order", "", unschedulable)).ok());
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("pending-2", "order", "", unschedulable)).ok());
  auto cost = [](int c) {
    return R"(,"annotations":{"controller.kubernetes.io/pod-deletion-cost":")" + std::to_string(c) +
           R"("})";
  };
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("cheap", "order", cost(-100))).ok());
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("dear", "order", cost(100))).ok());
  ASSERT_TRUE(pods_->Create(ns_, PodManifest("middle", "order", cost(0))).ok());
  // Wait until the scheduled ones are Ready on KWOK nodes.
  ASSERT_TRUE(Eventually([&] {
    int ready = 0;
    for (const auto& p : ListPods()) ready += p.ready ? 1 : 0;
    return ready == 3;
  }));
  const std::string uid = CreateRS(RsManifest("order", 5));
  ASSERT_TRUE(WaitForReplicas("order", uid, 5));
  EXPECT_EQ(pod_control_->calls(), 0) << "all five adopted";
  Scale("order", 2);
  ASSERT_TRUE(WaitForReplicas("order", uid, 2));
  std::set<std::string> left;
  for (const auto& p : OwnedPods(uid)) left.insert(p.name);
  EXPECT_EQ(left, (std::set<std::string>{"dear", "middle"}));
  Scale("order", 1);
  ASSERT_TRUE(WaitForReplicas("order", uid, 1));
  EXPECT_EQ(OwnedPods(uid)[0].name, "dear");
  // R12: one SuccessfulDelete event per deleted pod, in the upstream wording.
  EXPECT_TRUE(Eventually([&] {
    std::set<std::string> deleted;
    for (const auto& e : EventsFor("order")) {
      const std::string prefix = "replicaset-controller Normal SuccessfulDelete Deleted pod: ";
      if (e.rfind(prefix, 0) == 0) deleted.insert(e.substr(prefix.size()));
    }
    return deleted == std::set<std::string>{"pending-1", "pending-2", "cheap", "middle"};
  })) << ::testing::PrintToString(EventsFor("order"));
}

// R14, R15: availableReplicas follows minReadySeconds.
TEST_F(ReplicaSetIntegration, MinReadySecondsGatesAvailableReplicas) {
  const std::string uid = CreateRS(RsManifest("slow", 2, /*min_ready_seconds=*/3600));
  ASSERT_TRUE(WaitForReplicas("slow", uid, 2, /*ready=*/true));
  EXPECT_EQ(GetRS("slow")->status.available_replicas, 0) << "Ready for less than an hour";
  auto r =
      rss_->Patch(ns_, "slow", client::PatchType::kMergePatch, R"({"spec":{"minReadySeconds":1}})");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(Eventually([&] { return GetRS("slow")->status.available_replicas == 2; }));
}

// R7, R12, R14: an exhausted ResourceQuota makes creates fail → ReplicaFailure FailedCreate and
// Warning FailedCreate events; raising the quota clears the condition.
TEST_F(ReplicaSetIntegration, QuotaFailureSetsAndClearsReplicaFailure) {
  client::ResourceClient quotas(admin_, kQuotas, true);
  ASSERT_TRUE(
      quotas
          .Create(
              ns_,
              R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"2"}}})")
          .ok());
  // No quota controller runs in the testbed: publish the status it would compute, which the
  // quota admission plugin then keeps up to date as pods are created.
  ASSERT_TRUE(quotas
                  .Patch(ns_, "q", client::PatchType::kMergePatch,
                         R"({"status":{"hard":{"pods":"2"},"used":{"pods":"0"}}})", {}, "status")
                  .ok());
  const std::string uid = CreateRS(RsManifest("quota", 4));
  ASSERT_TRUE(Eventually([&] {
    auto rs = GetRS("quota");
    for (const auto& c : rs->status.conditions) {
      if (c.type == "ReplicaFailure" && c.status == "True" && c.reason == "FailedCreate") {
        return rs->status.replicas == 2;
      }
    }
    return false;
  }));
  auto rs = GetRS("quota");
  EXPECT_NE(rs->status.conditions[0].message.find("exceeded quota"), std::string::npos)
      << rs->status.conditions[0].message;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& e : EventsFor("quota")) {
      if (e.rfind("replicaset-controller Warning FailedCreate Error creating: ", 0) == 0 &&
          e.find("exceeded quota") != std::string::npos) {
        return true;
      }
    }
    return false;
  }));
  ASSERT_TRUE(
      quotas.Patch(ns_, "q", client::PatchType::kMergePatch, R"({"spec":{"hard":{"pods":"10"}}})")
          .ok());
  ASSERT_TRUE(quotas
                  .Patch(ns_, "q", client::PatchType::kMergePatch,
                         R"({"status":{"hard":{"pods":"10"}}})", {}, "status")
                  .ok());
  ASSERT_TRUE(WaitForReplicas("quota", uid, 4));
  ASSERT_TRUE(Eventually([&] { return GetRS("quota")->status.conditions.empty(); }));
}

// R4, R7: a ReplicaSet deleted while its slow start is in flight gets no further creates: the
// batch already sent completes, the next batches are not started.
TEST_F(ReplicaSetIntegration, DeletedMidScaleUpCreatesNoMore) {
  pod_control_->CloseAfter(3);  // batches 1 (1 pod) and 2 (2 pods) pass; batch 3 (4 pods) waits
  const std::string uid = CreateRS(RsManifest("mid", 40));
  ASSERT_TRUE(pod_control_->WaitForCalls(7));
  // Background propagation (the default): the object goes at once (no GC runs in the testbed,
  // so its pods stay and can be counted).
  ASSERT_TRUE(rss_->Delete(ns_, "mid").ok());
  ASSERT_TRUE(Eventually([&] { return !rs_informer_->lister.ByNamespace(ns_).Get("mid").ok(); }));
  const int status_writes = rs_client_->updates();
  pod_control_->Open();
  // The status write ends the sync that was scaling up.
  ASSERT_TRUE(Eventually([&] { return rs_client_->updates() > status_writes; }));
  EXPECT_EQ(pod_control_->calls(), 7);
  int owned = 0;
  for (const auto& p : ListPods()) owned += p.owner_uid == uid ? 1 : 0;
  EXPECT_EQ(owned, 7);
}

}  // namespace
}  // namespace kcm::replicaset
