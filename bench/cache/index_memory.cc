// index_memory: what a namespace index costs over N pods of one namespace, in heap bytes per
// object (malloc's in-use bytes, mallinfo2) and in time per single Delete + Add once the store
// holds them — the trade of the index key set's layout (docs/design/cache-memory.md).
// Prints the store without and with the index, twice (the first pass also pays for one-time
// allocations); the difference is the index.
//
// Usage: index_memory [--count=N]   (default 50,000)
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/lib/flag.h"
#include "pkg/api/codec.h"
#include "pkg/cache/index.h"
#include "pkg/cache/thread_safe_store.h"

namespace {

size_t HeapInUse() {
  return mallinfo2().uordblks;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = std::stoi(kcm::bench::Flag(argc, argv, "count", "50000"));
  kcm::api::Decoder decoder;
  std::vector<kcm::api::ObjectPtr> pods;
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) {
    char name[40];
    // Names in hash order, as a ReplicaSet's pods get them (random suffixes).
    std::snprintf(name, sizeof name, "web-%08x-%05d", static_cast<unsigned>(i * 2654435761u), i);
    const std::string json = R"({"kind":"Pod","metadata":{"name":")" + std::string(name) +
                             R"(","namespace":"bench","uid":"0b7b1b5e-4d43-4f0e-9d4f-)" +
                             std::to_string(100000000000 + i) + R"("}})";
    auto pod = kcm::api::PodCodec().decode(decoder, kcm::api::JsonInput::FromString(json));
    if (!pod.ok()) {
      std::fprintf(stderr, "%s\n", pod.error().ToString().c_str());
      return 1;
    }
    pods.push_back(*pod);
    keys.push_back(std::string("bench/") + name);
  }
  for (int pass = 0; pass < 4; ++pass) {
    const int with_index = pass % 2;
    kcm::cache::Indexers indexers;
    if (with_index) indexers[kcm::cache::kNamespaceIndex] = kcm::cache::MetaNamespaceIndexFunc;
    const size_t before = HeapInUse();
    auto store = std::make_unique<kcm::cache::ThreadSafeStore>(indexers);
    for (int i = 0; i < n; ++i) store->Add(keys[i], pods[i]);
    const size_t after = HeapInUse();
    const int churn = n < 10000 ? n : 10000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < churn; ++i) {
      store->Delete(keys[i]);
      store->Add(keys[i], pods[i]);
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
        (2.0 * churn);
    std::printf(
        "objects=%d namespace_index=%d store_heap_per_object=%.1f B delete_or_add=%.2f us\n", n,
        with_index, static_cast<double>(after - before) / n, us);
  }
}
