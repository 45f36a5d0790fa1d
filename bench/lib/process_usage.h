// The calling process's CPU time and context switches (getrusage, every thread, ended ones
// included): what the benchmark programs report as their own cost. Header-only.
#pragma once

#include <sys/resource.h>

namespace kcm::bench {

struct ProcessUsage {
  double user_s = 0;
  double system_s = 0;
  long context_switches = 0;  // voluntary and involuntary

  double cpu_s() const { return user_s + system_s; }
};

inline ProcessUsage ReadProcessUsage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return {s(u.ru_utime), s(u.ru_stime), u.ru_nvcsw + u.ru_nivcsw};
}

// User + system seconds so far.
inline double CpuSeconds() {
  return ReadProcessUsage().cpu_s();
}

}  // namespace kcm::bench
