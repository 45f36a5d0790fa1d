#include "test/integration/framework/testenv.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#ifndef KCM_SOURCE_DIR
#error "KCM_SOURCE_DIR must be defined by the build"
#endif

extern char** environ;

namespace kcm::testenv {
namespace {

using Clock = std::chrono::steady_clock;

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : "..." + s.substr(s.size() - n);
}

void CloseFd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

}  // namespace

std::string CommandResult::Describe() const {
  std::string d = timed_out ? "timed out" : "exit code " + std::to_string(exit_code);
  if (!err.empty()) d += "; stderr: " + Tail(err, 2000);
  if (!out.empty()) d += "; stdout: " + Tail(out, 1000);
  return d;
}

std::string SourceDir() {
  const char* dir = std::getenv("KCM_SOURCE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : KCM_SOURCE_DIR;
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                         const std::string& input, const std::map<std::string, std::string>& env) {
  CommandResult result;
  if (argv.empty()) {
    result.err = "RunCommand: empty argv";
    return result;
  }
  // Everything the child needs is prepared before fork (no allocation after fork).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && env.count(kv.substr(0, eq)) != 0) continue;
    env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return result;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    result.err = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      ::close(fd);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execvpe(cargv[0], cargv.data(), envp.data());
    const char msg[] = "exec failed\n";
    (void)!::write(2, msg, sizeof(msg) - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill below
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  int in_fd = in_pipe[1], out_fd = out_pipe[0], err_fd = err_pipe[0];
  ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) CloseFd(in_fd);

  const auto deadline = Clock::now() + timeout;
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, in_i = -1;
    if (out_fd >= 0) {
      fds[n] = {out_fd, POLLIN, 0};
      out_i = n++;
    }
    if (err_fd >= 0) {
      fds[n] = {err_fd, POLLIN, 0};
      err_i = n++;
    }
    if (in_fd >= 0) {
      fds[n] = {in_fd, POLLOUT, 0};
      in_i = n++;
    }
    int rc = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    auto drain = [&](int idx, int& fd, std::string& sink) {
      if (idx < 0 || fds[idx].revents == 0) return;
      ssize_t r = ::read(fd, buf, sizeof(buf));
      if (r > 0) {
        sink.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        CloseFd(fd);
      }
    };
    drain(out_i, out_fd, result.out);
    drain(err_i, err_fd, result.err);
    if (in_i >= 0 && fds[in_i].revents != 0) {
      ssize_t w = ::write(in_fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) CloseFd(in_fd);
      if (written == input.size()) CloseFd(in_fd);
    }
  }
  CloseFd(in_fd);
  CloseFd(out_fd);
  CloseFd(err_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  if (result.timed_out) result.err += "\n[killed after " + std::to_string(timeout.count()) + "s]";
  return result;
}

bool LoadTestbedInfo(const std::string& dir, TestbedInfo* info, std::string* error) {
  std::ifstream in(dir + "/testbed.env");
  if (!in) {
    *error = "cannot read " + dir + "/testbed.env (is a testbed up there?)";
    return false;
  }
  std::map<std::string, std::string> kv;
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq == std::string::npos || line[0] == '#') continue;
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  auto get = [&](const char* key, std::string* out) {
    auto it = kv.find(key);
    if (it == kv.end() || it->second.empty()) {
      if (error->empty()) *error = dir + "/testbed.env has no " + key;
      return false;
    }
    *out = it->second;
    return true;
  };
  error->clear();
  TestbedInfo i;
  std::string nodes, upstream;
  bool ok = get("KCM_TESTBED_DIR", &i.dir) & get("KCM_TESTBED_SERVER", &i.server) &
            get("KCM_TESTBED_CA", &i.ca_file) & get("KCM_TESTBED_ADMIN_TOKEN", &i.admin_token) &
            get("KCM_TESTBED_KCM_TOKEN", &i.kcm_token) & get("KCM_TESTBED_KCM_USER", &i.kcm_user) &
            get("KCM_TESTBED_ADMIN_KUBECONFIG", &i.admin_kubeconfig) &
            get("KCM_TESTBED_KCM_KUBECONFIG", &i.kcm_kubeconfig) &
            get("KCM_TESTBED_ETCD_ENDPOINT", &i.etcd_endpoint) &
            get("KCM_TESTBED_ETCDCTL", &i.etcdctl) & get("KCM_TESTBED_KUBECTL", &i.kubectl) &
            get("KCM_TESTBED_BIN_DIR", &i.bin_dir) & get("KCM_TESTBED_NODES", &nodes) &
            get("KCM_TESTBED_UPSTREAM_KCM", &upstream);
  if (!ok) return false;
  i.nodes = std::atoi(nodes.c_str());
  i.upstream_kcm = upstream == "1";
  *info = std::move(i);
  return true;
}

bool TestbedEnvironment::Fits(const TestbedInfo& info) const {
  return info.nodes >= options_.nodes && info.upstream_kcm == options_.upstream_kcm;
}

void TestbedEnvironment::SetUp() {
  const std::string testbed = SourceDir() + "/hack/testbed";
  if (const char* existing = std::getenv("KCM_TESTBED_DIR_EXISTING");
      existing != nullptr && *existing != '\0') {
    TestbedInfo info;
    std::string error;
    if (!LoadTestbedInfo(existing, &info, &error)) {
      setup_error_ = "KCM_TESTBED_DIR_EXISTING=" + std::string(existing) + ": " + error;
      ADD_FAILURE() << setup_error_;
      return;
    }
    if (Fits(info)) {
      auto status = RunCommand({testbed, "status"}, std::chrono::seconds(30), "",
                               {{"KCM_TESTBED_DIR", existing}});
      if (!status.ok()) {
        setup_error_ = "testbed in " + std::string(existing) +
                       " is not (fully) running: " + status.out + status.err;
        ADD_FAILURE() << setup_error_;
        return;
      }
      info_ = std::move(info);
      ready_ = true;
      return;
    }
    std::cerr << "[testenv] testbed " << existing << " does not fit this test (nodes " << info.nodes
              << ", upstream KCM " << info.upstream_kcm << "); starting a private one\n";
  }

  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/kcm-testbed-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  char* dir = ::mkdtemp(buf.data());
  if (dir == nullptr) {
    setup_error_ = std::string("mkdtemp failed: ") + std::strerror(errno);
    ADD_FAILURE() << setup_error_;
    return;
  }
  std::vector<std::string> argv = {testbed, "up", "--nodes", std::to_string(options_.nodes)};
  if (options_.upstream_kcm) argv.push_back("--with-upstream-kcm");
  std::cerr << "[testenv] starting a private testbed in " << dir << " (log of `up` follows)\n";
  auto t0 = Clock::now();
  auto up =
      RunCommand(argv, options_.up_timeout, "",
                 {{"KCM_TESTBED_DIR", dir}, {"KCM_TESTBED_OWNER_PID", std::to_string(::getpid())}});
  std::cerr << up.err;
  owned_ = true;  // even a failed `up` may have left a dir to clean up
  info_.dir = dir;
  if (!up.ok()) {
    setup_error_ =
        "hack/testbed up failed (" + up.Describe() + "); logs in " + std::string(dir) + "/logs";
    ADD_FAILURE() << setup_error_;
    return;
  }
  std::string error;
  if (!LoadTestbedInfo(dir, &info_, &error)) {
    setup_error_ = error;
    ADD_FAILURE() << setup_error_;
    return;
  }
  ready_ = true;
  std::cerr << "[testenv] testbed up in "
            << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - t0).count()
            << "s: " << info_.server << "\n";
}

void TestbedEnvironment::TearDown() {
  if (!owned_ || info_.dir.empty()) return;
  const char* keep = std::getenv("KCM_TESTBED_KEEP");
  if (keep != nullptr && std::string(keep) == "1") {
    std::cerr << "[testenv] KCM_TESTBED_KEEP=1: testbed left running in " << info_.dir
              << "; stop it with KCM_TESTBED_DIR=" << info_.dir << " hack/testbed down\n";
    return;
  }
  const bool passed = ::testing::UnitTest::GetInstance()->Passed();
  std::vector<std::string> argv = {SourceDir() + "/hack/testbed", "down"};
  if (passed) argv.push_back("--purge");
  auto down = RunCommand(argv, std::chrono::seconds(120), "", {{"KCM_TESTBED_DIR", info_.dir}});
  if (!down.ok()) {
    std::cerr << "[testenv] hack/testbed down failed: " << down.Describe() << "\n";
  } else if (!passed) {
    std::cerr << "[testenv] tests failed; testbed stopped, logs kept in " << info_.dir << "/logs\n";
  }
}

CommandResult TestbedEnvironment::Kubectl(const std::vector<std::string>& args,
                                          std::chrono::seconds timeout,
                                          const std::string& input) const {
  std::vector<std::string> argv = {info_.kubectl, "--kubeconfig=" + info_.admin_kubeconfig};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout, input);
}

CommandResult TestbedEnvironment::Etcdctl(const std::vector<std::string>& args,
                                          std::chrono::seconds timeout) const {
  std::vector<std::string> argv = {info_.etcdctl, "--endpoints=" + info_.etcd_endpoint};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, timeout);
}

namespace {
TestbedEnvironment* g_env = nullptr;
}  // namespace

TestbedEnvironment* RegisterTestbed(TestbedOptions options) {
  if (g_env == nullptr) {
    // GoogleTest owns and deletes registered environments.
    g_env = new TestbedEnvironment(options);  // NOLINT(cppcoreguidelines-owning-memory)
    ::testing::AddGlobalTestEnvironment(g_env);
  }
  return g_env;
}

TestbedEnvironment& Testbed() {
  if (g_env == nullptr) {
    std::cerr << "kcm::testenv::Testbed() called without RegisterTestbed()\n";
    std::abort();
  }
  return *g_env;
}

}  // namespace kcm::testenv
