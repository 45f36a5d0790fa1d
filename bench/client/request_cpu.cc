// request_cpu: the client's own CPU cost of one API request. T threads (the controllers' workers)
// each send their share of K requests through one RestClient (QPS limit lifted): a create of a
// small Event, then a GET of it — the shape of the controllers' writes and reads. Prints the
// process's CPU time (user + system, getrusage) per request, so the figure does not depend on how
// fast the API server answers or how loaded the machine is (much).
//
// Usage: request_cpu --kubeconfig=FILE [--namespace=NS] [--count=K] [--threads=T]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/lib/bench_client.h"
#include "pkg/client/resource_client.h"

namespace {

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

std::string EventManifest(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
         R"("},"involvedObject":{"kind":"ReplicaSet","namespace":"bench-client","name":"rs",)"
         R"("apiVersion":"apps/v1"},"reason":"SuccessfulCreate","message":"Created pod: )" +
         name +
         R"(","source":{"component":"replicaset-controller"},"type":"Normal",)"
         R"("count":1,"eventTime":null})";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ns = kcm::bench::Flag(argc, argv, "namespace", "bench-client");
  const int count = std::stoi(kcm::bench::Flag(argc, argv, "count", "2000"));
  const int threads = std::stoi(kcm::bench::Flag(argc, argv, "threads", "10"));
  auto rest = kcm::bench::UnthrottledClient(kcm::bench::Flag(argc, argv, "kubeconfig", ""));
  kcm::bench::EnsureNamespace(rest, ns);
  kcm::client::ResourceClient events(rest, {"", "v1", "events"}, true);
  const std::string run =
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::atomic<int> next{0}, failed{0};
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next.fetch_add(2)) < count;) {
        const std::string name = "e" + run + "-" + std::to_string(i);
        if (!events.Create(ns, EventManifest(name)).ok()) failed.fetch_add(1);
        if (!events.Get(ns, name).ok()) failed.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  const double cpu = CpuSeconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("requests %d threads %d failed %d wall %.2f s cpu %.3f s cpu/request %.1f us\n",
              count, threads, failed.load(), wall, cpu, 1e6 * cpu / count);
  return failed.load() == 0 ? 0 : 1;
}
