#include "cmd/kube-controller-manager/app/configz.h"

#include <array>
#include <charconv>

#include "pkg/util/duration.h"

namespace kcm::app {
namespace {

namespace json = api::json;

json::Value Str(const std::string& s) {
  return json::Value::String(s);
}

// metav1.Duration's JSON: Go's time.Duration.String().
json::Value Dur(std::chrono::nanoseconds d) {
  return json::Value::String(FormatDuration(d));
}

// A float32 as Go's encoding/json writes it: the shortest text that reads back as the float32.
json::Value Float32(double v) {
  std::array<char, 48> buf;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), static_cast<float>(v));
  return json::Value::NumberText(ec == std::errc() ? std::string(buf.data(), end) : "0");
}

// --controllers as upstream's GenericControllerManagerConfigurationOptions.ApplyTo stores it: our
// two controllers under their canonical names ("deployment-controller"), "-" kept, "*" and
// other names as given.
json::Value Controllers(const std::vector<std::string>& items) {
  json::Value::Array out;
  for (const auto& item : items) {
    const bool off = item.starts_with("-");
    const std::string name = off ? item.substr(1) : item;
    const bool ours = name == "deployment" || name == "replicaset";
    out.push_back(Str((off ? "-" : "") + name + (ours ? "-controller" : "")));
  }
  return json::Value::MakeArray(std::move(out));
}

}  // namespace

json::Value KubeControllerManagerConfiguration(const Options& o) {
  const auto& le = o.leader_election;
  json::Value client_connection = json::Value::MakeObject({
      {"kubeconfig", Str(o.kubeconfig)},
      {"acceptContentTypes", Str("")},
      {"contentType", Str(o.kube_api_content_type)},
      {"qps", Float32(o.kube_api_qps)},
      {"burst", json::Value::Int(o.kube_api_burst)},
  });
  json::Value leader_election = json::Value::MakeObject({
      {"leaderElect", json::Value::Bool(le.leader_elect)},
      {"leaseDuration", Dur(le.lease_duration)},
      {"renewDeadline", Dur(le.renew_deadline)},
      {"retryPeriod", Dur(le.retry_period)},
      {"resourceLock", Str(le.resource_lock)},
      {"resourceName", Str(le.resource_name)},
      {"resourceNamespace", Str(le.resource_namespace)},
  });
  json::Value generic = json::Value::MakeObject({
      // The insecure port upstream no longer serves: always 0 and 0.0.0.0 there too (the secure
      // port is not part of this configuration).
      {"Port", json::Value::Int(0)},
      {"Address", Str("0.0.0.0")},
      {"MinResyncPeriod", Dur(o.min_resync_period)},
      {"ClientConnection", std::move(client_connection)},
      {"ControllerStartInterval", Dur(std::chrono::nanoseconds(0))},
      {"LeaderElection", std::move(leader_election)},
      {"Controllers", Controllers(o.controllers)},
      {"Debugging", json::Value::MakeObject({
                        {"enableProfiling", json::Value::Bool(o.enable_profiling)},
                        {"enableContentionProfiling", json::Value::Bool(false)},
                    })},
      {"LeaderMigrationEnabled", json::Value::Bool(false)},
      {"LeaderMigration", json::Value::MakeObject({
                              {"leaderName", Str("")},
                              {"resourceLock", Str("")},
                              {"controllerLeaders", json::Value::Null()},
                          })},
  });
  return json::Value::MakeObject({
      {"kind", Str("KubeControllerManagerConfiguration")},
      {"apiVersion", Str(std::string(kConfigzName) + "/v1alpha1")},
      {"Generic", std::move(generic)},
      {"KubeCloudShared",
       json::Value::MakeObject({{"UseServiceAccountCredentials",
                                 json::Value::Bool(o.use_service_account_credentials)}})},
      {"DeploymentController",
       json::Value::MakeObject(
           {{"ConcurrentDeploymentSyncs", json::Value::Int(o.concurrent_deployment_syncs)}})},
      {"ReplicaSetController",
       json::Value::MakeObject(
           {{"ConcurrentRSSyncs", json::Value::Int(o.concurrent_replicaset_syncs)}})},
  });
}

}  // namespace kcm::app
