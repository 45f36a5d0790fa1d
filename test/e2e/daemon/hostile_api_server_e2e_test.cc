// The kube-controller-manager binary pointed at a hostile "API server" (a compromised endpoint, a
// broken proxy): a matrix that serves every shape of hostile answer (Attack) on every kind of call
// the daemon makes (Call), all other calls answered validly (ScriptedApiServer). In every cell the
// daemon must stay alive and keep serving /healthz, hold its memory and not spin a core, log the
// error once per attempt on one line with the peer's text escaped (no forged line, no control
// byte, nothing that is not UTF-8), and stop on SIGTERM. The memory and CPU bounds are liveness
// bounds (an unbounded read takes gigabytes, a spin a whole core), not targets.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "test/e2e/daemon/scripted_api_server.h"
#include "test/integration/framework/process.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
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

// What the daemon's log says of each attack, whatever the call: any one of these.
std::vector<std::string> Markers(Attack attack) {
  switch (attack) {
    case Attack::kEndlessBody:
    case Attack::kGzipBomb:
    case Attack::kEndlessFrame:
      // The body's bound, the decoder's item bound, the frame scanner's, or a decoding error of
      // what is no object at all.
      return {"over 16777216 bytes", "over 1073741824 bytes", "16777216", "decode", "Decode"};
    case Attack::kEndlessErrorBody:
      return {"[truncated]"};
    case Attack::kEndlessInterim:
      return {"more than 5 interim answers"};
    case Attack::kBadContentLength:
    case Attack::kNegativeContentLength:
      return {"Content-Length"};
    case Attack::kHugeContentLength:
      return {"over 16777216 bytes", "over 1073741824 bytes"};
    case Attack::kEndlessHead:
      return {"head over"};
    case Attack::kForgedText:
    case Attack::kForgedStatus:
      return {"FORGED-LINE"};
  }
  return {};
}

std::vector<std::string> Lines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool NamesAttack(const std::string& line, const std::vector<std::string>& markers) {
  for (const auto& m : markers) {
    if (line.find(m) != std::string::npos) return true;
  }
  return false;
}

// The first problem with the log as a reader (or a log pipeline, or a terminal) gets it: a line
// without klog's header, a header a peer wrote, a control byte, a byte that is not UTF-8, a
// C1 control or Unicode line separator; "" when there is none.
std::string LogProblem(const std::string& log) {
  static const std::regex kHeader(R"(^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^ :]+:\d+\] )");
  for (const std::string& line : Lines(log)) {
    if (!std::regex_search(line, kHeader)) return "a line without klog's header: " + line;
    if (line.find(kForgedLinePrefix) != std::string::npos &&
        line.find(kForgedLinePrefix) < line.find("] ")) {
      return "a forged header: " + line;
    }
    for (std::size_t i = 0; i < line.size();) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c < 0x20 || c == 0x7f) return "control byte " + std::to_string(c) + " in: " + line;
      std::size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      if (n == 0 || i + n > line.size()) return "a byte that is not UTF-8 in: " + line;
      for (std::size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(line[i + k]) & 0xc0) != 0x80) {
          return "a byte that is not UTF-8 in: " + line;
        }
      }
      const std::string_view seq(line.data() + i, n);
      if ((n == 2 && c == 0xc2 && static_cast<unsigned char>(line[i + 1]) < 0xa0) ||
          seq == "\xe2\x80\xa8" || seq == "\xe2\x80\xa9") {
        return "a C1 control or line separator in: " + line;
      }
      i += n;
    }
  }
  return "";
}

using Cell = std::tuple<Call, Attack>;

class HostileApiServerE2E : public ::testing::TestWithParam<Cell> {};

TEST_P(HostileApiServerE2E, Withstood) {
  const auto [call, attack] = GetParam();
  ScriptedApiServer server(call, attack);
  const int port = testenv::FreeLoopbackPort();
  std::vector<std::string> argv = {KCM_DAEMON_PATH, "--master=" + server.url(),
                                   "--bind-address=127.0.0.1",
                                   "--secure-port=" + std::to_string(port)};
  // Leader election only where its Lease calls are the ones attacked: otherwise the scripted
  // server would have to keep a Lease, and the controllers start at once.
  argv.push_back(call == Call::kLease ? "--leader-elect=true" : "--leader-elect=false");
  testenv::DaemonProcess daemon(argv, ::testing::TempDir() + "kcm-hostile-e2e-" +
                                          std::to_string(::getpid()) + "-" + std::to_string(port) +
                                          ".log");
  ASSERT_TRUE(daemon.started());

  // The delegated authn/authz calls are made for a /metrics request with a token.
  std::atomic<bool> stop_scraping{false};
  std::thread scraper;
  if (call == Call::kTokenReview || call == Call::kSubjectAccessReview) {
    scraper = std::thread([&] {
      while (!stop_scraping.load()) {
        testenv::HttpsGet(port, "/metrics", "scraper-token");
        std::this_thread::sleep_for(300ms);
      }
    });
  }
  struct JoinScraper {
    std::atomic<bool>& stop;
    std::thread& t;
    ~JoinScraper() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join_scraper{stop_scraping, scraper};

  const std::vector<std::string> markers = Markers(attack);
  auto attack_logged = [&] {
    for (const auto& line : Lines(daemon.Log())) {
      if (NamesAttack(line, markers)) return true;
    }
    return false;
  };
  ASSERT_TRUE(Eventually([&] { return server.attacked_requests() >= 1; }, 30s))
      << "the attacked call was never made\n"
      << daemon.Log();
  ASSERT_TRUE(Eventually(attack_logged, 30s)) << daemon.Log() << server.Requests();

  const double cpu0 = CpuSeconds(daemon.pid());
  std::this_thread::sleep_for(5s);  // backoff retries meet the attack again meanwhile
  const double cpu = CpuSeconds(daemon.pid()) - cpu0;
  ASSERT_TRUE(daemon.Running()) << daemon.Log();
  const int healthz = testenv::HttpsGet(port, "/healthz").first;
  const long peak_rss = PeakRssBytes(daemon.pid());
  EXPECT_EQ(healthz, 200);
  EXPECT_LT(peak_rss, 256L << 20) << daemon.Log();
  EXPECT_LT(cpu, 2.5) << "CPU seconds in 5 s: a busy loop?";
  stop_scraping = true;
  if (scraper.joinable()) scraper.join();
  EXPECT_EQ(daemon.StopWith(SIGTERM), 0) << daemon.Log();

  const std::string log = daemon.Log();
  EXPECT_EQ(LogProblem(log), "");
  // Once per attempt: no failure is logged more often than the attacked call was made.
  std::size_t logged = 0;
  for (const auto& line : Lines(log)) logged += NamesAttack(line, markers) ? 1 : 0;
  EXPECT_GE(logged, 1u);
  EXPECT_LE(logged, server.attacked_requests()) << log;
  // The cell's figures, for the matrix's report (ctest -V).
  std::printf(
      "cell %s_%s: healthz %d, peak RSS %.1f MiB, %.2f CPU-s in 5 s, %zu attempts, %zu lines\n",
      std::string(Name(call)).c_str(), std::string(Name(attack)).c_str(), healthz,
      static_cast<double>(peak_rss) / (1 << 20), cpu, server.attacked_requests(), logged);
}

const Call kCalls[] = {Call::kHealthz,
                       Call::kListPods,
                       Call::kListReplicaSets,
                       Call::kWatchPods,
                       Call::kWatchReplicaSets,
                       Call::kCreatePod,
                       Call::kUpdateReplicaSetStatus,
                       Call::kDeletePod,
                       Call::kTokenReview,
                       Call::kSubjectAccessReview,
                       Call::kLease};
const Attack kAttacks[] = {
    Attack::kEndlessBody,       Attack::kEndlessErrorBody, Attack::kGzipBomb,
    Attack::kEndlessInterim,    Attack::kBadContentLength, Attack::kNegativeContentLength,
    Attack::kHugeContentLength, Attack::kEndlessHead,      Attack::kEndlessFrame,
    Attack::kForgedText,        Attack::kForgedStatus};

INSTANTIATE_TEST_SUITE_P(Matrix, HostileApiServerE2E,
                         ::testing::Combine(::testing::ValuesIn(kCalls),
                                            ::testing::ValuesIn(kAttacks)),
                         [](const ::testing::TestParamInfo<Cell>& info) {
                           return std::string(Name(std::get<0>(info.param))) + "_" +
                                  std::string(Name(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace kcm::e2e
