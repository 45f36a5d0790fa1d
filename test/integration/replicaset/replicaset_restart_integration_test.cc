// No over-creation across a crash (spec R2, R7): the kube-controller-manager daemon (our binary,
// --controllers=replicaset) scales a ReplicaSet to 500, is killed with SIGKILL mid-scale-up and
// started again; exactly 500 pods are ever created (every pod UID the test's own watch saw).
// Runs a private testbed (5 KWOK nodes): the daemon watches every namespace, so it must not
// share an API server with tests that run their own in-process controllers.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
#include "test/integration/framework/testenv.h"

extern char** environ;

namespace kcm::replicaset {
namespace {

using namespace std::chrono_literals;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 5});

bool Eventually(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return done();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Starts the daemon with its output appended to `log`; returns its pid (-1 on failure).
pid_t StartDaemon(const std::string& log) {
  std::vector<std::string> args = {
      KCM_DAEMON_PATH,
      "--kubeconfig=" + kEnv->info().kcm_kubeconfig,
      "--controllers=replicaset",
      "--leader-elect-resource-name=kube-controller-manager-cpp",
      "--bind-address=127.0.0.1",
      "--secure-port=" + std::to_string(FreePort()),
      "--kube-api-qps=50",
      "--kube-api-burst=50",
  };
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

void StopDaemon(pid_t pid, int sig) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
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
  pid_t daemon = StartDaemon(log);
  ASSERT_GT(daemon, 0);
  client::ResourceClient rss(*admin, {"apps", "v1", "replicasets"}, true);
  ASSERT_TRUE(rss.Create(ns,
                         R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"big"},)"
                         R"("spec":{"replicas":500,"selector":{"matchLabels":{"app":"big"}},)"
                         R"("template":{"metadata":{"labels":{"app":"big"}},)"
                         R"("spec":{"containers":[{"name":"c","image":"fake"}]}}}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return seen() >= 100; }, 180s)) << "log: " << log;
  StopDaemon(daemon, SIGKILL);
  const int at_kill = seen();
  ::testing::Test::RecordProperty("pods_at_kill", at_kill);
  ASSERT_LT(at_kill, kReplicas) << "the scale-up finished before the kill; nothing was tested";

  daemon = StartDaemon(log);  // waits for the dead leader's lease to expire, then syncs
  ASSERT_GT(daemon, 0);
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
  StopDaemon(daemon, SIGTERM);
  ASSERT_TRUE(done) << "log: " << log;
  EXPECT_EQ(seen(), kReplicas) << "pods seen at the kill: " << at_kill;
  stop.request_stop();
  factory.Shutdown();
}

}  // namespace
}  // namespace kcm::replicaset
