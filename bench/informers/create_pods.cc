// create_pods: fills a namespace with N small pods through the project's own client, QPS limit
// lifted, on several threads — the setup for the informer benchmarks. The pods name a scheduler
// that does not exist and a nodeSelector no node matches, so kube-scheduler and KWOK stay idle.
// Existing pods are kept (AlreadyExists counts as done), so a second run only tops up.
//
// Usage: create_pods --kubeconfig=FILE --namespace=NS --count=N [--threads=32] [--prefix=p]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/lib/bench_client.h"
#include "pkg/client/resource_client.h"

namespace {

std::string PodManifest(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":"bench-informers"}},"spec":{"schedulerName":"kcm-nobody",)"
         R"("nodeSelector":{"kcm-bench":"no-such-node"},)"
         R"("containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}})";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ns = kcm::bench::Flag(argc, argv, "namespace", "bench-informers");
  const int count = std::stoi(kcm::bench::Flag(argc, argv, "count", "10000"));
  const int threads = std::stoi(kcm::bench::Flag(argc, argv, "threads", "32"));
  const std::string prefix = kcm::bench::Flag(argc, argv, "prefix", "p");
  auto rest = kcm::bench::UnthrottledClient(kcm::bench::Flag(argc, argv, "kubeconfig", ""));
  kcm::bench::EnsureNamespace(rest, ns);
  kcm::client::ResourceClient pods(rest, {"", "v1", "pods"}, true);
  std::atomic<int> next{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        const std::string name = prefix + "-" + std::to_string(i);
        bool done = false;
        for (int attempt = 0; attempt < 8 && !done; ++attempt) {
          auto r = pods.Create(ns, PodManifest(name));
          done = r.ok() || kcm::errors::IsAlreadyExists(r.error());
          if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
        }
        if (!done) ++failed;
      }
    });
  }
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("created=%d failed=%d seconds=%.1f pods_per_s=%.0f\n", count - failed.load(),
              failed.load(), s, (count - failed.load()) / s);
  return failed.load() == 0 ? 0 : 1;
}
