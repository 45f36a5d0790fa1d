// request_cpu: the client's own CPU cost of one API request. T threads (the controllers' workers)
// each send their share of K requests through one RestClient (QPS limit lifted): a create of a
// small Event, then a GET of it — the shape of the controllers' writes and reads. Prints the
// process's CPU time (user + system, getrusage) per request, so the figure does not depend on how
// fast the API server answers or how loaded the machine is (much).
//
// --transport picks what carries the requests (the same requests, headers and bodies each time):
//   rest       RestClient + ResourceClient over the Transport: ours, as the controllers use it
//              (the default);
//   transport  Transport::RoundTrip alone, the requests built here: what libcurl and its
//              configuration cost without our request building (`curl` is the same mode).
// bench/client/request_cpu.sh runs them alternating, beside client-go (bench/client/go).
// --transport=watch instead reads one watch of the namespace's Events to its end (a server that
// ends it, bench/client/stub) and prints the CPU per frame: the watch read path (transport,
// frame scanner) alone.
//
// Usage: request_cpu --kubeconfig=FILE [--namespace=NS] [--count=K] [--threads=T]
//                    [--transport=rest|transport|watch]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/lib/bench_client.h"
#include "bench/lib/process_usage.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/transport.h"
#include "pkg/client/user_agent.h"
#include "pkg/client/watch_stream.h"

namespace {

using kcm::bench::CpuSeconds;

std::string EventManifest(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
         R"("},"involvedObject":{"kind":"ReplicaSet","namespace":"bench-client","name":"rs",)"
         R"("apiVersion":"apps/v1"},"reason":"SuccessfulCreate","message":"Created pod: )" +
         name +
         R"(","source":{"component":"replicaset-controller"},"type":"Normal",)"
         R"("count":1,"eventTime":null})";
}

// The headers RestClient sends on these requests (the transport adds Host, Content-Length and
// Accept-Encoding).
std::vector<std::pair<std::string, std::string>> Headers(const kcm::client::RestConfig& config,
                                                         bool with_body) {
  std::vector<std::pair<std::string, std::string>> h;
  h.emplace_back("Accept", "application/json");
  h.emplace_back("User-Agent", kcm::client::DefaultUserAgent());
  if (with_body) h.emplace_back("Content-Type", "application/json");
  if (!config.bearer_token.empty())
    h.emplace_back("Authorization", "Bearer " + config.bearer_token);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ns = kcm::bench::Flag(argc, argv, "namespace", "bench-client");
  const int count = std::stoi(kcm::bench::Flag(argc, argv, "count", "2000"));
  const int threads = std::stoi(kcm::bench::Flag(argc, argv, "threads", "10"));
  const std::string mode = kcm::bench::Flag(argc, argv, "transport", "rest");
  const std::string kubeconfig = kcm::bench::Flag(argc, argv, "kubeconfig", "");
  auto rest = kcm::bench::UnthrottledClient(kubeconfig);
  kcm::bench::EnsureNamespace(rest, ns);
  auto config = kcm::client::BuildConfigFromFlags("", kubeconfig);
  if (!config.ok()) return 1;
  const std::string collection = "/api/v1/namespaces/" + ns + "/events";
  if (mode == "watch") {
    kcm::client::ResourceClient events(rest, {"", "v1", "events"}, true);
    const double cpu0 = CpuSeconds();
    auto w = events.Watch(ns, {});
    if (!w.ok()) {
      std::fprintf(stderr, "%s\n", w.error().ToString().c_str());
      return 1;
    }
    std::size_t frames = 0;
    std::size_t bytes = 0;
    for (;;) {
      auto f = (*w)->Next();
      if (!f.ok()) {
        std::fprintf(stderr, "%s\n", f.error().ToString().c_str());
        return 1;
      }
      if (!f->has_value()) break;
      ++frames;
      bytes += (*f)->size();
    }
    const double cpu = CpuSeconds() - cpu0;
    std::printf("frames %zu bytes %zu cpu %.3f s cpu/request %.1f us (watch, per frame)\n", frames,
                bytes, cpu, frames == 0 ? 0.0 : 1e6 * cpu / static_cast<double>(frames));
    return frames == 0 ? 1 : 0;
  }
  const auto post_headers = Headers(*config, true);
  const auto get_headers = Headers(*config, false);

  // One create + GET pair by the chosen path; false on any failure. `worker` is per thread.
  using Pair = std::function<int(const std::string& name, const std::string& body)>;
  std::function<Pair()> make_worker;
  kcm::client::ResourceClient events(rest, {"", "v1", "events"}, true);
  std::shared_ptr<kcm::client::Transport> transport;
  if (mode == "rest") {
    make_worker = [&]() -> Pair {
      return [&](const std::string& name, const std::string& body) {
        return int{!events.Create(ns, body).ok()} + int{!events.Get(ns, name).ok()};
      };
    };
  } else if (mode == "transport" || mode == "curl") {
    transport = *kcm::client::Transport::Create(*config);
    make_worker = [&]() -> Pair {
      return [&](const std::string& name, const std::string& body) {
        kcm::client::HttpRequest post;
        post.method = "POST";
        post.url = config->host + collection;
        post.headers = post_headers;
        post.body = body;
        auto created = transport->RoundTrip(post);
        kcm::client::HttpRequest get;
        get.url = config->host + collection + "/" + name;
        get.headers = get_headers;
        auto got = transport->RoundTrip(get);
        return int{!created.ok() || created->status != 201} + int{!got.ok() || got->status != 200};
      };
    };
  } else {
    std::fprintf(stderr, "--transport: rest, transport or watch\n");
    return 2;
  }
  const std::string run =
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::atomic<int> next{0}, failed{0};
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      const Pair pair = make_worker();
      for (int i; (i = next.fetch_add(2)) < count;) {
        const std::string name = "e" + run + "-" + std::to_string(i);
        failed.fetch_add(pair(name, EventManifest(name)));
      }
    });
  }
  for (auto& th : pool) th.join();
  const double cpu = CpuSeconds() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("requests %d threads %d failed %d wall %.2f s cpu %.3f s cpu/request %.1f us (%s)\n",
              count, threads, failed.load(), wall, cpu, 1e6 * cpu / count, mode.c_str());
  return failed.load() == 0 ? 0 : 1;
}
