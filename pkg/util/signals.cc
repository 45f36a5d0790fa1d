#include "pkg/util/signals.h"

#include <signal.h>

#include <cstdlib>
#include <thread>

#include "pkg/util/klog.h"

namespace kcm {

std::stop_token SetupSignalHandler(std::chrono::seconds shutdown_bound) {
  // Taken by one thread (sigwait) rather than a handler, so the stop runs outside signal context.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::stop_source stop;
  std::thread([signals, stop, shutdown_bound]() mutable {
    int sig = 0;
    sigwait(&signals, &sig);
    KLOG_INFOS("Received signal, shutting down", "signal", sig);
    stop.request_stop();
    if (shutdown_bound > std::chrono::seconds(0)) {
      std::thread([shutdown_bound] {
        std::this_thread::sleep_for(shutdown_bound);
        KLOG_ERRORS("graceful shutdown took longer than its bound", "Exiting", "bound",
                    shutdown_bound);
        std::_Exit(1);
      }).detach();
    }
    sigwait(&signals, &sig);
    KLOG_ERRORS("second signal", "Exiting at once", "signal", sig);
    std::_Exit(1);
  }).detach();
  return stop.get_token();
}

}  // namespace kcm
