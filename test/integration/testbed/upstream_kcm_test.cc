// With the upstream kube-controller-manager standing in for ours, a Deployment applied with
// kubectl becomes Available with every pod Running on a KWOK node: the control plane is real end
// to end. Our daemon's e2e tests make the same check against our controllers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "test/integration/framework/testenv.h"

namespace kcm::testenv {
namespace {

auto* const kEnv = RegisterTestbed({.nodes = 3, .upstream_kcm = true});

TEST(TestbedUpstreamKcm, DeploymentBecomesAvailableOnKwokNodes) {
  KCM_REQUIRE_TESTBED();
  ASSERT_TRUE(kEnv->info().upstream_kcm);
  const std::string ns = "testbed-deploy-" + std::to_string(::getpid());
  auto r = kEnv->Kubectl({"create", "namespace", ns});
  ASSERT_TRUE(r.ok()) << r.Describe();
  const std::string deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 4
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.invalid/web:1
)";
  r = kEnv->Kubectl({"-n", ns, "apply", "-f", "-"}, std::chrono::seconds(60), deployment);
  ASSERT_TRUE(r.ok()) << r.Describe();
  r = kEnv->Kubectl({"-n", ns, "rollout", "status", "deployment/web", "--timeout=120s"},
                    std::chrono::seconds(150));
  ASSERT_TRUE(r.ok()) << "rollout did not finish: " << r.Describe();

  r = kEnv->Kubectl({"-n", ns, "get", "deployment", "web", "-o",
                     "jsonpath={.status.availableReplicas} "
                     "{.status.conditions[?(@.type==\"Available\")].status}"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  EXPECT_EQ(r.out, "4 True");

  r = kEnv->Kubectl({"-n", ns, "get", "pods", "-l", "app=web", "-o",
                     "go-template={{range .items}}{{.spec.nodeName}} {{.status.phase}}"
                     "{{\"\\n\"}}{{end}}"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  std::istringstream in(r.out);
  int pods = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++pods;
    EXPECT_EQ(line.rfind("kwok-node-", 0), 0u) << line;
    EXPECT_NE(line.find(" Running"), std::string::npos) << line;
  }
  EXPECT_EQ(pods, 4) << r.out;

  // Scaling down goes through the ReplicaSet controller and KWOK's deletion.
  r = kEnv->Kubectl({"-n", ns, "scale", "deployment/web", "--replicas=1"});
  ASSERT_TRUE(r.ok()) << r.Describe();
  r = kEnv->Kubectl({"-n", ns, "rollout", "status", "deployment/web", "--timeout=120s"},
                    std::chrono::seconds(150));
  EXPECT_TRUE(r.ok()) << r.Describe();
}

}  // namespace
}  // namespace kcm::testenv
