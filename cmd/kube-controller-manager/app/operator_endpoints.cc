#include "cmd/kube-controller-manager/app/operator_endpoints.h"

#include <glog/logging.h>

#include <atomic>
#include <charconv>
#include <limits>

#include "cmd/kube-controller-manager/app/configz.h"
#include "pkg/metrics/process.h"
#include "pkg/server/configz.h"
#include "pkg/server/debug_flags.h"
#include "pkg/server/flagz.h"
#include "pkg/server/statusz.h"

namespace kcm::app {
namespace {

constexpr const char* kComponent = "kube-controller-manager";

}  // namespace

Result<std::string> SetVerbosity(const std::string& value) {
  uint32_t level = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), level);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    const char* why =
        ec == std::errc::result_out_of_range ? "value out of range" : "invalid syntax";
    return Error::Local("InvalidValue", "strconv.ParseUint: parsing \"" + value + "\": " + why);
  }
  if (level > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
    return Error::Local("InvalidValue", "failed set klog.logging.verbosity " + value +
                                            ": strconv.ParseInt: parsing \"" + value +
                                            "\": value out of range");
  }
  // glog's verbosity, which VLOG_IS_ON reads on every thread: one aligned word stored whole.
  std::atomic_ref<int32_t>(FLAGS_v).store(static_cast<int32_t>(level), std::memory_order_relaxed);
  return "successfully set klog.logging.verbosity to " + value;
}

void InstallOperatorEndpoints(server::SecureServer& server, const Options& options,
                              const BuildInfo& build,
                              const std::map<std::string, std::string>& flag_values) {
  // The paths /statusz lists, as upstream's mux lists them when statusz is installed: the
  // handlers installed before it (/debug/flags is unlisted there too).
  std::vector<std::string> listed = {"/configz", "/healthz", "/livez",
                                     "/readyz",  "/metrics", "/metrics/slis"};
  server.Handle("/configz", server::NewConfigzHandler(kConfigzName,
                                                      KubeControllerManagerConfiguration(options)));
  if (options.enable_profiling) {
    server.Handle("/debug/flags/v", server::NewDebugFlagHandler(SetVerbosity));
    auto index = server::NewDebugFlagsIndexHandler({"v"});
    server.Handle("/debug/flags", index);
    server.Handle("/debug/flags/", index);
  }
  if (options.feature_gates.Enabled(features::kComponentFlagz)) {
    // The values of start, but --v as /debug/flags/v may have set it since (upstream reads
    // its flags' values at each request).
    server.Handle("/flagz", server::NewFlagzHandler(kComponent, [flag_values] {
                    auto now = flag_values;
                    now["v"] = std::to_string(
                        std::atomic_ref<int32_t>(FLAGS_v).load(std::memory_order_relaxed));
                    return now;
                  }));
    listed.push_back("/flagz");
  }
  if (options.feature_gates.Enabled(features::kComponentStatusz)) {
    server::StatuszInfo info;
    info.component = kComponent;
    info.start_time_seconds = metrics::ProcessStartTimeSeconds();
    // Upstream's binary version is its own release; ours is that release with our build as
    // metadata (main.cc's --version), without the leading "v" as version.Version prints it.
    info.binary_version = build.version.starts_with("v") ? build.version.substr(1) : build.version;
    info.emulation_version = build.emulation_version;
    info.paths = listed;
    server.Handle("/statusz", server::NewStatuszHandler(std::move(info)));
  }
}

}  // namespace kcm::app
