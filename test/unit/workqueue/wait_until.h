// Bounded real-time wait for a condition another thread makes true; the only real-time wait the
// workqueue tests use. Single-threaded helper.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace kcm::workqueue::testing {

// Polls cond until it holds or `timeout` passes; returns the last value of cond.
inline bool WaitUntil(const std::function<bool()>& cond,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace kcm::workqueue::testing
