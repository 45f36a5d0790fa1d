// kube-controller-manager: runs the deployment and replicaset controllers.
#include <glog/logging.h>
#include <malloc.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string>

#include "cmd/kube-controller-manager/app/flags.h"
#include "cmd/kube-controller-manager/app/run.h"
#include "pkg/util/klog.h"
#include "pkg/util/signals.h"

namespace {

// How long a graceful stop may take before the process exits anyway (in-flight syncs and their
// writes, lease release); below Kubernetes' default 30 s termination grace period.
constexpr auto kShutdownBound = std::chrono::seconds(25);

// --version's line, as upstream prints it ("Kubernetes v1.37.2"), with our build as semver build
// metadata after the Kubernetes release whose API and behaviour we implement, the convention
// of distributions such as k3s ("v1.37.2+k3s1").
std::string BuildVersion() {
  return std::string(KCM_KUBERNETES_VERSION) + "+cpp." + KCM_VERSION;
}

#if defined(__clang__)
constexpr const char* kCompiler = "clang " __clang_version__;
#else
constexpr const char* kCompiler = "gcc " __VERSION__;
#endif

// major.minor of the Kubernetes release we implement: "1.37".
std::string EmulationVersion() {
  std::string v = KCM_KUBERNETES_VERSION;  // "v1.37.2"
  if (v.starts_with("v")) v.erase(0, 1);
  return v.substr(0, v.find('.', v.find('.') + 1));
}

void PrintVersion(const std::string& mode, const std::string& git_version) {
  if (mode == "raw") {
    std::string v = KCM_KUBERNETES_VERSION;  // "v1.37.2"
    size_t dot = v.find('.', 1);
    std::cout << "version.Info{Major:\"" << v.substr(1, dot - 1) << "\", Minor:\""
              << v.substr(dot + 1, v.find('.', dot + 1) - dot - 1) << "\", GitVersion:\""
              << git_version << "\", GitCommit:\"" << KCM_GIT_COMMIT
              << "\", GitTreeState:\"\", BuildDate:\"\", GoVersion:\"\", Compiler:\"" << kCompiler
              << "\", Platform:\"linux/amd64\"}\n";
    return;
  }
  std::cout << "Kubernetes " << git_version << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that hangs up must cost a write error (EPIPE), never the process: every socket write
  // path (Asio, the client transport's sends, OpenSSL) is covered by ignoring SIGPIPE process-wide,
  // before any thread starts.
  signal(SIGPIPE, SIG_IGN);
  // Blocks of 4 MiB and more (an answer body near its bound, an inflated one) are mapped for
  // themselves and given back when freed. glibc's default threshold rises to the size of the
  // largest such block freed (up to 32 MiB), after which each thread's arena keeps one: a
  // peer's 16 MiB answers met by a few worker threads in turn held 260 MiB
  // (hostile_api_server_e2e_test's CreatePod_GzipBomb). A fixed threshold keeps them transient.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  kcm::app::CommandLine command;
  if (kcm::Status s = command.Parse(argc, argv); !s.ok()) {
    // Upstream's command prints the usage, then the error, and exits 1 on a flag error.
    command.PrintUsage(std::cerr);
    std::cerr << "Error: " << s.error().message << "\n";
    return 1;
  }
  if (command.help_requested()) {
    command.PrintUsage(std::cout);
    return 0;
  }
  const std::string git_version =
      command.reported_version().empty() ? BuildVersion() : command.reported_version();
  if (!command.version_requested().empty()) {
    PrintVersion(command.version_requested(), git_version);
    return 0;
  }
  const kcm::app::Options& options = command.options();
  if (kcm::Status s = kcm::app::Validate(options); !s.ok()) {
    std::cerr << "Error: " << s.error().message << "\n";
    return 1;
  }
  kcm::klog::InitLogging(
      argv[0],
      options.logging_format == "json" ? kcm::klog::Format::kJson : kcm::klog::Format::kText,
      options.log_flush_frequency);
  if (!command.NotApplicable().empty()) {
    std::string names;
    for (const auto& n : command.NotApplicable()) names += (names.empty() ? "--" : ", --") + n;
    KLOG_WARNINGS(
        "These flags concern controllers or features this binary does not run and have no "
        "effect",
        "flags", names);
  }
  if (auto not_run = kcm::app::NotRunControllers(options.controllers); !not_run.empty()) {
    std::string names;
    for (const auto& n : not_run) names += (names.empty() ? "" : ", ") + n;
    KLOG_WARNINGS(
        "--controllers names controllers this binary does not run (only deployment and replicaset)",
        "controllers", names);
  }

  // A second signal, or a graceful stop running past kShutdownBound, ends the process at once.
  const std::stop_token stop = kcm::SetupSignalHandler(kShutdownBound);

  int code = kcm::app::Run(options, {git_version, KCM_GIT_COMMIT, EmulationVersion(), kCompiler},
                           command.FlagValues(), stop);
  google::FlushLogFiles(google::GLOG_INFO);
  return code;
}
