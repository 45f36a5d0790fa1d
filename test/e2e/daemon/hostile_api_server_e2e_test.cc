// The kube-controller-manager binary pointed at a hostile "API server" (a compromised endpoint, a
// broken proxy), scripted at the byte level, one attack per test: every request it sends meets
// the attack. The daemon must log a clear error naming it, retry with its backoff, keep serving
// /healthz, hold its memory and not spin a core, and stop on SIGTERM. The memory and CPU bounds
// are generous liveness bounds (a bomb would take gigabytes, a spin a whole core), not targets.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"
#include "test/unit/client/test_server.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;
using testenv::Eventually;

// Peak RSS (VmHWM) of a process, in bytes.
long PeakRssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) * 1024;
  }
  return -1;
}

// User + system CPU seconds of a process so far.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Runs the daemon against `server` for a while and checks what an operator would: alive, serving
// /healthz, the attack named in its log, memory and CPU bounded, a clean stop.
void ExpectWithstood(const TestServer& server, const std::string& logged) {
  const int port = testenv::FreeLoopbackPort();
  testenv::DaemonProcess daemon(
      {KCM_DAEMON_PATH, "--master=" + server.url(), "--bind-address=127.0.0.1",
       "--secure-port=" + std::to_string(port)},
      ::testing::TempDir() + "kcm-hostile-e2e-" + std::to_string(::getpid()) + "-" +
          std::to_string(port) + ".log");
  ASSERT_TRUE(daemon.started());
  ASSERT_TRUE(Eventually([&] { return daemon.Log().find(logged) != std::string::npos; }, 30s))
      << daemon.Log();
  const double cpu0 = CpuSeconds(daemon.pid());
  std::this_thread::sleep_for(5s);  // backoff retries meet the attack again meanwhile
  const double cpu = CpuSeconds(daemon.pid()) - cpu0;
  ASSERT_TRUE(daemon.Running()) << daemon.Log();
  EXPECT_EQ(testenv::HttpsGet(port, "/healthz").first, 200);
  EXPECT_LT(PeakRssBytes(daemon.pid()), 256L << 20) << daemon.Log();
  EXPECT_LT(cpu, 2.5) << "CPU seconds in 5 s: a busy loop?";
  EXPECT_GE(server.requests().size(), 2u) << "retried";
  EXPECT_EQ(daemon.StopWith(SIGTERM), 0) << daemon.Log();
}

// A 256 MiB gzip answer to every request stops at the 16 MiB object limit.
TEST(HostileApiServerE2E, GzipBomb) {
  const std::string bomb = kcm::testing::GzipBomb(std::size_t{256} << 20);
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.Respond(200, bomb, {{"Content-Encoding", "gzip"}});
  });
  ExpectWithstood(server, "response body over 16777216 bytes");
}

// Interim answers without end are refused after the fifth.
TEST(HostileApiServerE2E, EndlessInterimAnswers) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    for (int i = 0; i < 1000000 && c.WriteAll("HTTP/1.1 100 Continue\r\n\r\n"); ++i) {
    }
  });
  ExpectWithstood(server, "more than 5 interim answers");
}

// A negative Content-Length on a connection held open is refused at once (by libcurl, which
// checks it before the head callback sees the line, or by AnswerHead).
TEST(HostileApiServerE2E, NegativeContentLength) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.WriteAll("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}");
    c.HoldOpen();
  });
  ExpectWithstood(server, "Content-Length");
}

// A head that never ends stops at its limit.
TEST(HostileApiServerE2E, EndlessHead) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.WriteAll("HTTP/1.1 200 OK\r\n");
    const std::string line = "X-Filler: " + std::string(4000, 'a') + "\r\n";
    for (int i = 0; i < 100000 && c.WriteAll(line); ++i) {
    }
  });
  ExpectWithstood(server, "head over");
}

}  // namespace
}  // namespace kcm::e2e
