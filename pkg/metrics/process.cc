#include "pkg/metrics/process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pkg/metrics/metrics.h"

namespace kcm::metrics {
namespace {

struct ProcessMetrics {
  Gauge resident = GaugeVec("process_resident_memory_bytes", "Resident memory size in bytes.", {})
                       .With(std::vector<std::string>{});
  Gauge virtual_mem = GaugeVec("process_virtual_memory_bytes", "Virtual memory size in bytes.", {})
                          .With(std::vector<std::string>{});
  Counter cpu = CounterVec("process_cpu_seconds_total",
                           "Total user and system CPU time spent in seconds.", {})
                    .With(std::vector<std::string>{});
  Gauge start = GaugeVec("process_start_time_seconds",
                         "Start time of the process since unix epoch in seconds.", {})
                    .With(std::vector<std::string>{});
  Gauge open_fds = GaugeVec("process_open_fds", "Number of open file descriptors.", {})
                       .With(std::vector<std::string>{});
  Gauge max_fds = GaugeVec("process_max_fds", "Maximum number of open file descriptors.", {})
                      .With(std::vector<std::string>{});
  Gauge threads = GaugeVec("kcm_threads", "Number of threads of the process.", {})
                      .With(std::vector<std::string>{});
  CounterVec thread_cpu{"kcm_thread_cpu_seconds_total",
                        "Total user and system CPU time spent in seconds by the named thread.",
                        {"thread"}};
  double cpu_reported = 0;  // What the counter holds; it only moves forward by the delta.
  // Per thread name: the live ThreadCpu threads, the CPU time of those gone, and what the
  // counter holds.
  struct NamedThreads {
    std::vector<pid_t> live;  // a name may have several threads
    double gone_seconds = 0;
    double reported = 0;
  };
  std::map<std::string, NamedThreads> named;
  std::mutex mu;
};

ProcessMetrics& Get() {
  static ProcessMetrics m;
  return m;
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

// The fields of a /proc stat file after the command name (which may hold spaces): f[0] is field
// 3 (state); utime=14, stime=15, num_threads=20, starttime=22, vsize=23, rss=24.
bool ReadStatFields(std::string (&f)[24], const std::string& path = "/proc/self/stat") {
  std::ifstream stat_file(path);
  std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 2));
  for (auto& x : f) fields >> x;
  return true;
}

// A thread's user + system CPU seconds from /proc/self/task/<tid>/stat; 0 once it is gone.
double ThreadCpuSeconds(pid_t tid) {
  std::string f[24];
  if (!ReadStatFields(f, "/proc/self/task/" + std::to_string(tid) + "/stat")) return 0;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

ThreadCpu::ThreadCpu(std::string name) : name_(std::move(name)), tid_(gettid()) {
  ProcessMetrics& m = Get();
  std::lock_guard lock(m.mu);
  m.named[name_].live.push_back(tid_);
  m.thread_cpu.With({name_});  // the series exists from the start, at 0
}

ThreadCpu::~ThreadCpu() {
  const double used = ThreadCpuSeconds(tid_);  // still alive: this runs on the thread itself
  ProcessMetrics& m = Get();
  std::lock_guard lock(m.mu);
  ProcessMetrics::NamedThreads& named = m.named[name_];
  std::erase(named.live, tid_);
  named.gone_seconds += used;
}

double ProcessStartTimeSeconds() {
  std::string f[24];
  if (!ReadStatFields(f)) return 0;
  return BootTimeSeconds() + std::stod(f[19]) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void UpdateProcessMetrics() {
  ProcessMetrics& m = Get();
  std::lock_guard lock(m.mu);
  if (std::string f[24]; ReadStatFields(f)) {
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
    if (cpu > m.cpu_reported) {
      m.cpu.Inc(cpu - m.cpu_reported);
      m.cpu_reported = cpu;
    }
    m.threads.Set(std::stod(f[17]));
    m.start.Set(BootTimeSeconds() + std::stod(f[19]) / ticks);
    m.virtual_mem.Set(std::stod(f[20]));
    m.resident.Set(std::stod(f[21]) * page);
  }
  for (auto& [name, named] : m.named) {
    double used = named.gone_seconds;
    for (pid_t tid : named.live) used += ThreadCpuSeconds(tid);
    if (used > named.reported) {
      m.thread_cpu.With({name}).Inc(used - named.reported);
      named.reported = used;
    }
  }
  std::error_code ec;
  size_t fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  m.open_fds.Set(static_cast<double>(fds));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) m.max_fds.Set(static_cast<double>(lim.rlim_cur));
}

}  // namespace kcm::metrics
