// kube-controller-manager: runs the deployment and replicaset controllers.
#include <glog/logging.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "cmd/kube-controller-manager/app/flags.h"
#include "cmd/kube-controller-manager/app/run.h"

namespace {

// How long a graceful stop may take before the process exits anyway (in-flight syncs, lease
// release, event flush); below Kubernetes' default 30 s termination grace period.
constexpr auto kShutdownBound = std::chrono::seconds(25);

}  // namespace

int main(int argc, char** argv) {
  // A peer that hangs up must cost a write error (EPIPE), never the process: every socket write
  // path (Asio, libcurl, OpenSSL over a socket BIO) is covered by ignoring SIGPIPE process-wide,
  // before any thread starts.
  signal(SIGPIPE, SIG_IGN);
  FLAGS_logtostderr = true;
  auto options = kcm::app::ParseFlags(argc, argv);
  if (!options.ok()) {
    std::cerr << "error: " << options.error().message << "\n";
    return 1;
  }
  if (kcm::Status s = kcm::app::Validate(*options); !s.ok()) {
    std::cerr << "error: " << s.error().message << "\n";
    return 1;
  }
  google::InitGoogleLogging(argv[0]);

  // SIGTERM/SIGINT are taken by one thread (sigwait) and turned into the stop signal; a second
  // signal, or a graceful stop running past kShutdownBound, ends the process at once.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::stop_source stop;
  std::thread([&signals, &stop] {
    int sig = 0;
    sigwait(&signals, &sig);
    LOG(INFO) << "Received signal " << sig << ", shutting down";
    stop.request_stop();
    std::thread([] {
      std::this_thread::sleep_for(kShutdownBound);
      LOG(ERROR) << "graceful shutdown took longer than " << kShutdownBound.count() << "s; exiting";
      std::_Exit(1);
    }).detach();
    sigwait(&signals, &sig);
    LOG(ERROR) << "second signal " << sig << ", exiting at once";
    std::_Exit(1);
  }).detach();

  int code = kcm::app::Run(*options, {KCM_VERSION, KCM_GIT_COMMIT}, stop.get_token());
  google::FlushLogFiles(google::GLOG_INFO);
  return code;
}
