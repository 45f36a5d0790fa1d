// No over-creation across a crash (R2, R7): the kube-controller-manager daemon (our binary,
// --controllers=replicaset) scales a ReplicaSet to 500, is killed with SIGKILL mid-scale-up and
// started again; exactly 500 pods are ever created (every pod UID the test's own watch saw).
// Runs a private testbed (5 KWOK nodes): the daemon watches every namespace, so it must not
// share an API server with tests that run their own in-process controllers.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/replicaset.h"
#include "pkg/cache/resource_event_handler.h"
#include "pkg/client/resource_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::replicaset {
namespace {

using namespace std::chrono_literals;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 5});

using testenv::Eventually;

// Starts the daemon with its output appended to `log`.
std::unique_ptr<testenv::DaemonProcess> StartDaemon(const std::string& log) {
  return std::make_unique<testenv::DaemonProcess>(
      std::vector<std::string>{
          KCM_DAEMON_PATH,
          "--kubeconfig=" + kEnv->info().kcm_kubeconfig,
          "--controllers=replicaset",
          "--leader-elect-resource-name=kube-controller-manager-cpp",
          "--bind-address=127.0.0.1",
          "--secure-port=" + std::to_string(testenv::FreeLoopbackPort()),
          "--kube-api-qps=50",
          "--kube-api-burst=50",
      },
      log);
}

TEST(ReplicaSetRestart, KilledMidScaleUpCreatesExactly500) {
  KCM_REQUIRE_TESTBED();
  constexpr int kReplicas = 500;
  client::RestConfig config{.host = kEnv->info().server,
                            .ca_file = kEnv->info().ca_file,
                            .bearer_token = kEnv->info().admin_token,
                            .qps = -1};
  auto admin = client::RestClient::Create(config);
  ASSERT_TRUE(admin.ok());
  const std::string ns = "restart";
  client::ResourceClient namespaces(*admin, {"", "v1", "namespaces"}, false);
  ASSERT_TRUE(
      namespaces
          .Create("", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"restart"}})")
          .ok());

  // Every pod UID ever seen in the namespace, from our own watch.
  std::mutex mu;
  std::set<std::string> uids;
  informers::SharedInformerFactoryOptions fo;
  fo.namespace_ = ns;
  informers::SharedInformerFactory factory(*admin, 0s, fo);
  auto pods = factory.Pods();
  auto record = [&](const api::ObjectPtr& obj) {
    std::lock_guard lock(mu);
    uids.insert(obj->Meta().uid);
  };
  ASSERT_TRUE(
      pods.informer
          ->AddEventHandler(cache::MakeResourceEventHandler(
              {.add_func = [&](const api::ObjectPtr& o, bool) { record(o); },
               .update_func = [&](const api::ObjectPtr&, const api::ObjectPtr& o) { record(o); }}))
          .ok());
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(factory.WaitForCacheSync(stop.get_token())["pods"]);
  auto seen = [&] {
    std::lock_guard lock(mu);
    return static_cast<int>(uids.size());
  };

  const std::string log = kEnv->info().dir + "/logs/kcm-restart-test.log";
  auto daemon = StartDaemon(log);
  ASSERT_TRUE(daemon->started());
  client::ResourceClient rss(*admin, {"apps", "v1", "replicasets"}, true);
  ASSERT_TRUE(rss.Create(ns,
                         R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"big"},)"
                         R"("spec":{"replicas":500,"selector":{"matchLabels":{"app":"big"}},)"
                         R"("template":{"metadata":{"labels":{"app":"big"}},)"
                         R"("spec":{"containers":[{"name":"c","image":"fake"}]}}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return seen() >= 100; }, 180s)) << "log: " << log;
  daemon->StopWith(SIGKILL);
  const int at_kill = seen();
  ::testing::Test::RecordProperty("pods_at_kill", at_kill);
  ASSERT_LT(at_kill, kReplicas) << "the scale-up finished before the kill; nothing was tested";

  daemon = StartDaemon(log);  // waits for the dead leader's lease to expire, then syncs
  ASSERT_TRUE(daemon->started());
  const bool done = Eventually(
      [&] {
        auto body = rss.Get(ns, "big");
        if (!body.ok()) return false;
        api::Decoder decoder;
        auto rs = api::DecodeReplicaSet(decoder, api::JsonInput(*body));
        return rs.ok() && (*rs)->status.replicas == kReplicas &&
               (*rs)->status.observed_generation == (*rs)->metadata.generation &&
               static_cast<int>(pods.lister.ByNamespace(ns).List().size()) == kReplicas;
      },
      300s);
  daemon->StopWith(SIGTERM);
  ASSERT_TRUE(done) << "log: " << log;
  EXPECT_EQ(seen(), kReplicas) << "pods seen at the kill: " << at_kill;
  stop.request_stop();
  factory.Shutdown();
}

}  // namespace
}  // namespace kcm::replicaset
