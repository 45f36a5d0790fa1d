// The controller tests' harness (controller_test.cc, controller_reaction_test.cc): a scripted
// reconciler, a controller started on a thread of its own, options on a fake clock.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/testing/fake_object.h"
#include "pkg/metrics/metrics.h"
#include "pkg/runtime/controller.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::runtime::harness {

using namespace std::chrono_literals;

using mocks::FakeObject;

inline api::ObjectPtr Obj(const std::string& ns, const std::string& name) {
  return std::make_shared<FakeObject>(ns, name);
}

// Waits in real time (bounded) for a condition another thread makes true.
template <typename F>
inline bool Eventually(F f, std::chrono::milliseconds limit = 5000ms) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return f();
}

inline double CounterValue(const char* name, std::vector<std::string> labels,
                           std::vector<std::string> names) {
  return metrics::CounterVec(name, "", std::move(names)).With(labels).Value();
}

// A ScriptedReconciler's script: the first call fails, every later one is done.
inline Result<ReconcileResult> FailsFirstCall(const Request&, int call) {
  if (call == 1) return Error::Local("Boom", "first try fails");
  return Done();
}

// A reconciler scripted per call: returns results from a list, records calls.
class ScriptedReconciler final : public Reconciler {
 public:
  std::function<Result<ReconcileResult>(const Request&, int call)> script;
  Result<ReconcileResult> Reconcile(const Request& r, std::stop_token) override {
    int n = ++calls;
    {
      std::lock_guard lock(mu);
      seen.push_back(r.Key());
    }
    return script ? script(r, n) : Result<ReconcileResult>(Done());
  }
  // `calls` is counted before the key is recorded, so readers copy `seen` under the lock.
  std::vector<std::string> Seen() {
    std::lock_guard lock(mu);
    return seen;
  }
  std::atomic<int> calls{0};
  std::mutex mu;
  std::vector<std::string> seen;
};

struct Harness {
  explicit Harness(ControllerOptions o, std::shared_ptr<Reconciler> r)
      : ctrl(std::move(o), std::move(r)) {}
  void Run() {
    runner = std::jthread([this](std::stop_token st) { start_status = ctrl.Start(st); });
    ASSERT_TRUE(Eventually([&] { return ctrl.queue() != nullptr; }));
  }
  Controller ctrl;
  Status start_status;
  std::jthread runner;
};

inline ControllerOptions Options(const std::string& name, FakeClock* clock, int workers = 1) {
  ControllerOptions o;
  o.name = name;
  o.clock = clock;
  o.max_concurrent_reconciles = workers;
  return o;
}

}  // namespace kcm::runtime::harness
