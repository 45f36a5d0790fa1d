// Workqueue throughput: one producer adding distinct "ns/name" keys while N workers Get and Done
// them, as a controller's informer handlers and workers do. Reports items/s.
#include <benchmark/benchmark.h>

#include <string>
#include <thread>
#include <vector>

#include "pkg/workqueue/queue.h"
#include "pkg/workqueue/rate_limiting_queue.h"

namespace kcm::workqueue {
namespace {

constexpr int kKeysPerIteration = 10000;

std::vector<std::string> MakeKeys() {
  std::vector<std::string> keys;
  keys.reserve(kKeysPerIteration);
  for (int i = 0; i < kKeysPerIteration; ++i) keys.push_back("default/pod-" + std::to_string(i));
  return keys;
}

// Args: workers, metrics (0 = unnamed queue, 1 = named queue recording workqueue_*).
void BM_AddGetDone(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  const bool with_metrics = state.range(1) != 0;
  const std::vector<std::string> keys = MakeKeys();
  for (auto _ : state) {
    RateLimitingQueue q({.name = with_metrics ? "bench" : ""});
    std::vector<std::jthread> pool;
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back([&q] {
        while (auto key = q.Get()) q.Done(*key);
      });
    }
    for (const std::string& key : keys) q.Add(key);
    q.ShutDown();  // Workers drain what is left, then Get reports shutdown.
    pool.clear();  // Joins.
  }
  state.SetItemsProcessed(state.iterations() * kKeysPerIteration);
}
BENCHMARK(BM_AddGetDone)
    ->ArgNames({"workers", "metrics"})
    ->ArgsProduct({{1, 5}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The uncontended cost of one Add + Get + Done on the calling thread.
void BM_AddGetDoneSingleThread(benchmark::State& state) {
  const bool with_metrics = state.range(0) != 0;
  Queue q({.name = with_metrics ? "bench-single" : ""});
  const std::vector<std::string> keys = MakeKeys();
  size_t i = 0;
  for (auto _ : state) {
    q.Add(keys[i]);
    auto key = q.Get();
    q.Done(*key);
    i = (i + 1) % keys.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddGetDoneSingleThread)->ArgName("metrics")->Arg(0)->Arg(1);

// An Add that is deduplicated (the key is already waiting): the common case when an informer
// fires several events for one object before a worker gets to it.
void BM_AddDeduplicated(benchmark::State& state) {
  Queue q({.name = "bench-dedup"});
  q.Add("default/pod-0");
  for (auto _ : state) q.Add("default/pod-0");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AddDeduplicated);

}  // namespace
}  // namespace kcm::workqueue

BENCHMARK_MAIN();
