// Shows the testbed is a real control plane: KWOK nodes are Ready, the scheduler binds pods to
// them and KWOK runs and deletes them, the controller-manager user is limited by RBAC, and
// etcdctl reaches the testbed's etcd.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "test/integration/framework/testenv.h"

namespace kcm::testenv {
namespace {

const auto kNodes = 3;
auto* const kEnv = RegisterTestbed({.nodes = kNodes, .upstream_kcm = false});

// A namespace of this test's own, so tests can share one API server.
std::string CreateNamespace(const std::string& prefix) {
  std::string ns = prefix + "-" + std::to_string(::getpid());
  auto r = kEnv->Kubectl({"create", "namespace", ns});
  EXPECT_TRUE(r.ok()) << r.Describe();
  return ns;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

TEST(Testbed, ExposesFacts) {
  KCM_REQUIRE_TESTBED();
  const auto& info = kEnv->info();
  EXPECT_EQ(info.server.rfind("https://127.0.0.1:", 0), 0u) << info.server;
  EXPECT_EQ(info.etcd_endpoint.rfind("http://127.0.0.1:", 0), 0u) << info.etcd_endpoint;
  for (const auto& f :
       {info.ca_file, info.admin_kubeconfig, info.kcm_kubeconfig, info.kubectl, info.etcdctl}) {
    EXPECT_TRUE(std::filesystem::exists(f)) << f;
  }
  EXPECT_FALSE(info.admin_token.empty());
  EXPECT_FALSE(info.kcm_token.empty());
  EXPECT_NE(info.admin_token, info.kcm_token);
  EXPECT_EQ(info.kcm_user, "system:kcm-test");
}

TEST(Testbed, KwokNodesAreReady) {
  KCM_REQUIRE_TESTBED();
  auto r =
      kEnv->Kubectl({"get", "nodes", "-l", "type=kwok", "-o",
                     "go-template={{range .items}}{{.metadata.name}} {{range .status.conditions}}"
                     "{{if eq .type \"Ready\"}}{{.status}}{{end}}{{end}}{{\"\\n\"}}{{end}}"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), static_cast<size_t>(kNodes)) << r.out;
  for (const auto& line : lines) {
    EXPECT_NE(line.find("kwok-node-"), std::string::npos) << line;
    EXPECT_NE(line.find(" True"), std::string::npos) << "node not Ready: " << line;
  }
}

TEST(Testbed, PodIsScheduledRunOnKwokAndDeleted) {
  KCM_REQUIRE_TESTBED();
  const auto ns = CreateNamespace("testbed-pod");
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
  - name: c
    image: registry.invalid/never-pulled:1
)";
  auto r = kEnv->Kubectl({"-n", ns, "apply", "-f", "-"}, std::chrono::seconds(60), pod);
  ASSERT_TRUE(r.ok()) << r.Describe();
  r = kEnv->Kubectl({"-n", ns, "wait", "--for=condition=Ready", "pod/probe", "--timeout=90s"},
                    std::chrono::seconds(120));
  ASSERT_TRUE(r.ok()) << "pod never became Ready: " << r.Describe();
  r = kEnv->Kubectl(
      {"-n", ns, "get", "pod", "probe", "-o", "jsonpath={.spec.nodeName} {.status.phase}"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(r.out.rfind("kwok-node-", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("Running"), std::string::npos) << r.out;
  // Graceful deletion completes only because KWOK finishes terminating pods.
  r = kEnv->Kubectl({"-n", ns, "delete", "pod", "probe", "--wait=true", "--timeout=90s"},
                    std::chrono::seconds(120));
  EXPECT_TRUE(r.ok()) << r.Describe();
  // The namespace stays: without the namespace controller its deletion would never finish.
}

TEST(Testbed, ControllerManagerUserIsLimitedByRbac) {
  KCM_REQUIRE_TESTBED();
  const auto& info = kEnv->info();
  // can(verb, resource, extra kubectl args): `kubectl auth can-i` as the controller-manager user.
  auto can = [&](const std::string& verb, const std::string& resource,
                 std::vector<std::string> extra = {"--all-namespaces"}) {
    std::vector<std::string> argv = {
        info.kubectl, "--kubeconfig=" + info.kcm_kubeconfig, "auth", "can-i", verb, resource};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv);
    return r.out.rfind("yes", 0) == 0;
  };
  EXPECT_TRUE(can("list", "pods"));
  EXPECT_TRUE(can("create", "pods"));
  EXPECT_TRUE(can("update", "replicasets.apps"));
  EXPECT_TRUE(can("patch", "deployments.apps", {"--all-namespaces", "--subresource=status"}));
  EXPECT_TRUE(can("create", "events"));
  EXPECT_TRUE(can("create", "leases.coordination.k8s.io", {"-n", "kube-system"}));
  EXPECT_FALSE(can("list", "secrets"));
  EXPECT_FALSE(can("delete", "nodes"));
  EXPECT_FALSE(can("create", "clusterrolebindings.rbac.authorization.k8s.io"));
}

TEST(Testbed, EtcdctlReachesEtcdAndCompacts) {
  KCM_REQUIRE_TESTBED();
  // Other tests share this etcd and compact it too (the informers' 410 test, the client's
  // expired-list test), each at a revision it read: a compaction at a revision another one has
  // already reached fails with "required revision has been compacted", and so would every retry
  // at the current revision while nothing writes. Each attempt therefore writes a key of its own
  // and compacts at the revision that write made, which no compaction can have reached before;
  // only the two compactions above can reach it after, so five attempts always suffice.
  bool compacted = false;
  std::string failure;
  for (int attempt = 0; attempt < 5 && !compacted; ++attempt) {
    auto r = kEnv->Etcdctl(
        {"put", "/kcm-testbed-test/compaction", std::to_string(attempt), "--write-out=fields"});
    ASSERT_TRUE(r.ok()) << r.Describe();
    std::string revision;
    for (const auto& line : Lines(r.out)) {
      if (line.rfind("\"Revision\"", 0) == 0) revision = line.substr(line.find(':') + 1);
    }
    revision.erase(0, revision.find_first_not_of(' '));
    ASSERT_FALSE(revision.empty()) << r.out;
    r = kEnv->Etcdctl({"compact", revision});
    compacted = r.ok();
    failure = r.Describe();
    if (!compacted && failure.find("required revision has been compacted") == std::string::npos) {
      break;
    }
  }
  EXPECT_TRUE(compacted) << failure;
  // The API server keeps serving after a compaction.
  auto r = kEnv->Kubectl({"get", "--raw", "/readyz"});
  EXPECT_TRUE(r.ok()) << r.Describe();
}

}  // namespace
}  // namespace kcm::testenv
