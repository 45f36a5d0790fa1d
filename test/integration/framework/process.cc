#include "test/integration/framework/process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "test/integration/framework/testenv.h"

extern char** environ;

namespace kcm::testenv {

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

bool Eventually(const std::function<bool()>& done, std::chrono::milliseconds limit,
                std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(poll);
  }
  return done();
}

DaemonProcess::DaemonProcess(std::vector<std::string> args, std::string log_path)
    : log_path_(std::move(log_path)) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0 && !exited_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool DaemonProcess::Running() {
  if (pid_ <= 0 || exited_) return false;
  if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
    exited_ = true;
    return false;
  }
  return true;
}

int DaemonProcess::StopWith(int sig, std::chrono::seconds limit) {
  if (pid_ <= 0) return -1;
  if (!exited_) ::kill(pid_, sig);
  if (!Eventually([&] { return !Running(); }, limit)) return -1;
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
}

std::string DaemonProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::pair<int, std::string> HttpsGet(int port, const std::string& path, const std::string& token) {
  std::vector<std::string> argv = {"curl", "-sk", "-o", "-", "-w", "\n%{http_code}"};
  if (!token.empty()) {
    argv.push_back("-H");
    argv.push_back("Authorization: Bearer " + token);
  }
  argv.push_back("https://127.0.0.1:" + std::to_string(port) + path);
  CommandResult r = RunCommand(argv, std::chrono::seconds(20));
  size_t nl = r.out.rfind('\n');
  if (!r.ok() || nl == std::string::npos) return {0, r.out};
  return {std::atoi(r.out.c_str() + nl + 1), r.out.substr(0, nl)};
}

}  // namespace kcm::testenv
