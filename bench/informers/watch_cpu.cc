// watch_cpu: the CPU our daemon's watch side costs on its own — what is left of a controller
// manager when its controllers do nothing (docs/benchmarks/deployment-cpu.md). Starts the
// daemon's three informers (pods, ReplicaSets, Deployments) from one SharedInformerFactory on the
// kubeconfig's client (unthrottled: the informers make a handful of requests, so the daemon's
// --kube-api-qps would not matter) with a non-blocking handler per
// informer that enqueues the object's key into a workqueue drained by 5 workers that call Done and
// nothing else (the controllers' handler → queue → worker hand-off, without their syncs and
// writes). Runs until SIGINT or SIGTERM, then prints one line of key=value pairs: CPU (user,
// system) and context switches from the informers' start, and the notifications per kind.
//
// --workers=0 keeps the informers but no queue: the handlers only count, so the figure is the
// watch side up to the handlers, without the hand-off to workers.
// With --raw=true it starts no informer: one thread per kind reads the same three watch streams
// with our client (RestClient::Watch, from the resourceVersion of a one-item pod LIST) and drops
// each frame undecoded — our transport and framing alone, the floor under the informers' figure.
//
// Usage: watch_cpu --kubeconfig=FILE [--content-type=application/json] [--workers=N (5)]
// [--raw=true]. The content type defaults to protobuf, as --kube-api-content-type; ReplicaSets and
// Deployments are watched as JSON either way, as ours. bench/deployment/scale_bench.sh runs it
// beside each side's rollout with WATCH_CPU=1, and with --workers=0 and --raw=true too under
// WATCH_FLOOR=1.
#include <signal.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "bench/lib/bench_client.h"
#include "bench/lib/process_usage.h"
#include "pkg/cache/keys.h"
#include "pkg/client/watch_stream.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/workqueue/queue.h"

namespace {

using namespace std::chrono_literals;

// One kind's queue, its workers and the handler feeding it; with no workers the handler only
// counts.
class Sink {
 public:
  explicit Sink(int workers) {
    for (int i = 0; i < workers; ++i) {
      workers_.emplace_back([this] {
        while (auto key = queue_.Get()) queue_.Done(*key);
      });
    }
  }
  ~Sink() {
    queue_.ShutDown();
    for (auto& w : workers_) w.join();
  }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  kcm::cache::ResourceEventHandlerFuncs Handler() {
    kcm::cache::ResourceEventHandlerFuncs f;
    f.add_func = [this](const kcm::api::ObjectPtr& o, bool) { Enqueue(*o); };
    f.update_func = [this](const kcm::api::ObjectPtr&, const kcm::api::ObjectPtr& o) {
      Enqueue(*o);
    };
    f.delete_func = [this](const kcm::api::ObjectPtr& o) { Enqueue(*o); };
    f.non_blocking = true;
    return f;
  }
  long notifications() const { return notifications_.load(); }

 private:
  void Enqueue(const kcm::api::Object& o) {
    ++notifications_;
    if (!workers_.empty()) queue_.Add(kcm::cache::DeletionHandlingMetaNamespaceKeyFunc(o));
  }

  kcm::workqueue::Queue queue_;
  std::vector<std::thread> workers_;
  std::atomic<long> notifications_{0};
};

// The resourceVersion of the cluster now: a one-item pod LIST's (etcd's revision is global, so
// a watch of any kind from it replays nothing old). "" on an error.
std::string CurrentResourceVersion(kcm::client::RestClient& rest) {
  kcm::client::Request list;
  list.path = "/api/v1/pods";
  list.query = {{"limit", "1"}};
  auto body = rest.Do(list);
  if (!body.ok()) return "";
  // The list's own metadata comes before its items.
  constexpr std::string_view kField = "\"resourceVersion\":\"";
  const std::size_t at = body->find(kField);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + kField.size();
  return body->substr(begin, body->find('"', begin) - begin);
}

// --raw: the three watch streams read and their frames dropped, one thread each, until SIGINT or
// SIGTERM; prints the same line as the informer mode, with frames in place of notifications.
int RunRaw(const std::shared_ptr<kcm::client::RestClient>& rest, const sigset_t& signals) {
  const std::string rv = CurrentResourceVersion(*rest);
  if (rv.empty()) {
    std::fprintf(stderr, "cannot read the current resourceVersion\n");
    return 1;
  }
  struct Kind {
    const char* path;
    std::string accept;
    std::unique_ptr<kcm::client::WatchStream> stream;
    std::atomic<long> frames{0};
  };
  std::array<Kind, 3> kinds{{{"/api/v1/pods", rest->config().content_type, nullptr},
                             {"/apis/apps/v1/replicasets", "application/json", nullptr},
                             {"/apis/apps/v1/deployments", "application/json", nullptr}}};
  for (Kind& kind : kinds) {
    kcm::client::Request watch;
    watch.path = kind.path;
    watch.accept = kind.accept;
    watch.query = {{"watch", "1"}, {"allowWatchBookmarks", "true"}, {"resourceVersion", rv}};
    auto opened = rest->Watch(watch);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s: %s\n", kind.path, opened.error().ToString().c_str());
      return 1;
    }
    kind.stream = std::move(*opened);
  }
  const kcm::bench::ProcessUsage start = kcm::bench::ReadProcessUsage();
  std::vector<std::jthread> readers;
  for (Kind& kind : kinds) {
    readers.emplace_back([&kind] {
      while (true) {
        auto frame = kind.stream->Next();
        if (!frame.ok() || !frame->has_value()) return;
        ++kind.frames;
      }
    });
  }
  std::fprintf(stderr, "watch_cpu: synced\n");
  int sig = 0;
  sigwait(&signals, &sig);
  const kcm::bench::ProcessUsage end = kcm::bench::ReadProcessUsage();
  std::printf(
      "watch_cpu_raw user_s=%.2f system_s=%.2f cpu_s=%.2f context_switches=%ld pod_frames=%ld "
      "replicaset_frames=%ld deployment_frames=%ld\n",
      end.user_s - start.user_s, end.system_s - start.system_s, end.cpu_s() - start.cpu_s(),
      end.context_switches - start.context_switches, kinds[0].frames.load(), kinds[1].frames.load(),
      kinds[2].frames.load());
  std::fflush(stdout);
  for (Kind& kind : kinds) kind.stream->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kubeconfig = kcm::bench::Flag(argc, argv, "kubeconfig", "");
  const std::string content_type =
      kcm::bench::Flag(argc, argv, "content-type", "application/vnd.kubernetes.protobuf");
  // Wait for SIGINT/SIGTERM on this thread; every thread started below inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto rest = kcm::bench::UnthrottledClient(kubeconfig, content_type);
  if (kcm::bench::Flag(argc, argv, "raw", "") == "true") return RunRaw(rest, signals);
  // --concurrent-{replicaset,deployment}-syncs' default.
  const int workers = std::stoi(kcm::bench::Flag(argc, argv, "workers", "5"));
  // Before the factory, so that on every return the factory's destructor has stopped and joined
  // the informers (whose handlers point at the sinks) before the sinks go.
  std::array<Sink, 3> sinks{Sink(workers), Sink(workers), Sink(workers)};
  kcm::informers::SharedInformerFactory factory(rest, 12h);
  if (!factory.Pods().informer->AddEventHandler(sinks[0].Handler()).ok() ||
      !factory.ReplicaSets().informer->AddEventHandler(sinks[1].Handler()).ok() ||
      !factory.Deployments().informer->AddEventHandler(sinks[2].Handler()).ok()) {
    std::fprintf(stderr, "cannot add the handlers\n");
    return 1;
  }
  std::stop_source stop;
  const kcm::bench::ProcessUsage start = kcm::bench::ReadProcessUsage();
  factory.Start(stop.get_token());
  for (const auto& [resource, synced] : factory.WaitForCacheSync(stop.get_token())) {
    if (!synced) {
      std::fprintf(stderr, "%s did not sync\n", resource.c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "watch_cpu: synced\n");
  int sig = 0;
  sigwait(&signals, &sig);
  const kcm::bench::ProcessUsage end = kcm::bench::ReadProcessUsage();
  std::printf(
      "watch_cpu workers=%d user_s=%.2f system_s=%.2f cpu_s=%.2f context_switches=%ld pods=%ld "
      "replicasets=%ld deployments=%ld\n",
      workers, end.user_s - start.user_s, end.system_s - start.system_s,
      end.cpu_s() - start.cpu_s(), end.context_switches - start.context_switches,
      sinks[0].notifications(), sinks[1].notifications(), sinks[2].notifications());
  std::fflush(stdout);
  stop.request_stop();
  factory.Shutdown();
  return 0;
}
