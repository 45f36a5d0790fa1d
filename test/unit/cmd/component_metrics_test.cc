// kubernetes_build_info and kubernetes_feature_enabled as upstream v1.37.2 serves them.
#include "cmd/kube-controller-manager/app/component_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cmd/kube-controller-manager/app/upstream_feature_gates.h"
#include "pkg/metrics/metrics.h"

namespace kcm::app {
namespace {

std::vector<std::string> Lines(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

TEST(ComponentMetricsTest, BuildInfoHasUpstreamsLabelsAndHelp) {
  RegisterBuildInfo({"v1.37.2+cpp.0.1.0", "abc123", "1.37", "clang 19"});
  const std::string text = metrics::SerializeText();
  EXPECT_EQ(Lines(text, "kubernetes_build_info{"),
            std::vector<std::string>{
                "kubernetes_build_info{build_date=\"\",compiler=\"clang 19\",git_commit=\"abc123\","
                "git_tree_state=\"\",git_version=\"v1.37.2+cpp.0.1.0\",go_version=\"\",major=\"1\","
                "minor=\"37\",platform=\"linux/amd64\"} 1"});
  EXPECT_EQ(Lines(text, "# HELP kubernetes_build_info")
                .at(0)
                .rfind("# HELP kubernetes_build_info [BETA] A metric with a constant '1' value", 0),
            0u);
}

TEST(ComponentMetricsTest, OneSeriesPerUpstreamGateWithItsValue) {
  features::FeatureGate gates;
  ASSERT_TRUE(gates
                  .Set("StaleControllerConsistencyReplicaSet=false,ComponentFlagz=false,"
                       "APIServerWebhookAuthenticationToken=true")
                  .ok());
  RecordFeatureInfo(gates);
  const std::string text = metrics::SerializeText();
  const auto series = Lines(text, "kubernetes_feature_enabled{");
  EXPECT_EQ(series.size(), features::UpstreamGates().size());
  EXPECT_EQ(series.size(), 254u);  // upstream v1.37.2's count
  auto has = [&](const std::string& line) {
    return std::find(series.begin(), series.end(), line) != series.end();
  };
  // Set on the command line.
  EXPECT_TRUE(
      has("kubernetes_feature_enabled{name=\"StaleControllerConsistencyReplicaSet\",stage=\"BETA\"}"
          " 0"));
  EXPECT_TRUE(has("kubernetes_feature_enabled{name=\"ComponentFlagz\",stage=\"BETA\"} 0"));
  EXPECT_TRUE(
      has("kubernetes_feature_enabled{name=\"APIServerWebhookAuthenticationToken\",stage=\"ALPHA\"}"
          " 1"));
  // Defaults, a beta and a GA gate (stage "", as upstream prints it).
  EXPECT_TRUE(has("kubernetes_feature_enabled{name=\"ComponentStatusz\",stage=\"BETA\"} 1"));
  size_t ga = 0;
  for (const auto& gate : features::UpstreamGates()) ga += gate.stage.empty() ? 1 : 0;
  EXPECT_EQ(static_cast<size_t>(std::count_if(series.begin(), series.end(),
                                              [](const std::string& line) {
                                                return line.find("stage=\"\"") != std::string::npos;
                                              })),
            ga);
  EXPECT_GT(ga, 0u);
  EXPECT_NE(text.find("# HELP kubernetes_feature_enabled [BETA] This metric records the data "
                      "about the stage and enablement of a k8s feature."),
            std::string::npos);
}

}  // namespace
}  // namespace kcm::app
