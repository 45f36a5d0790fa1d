// Helpers for tests that drive real processes: a free loopback port, a bounded "eventually"
// wait, and DaemonProcess — our kube-controller-manager binary (or any program) started with its
// output in a log file, stopped with a signal and a bounded wait, killed at destruction.
// Thread-compatible: one DaemonProcess is used from one test thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kcm::testenv {

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

// Polls `done` every `poll` until it returns true (→ true) or `limit` passes (→ its last answer).
bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit,
                std::chrono::milliseconds poll = std::chrono::milliseconds(100));

class DaemonProcess {
 public:
  // argv[0] is the program path. Output (stdout and stderr) goes to `log_path`.
  DaemonProcess(std::vector<std::string> argv, std::string log_path);
  ~DaemonProcess();  // SIGKILL and reap if still running.
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  bool Running();
  // Sends `sig`, waits up to `limit` for the exit; the exit code (128+signal when killed), or -1
  // if the process is still running.
  int StopWith(int sig, std::chrono::seconds limit = std::chrono::seconds(40));
  std::string Log() const;

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

// GET https://127.0.0.1:<port><path> (certificate not verified) with an optional bearer token,
// through the curl program: {HTTP code (0 when no answer), body}.
std::pair<int, std::string> HttpsGet(int port, const std::string& path,
                                     const std::string& token = "");

}  // namespace kcm::testenv
