// pod_cache_rss: what one pod informer costs against a real API server (P2, P6, P8). Starts
// SharedInformerFactory's pod informer, waits for the initial sync, and prints one line of
// key=value pairs: sync time, RSS before and after (VmRSS), bytes per cached pod, and — with
// --relist — the peak RSS (VmHWM, reset just before) of a relist forced by a synthetic 410
// Expired on the open watch, the reflector's ordinary path after an etcd compaction.
// bench/informers/go/main.go prints the same keys for client-go; hack/bench-informers.sh runs both.
//
// Usage: pod_cache_rss --kubeconfig=FILE [--namespace=NS] [--expect=N] [--relist=0|1]
//                      [--watch-list=0|1]
//                      [--content-type=application/vnd.kubernetes.protobuf|application/json]
//                      [--phases=1] [--consistent-pages=N] [--disable-compression=1]
// --phases=1 adds when the initial list began, delivered its first and last item and returned
// (seconds after Start), so the sync splits into request → first item → transfer and decode →
// Replace, queue drain and the wait's wake-up. --consistent-pages=N turns the reflector's RV="0"
// list (served whole from the watch cache, limit ignored) into RV="" pages of N: a consistent
// paged LIST, to compare with. --disable-compression=1: no Accept-Encoding: gzip
// (RestConfig::disable_compression), the answer comes as sent, uncompressed.
// cpu_s is the process's CPU time (user + system) from Start to the sync.
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "bench/lib/bench_client.h"
#include "bench/lib/process_usage.h"
#include "pkg/client/resource_client.h"
#include "pkg/informers/shared_informer_factory.h"

namespace {

using namespace std::chrono_literals;
using kcm::Result;

long StatusKB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

// VmHWM starts again from the current RSS (Linux: clear_refs 5).
void ResetPeak() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

// Forwards a ListerWatcher; Inject() ends the open watch with an ERROR event carrying 410
// Expired, exactly what the API server sends when the watch's resourceVersion was compacted.
class InjectingListerWatcher final : public kcm::cache::ListerWatcher {
 public:
  explicit InjectingListerWatcher(std::shared_ptr<kcm::cache::ListerWatcher> inner)
      : inner_(std::move(inner)) {}

  Result<kcm::api::ObjectList> List(const kcm::api::ListOptions& options) override {
    return List(options, {});
  }
  // Forwarded with on_item, as the reflector calls it: the production adapter applies it while
  // the list arrives (ReuseUnchanged), the base class's default only afterwards.
  Result<kcm::api::ObjectList> List(const kcm::api::ListOptions& options,
                                    const kcm::cache::ListItemFunc& on_item) override {
    kcm::api::ListOptions opts = options;
    if (consistent_pages_ > 0 && opts.resource_version == "0" && opts.continue_token.empty()) {
      opts.resource_version.clear();
      opts.limit = consistent_pages_;
    }
    const bool first_list = lists_done_ == 0;
    if (first_list && !list_start_) list_start_ = Now();
    auto r = inner_->List(opts, [&](kcm::api::ObjectPtr obj) {
      if (first_list && obj) {
        if (!first_item_) first_item_ = Now();
        last_item_ = Now();
      }
      return on_item ? on_item(std::move(obj)) : obj;
    });
    // Count whole LISTs: the last page (or an error) ends one. Streaming lists are counted at
    // their initial-events-end bookmark (Injecting::Next).
    if (!r.ok() || r->continue_token.empty()) {
      if (first_list) list_done_ = Now();
      ++lists_done_;
    }
    return r;
  }

  Result<std::unique_ptr<kcm::cache::WatchInterface>> Watch(
      const kcm::api::ListOptions& options) override {
    auto w = inner_->Watch(options);
    if (!w.ok()) return w;
    auto own = std::make_unique<Injecting>(std::move(*w), this);
    std::lock_guard lock(mu_);
    current_ = own.get();
    return std::unique_ptr<kcm::cache::WatchInterface>(std::move(own));
  }

  void set_consistent_pages(int64_t n) { consistent_pages_ = n; }
  // Phases of the first list, seconds after `start`; -1 where not seen. Read after the sync.
  std::string Phases(std::chrono::steady_clock::time_point start) const {
    auto at = [&](const std::optional<std::chrono::steady_clock::time_point>& t) {
      return t ? std::chrono::duration<double>(*t - start).count() : -1.0;
    };
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  " list_start_s=%.3f first_item_s=%.3f last_item_s=%.3f list_done_s=%.3f",
                  at(list_start_), at(first_item_), at(last_item_), at(list_done_));
    return buf;
  }

  void Inject() {
    std::lock_guard lock(mu_);
    inject_ = true;
    if (current_) current_->Stop();
  }
  long lists_done() const { return lists_done_; }

 private:
  class Injecting final : public kcm::cache::WatchInterface {
   public:
    Injecting(std::unique_ptr<kcm::cache::WatchInterface> w, InjectingListerWatcher* owner)
        : w_(std::move(w)), owner_(owner) {}
    ~Injecting() override {
      std::lock_guard lock(owner_->mu_);
      if (owner_->current_ == this) owner_->current_ = nullptr;
    }
    Result<std::optional<kcm::api::WatchEvent>> Next() override {
      auto e = w_->Next();
      if (e.ok() && e->has_value() && (*e)->type == kcm::api::WatchEventType::kBookmark &&
          (*e)->initial_events_end) {
        ++owner_->lists_done_;  // a streaming list (--watch-list=1) is complete
      }
      std::lock_guard lock(owner_->mu_);
      if (owner_->inject_) {
        owner_->inject_ = false;
        kcm::api::WatchEvent gone;
        gone.type = kcm::api::WatchEventType::kError;
        gone.error = kcm::Error{410, "Expired", "injected: too old resource version", {}};
        return std::optional<kcm::api::WatchEvent>(std::move(gone));
      }
      return e;
    }
    void Stop() override { w_->Stop(); }

   private:
    std::unique_ptr<kcm::cache::WatchInterface> w_;
    InjectingListerWatcher* owner_;
  };

  static std::chrono::steady_clock::time_point Now() { return std::chrono::steady_clock::now(); }

  std::shared_ptr<kcm::cache::ListerWatcher> inner_;
  int64_t consistent_pages_ = 0;
  // Written by the reflector thread before the sync, read after it.
  std::optional<std::chrono::steady_clock::time_point> list_start_, first_item_, last_item_,
      list_done_;
  std::atomic<long> lists_done_{0};
  std::mutex mu_;
  bool inject_ = false;
  Injecting* current_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string kubeconfig = kcm::bench::Flag(argc, argv, "kubeconfig", "");
  const std::string ns = kcm::bench::Flag(argc, argv, "namespace", "");
  const long expect = std::stol(kcm::bench::Flag(argc, argv, "expect", "0"));
  const bool relist = kcm::bench::Flag(argc, argv, "relist", "1") == "1";
  const bool watch_list = kcm::bench::Flag(argc, argv, "watch-list", "0") == "1";
  const bool phases = kcm::bench::Flag(argc, argv, "phases", "0") == "1";
  const int64_t consistent_pages =
      std::stoll(kcm::bench::Flag(argc, argv, "consistent-pages", "0"));
  // As --kube-api-content-type: protobuf by default (upstream's and client-go's default for pods).
  const std::string content_type =
      kcm::bench::Flag(argc, argv, "content-type", "application/vnd.kubernetes.protobuf");

  const bool disable_compression = kcm::bench::Flag(argc, argv, "disable-compression", "0") == "1";
  auto rest = kcm::bench::UnthrottledClient(
      kubeconfig, content_type,
      [&](kcm::client::RestConfig& c) { c.disable_compression = disable_compression; });
  const long rss_before = StatusKB("VmRSS");
  const struct mallinfo2 heap_before = mallinfo2();

  std::shared_ptr<InjectingListerWatcher> lw;
  kcm::informers::SharedInformerFactoryOptions options;
  options.namespace_ = ns;
  options.use_watch_list = watch_list;
  auto client = rest;
  kcm::informers::SharedInformerFactory factory(
      [&lw, client, ns, consistent_pages](const kcm::informers::ResourceType& r,
                                          const kcm::api::ShardSelector*) {
        auto rc = std::make_shared<kcm::client::ResourceClient>(client, r.gvr, r.namespaced);
        lw = std::make_shared<InjectingListerWatcher>(
            std::make_shared<kcm::informers::ResourceListerWatcher>(rc, ns, *r.codec));
        lw->set_consistent_pages(consistent_pages);
        return lw;
      },
      0s, options);
  auto pods = factory.Pods();
  std::stop_source stop;
  // When the indexer had the whole initial list: the watermark moves with the list's last item.
  std::atomic<double> applied_s{-1};
  const auto start = std::chrono::steady_clock::now();
  pods.informer->AddStoreSyncListener([&] {
    if (applied_s < 0 && pods.informer->HasSynced()) {
      applied_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  });
  const double cpu_start = kcm::bench::CpuSeconds();
  factory.Start(stop.get_token());
  if (!factory.WaitForCacheSync(stop.get_token())["pods"]) {
    std::fprintf(stderr, "cache did not sync\n");
    return 1;
  }
  const double sync_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_s = kcm::bench::CpuSeconds() - cpu_start;
  const long hwm_sync = StatusKB("VmHWM");
  const size_t cached = pods.informer->GetIndexer()->ListKeys().size();
  std::this_thread::sleep_for(2s);
  const long rss_steady = StatusKB("VmRSS");
  // glibc's own count, every arena: bytes in allocated chunks (live objects) and bytes in free
  // chunks it holds (the holes) — what the RSS over the live heap goes to. Meaningless when
  // another allocator is preloaded (glibc's arenas are then unused).
  const struct mallinfo2 heap_steady = mallinfo2();
  // What is live, as opposed to what glibc keeps of freed LIST buffers and deltas.
  malloc_trim(0);
  const long rss_trimmed = StatusKB("VmRSS");
  const long n = expect > 0 ? expect : static_cast<long>(cached);
  std::printf(
      "impl=kcm format=%s accept_encoding=%s pods=%zu sync_s=%.2f cpu_s=%.2f rss_before_kb=%ld "
      "hwm_sync_kb=%ld rss_steady_kb=%ld "
      "bytes_per_pod=%.0f rss_trimmed_kb=%ld bytes_per_pod_trimmed=%.0f heap_live_per_pod=%.0f "
      "heap_free_kb=%zu",
      kcm::client::IsProtobufContentType(content_type) ? "protobuf" : "json",
      disable_compression ? "identity" : "gzip", cached, sync_s, cpu_s, rss_before, hwm_sync,
      rss_steady,
      static_cast<double>(rss_steady - rss_before) * 1024 / static_cast<double>(n > 0 ? n : 1),
      rss_trimmed,
      static_cast<double>(rss_trimmed - rss_before) * 1024 / static_cast<double>(n > 0 ? n : 1),
      static_cast<double>((heap_steady.uordblks + heap_steady.hblkhd) -
                          (heap_before.uordblks + heap_before.hblkhd)) /
          static_cast<double>(n > 0 ? n : 1),
      heap_steady.fordblks / 1024);
  if (phases) std::printf("%s applied_s=%.3f", lw->Phases(start).c_str(), applied_s.load());

  if (relist) {
    ResetPeak();
    const long lists_before = lw->lists_done();
    const auto relist_start = std::chrono::steady_clock::now();
    lw->Inject();
    while (lw->lists_done() == lists_before) {
      if (std::chrono::steady_clock::now() - relist_start > 5min) {
        std::printf(" relist=timeout\n");
        return 1;
      }
      std::this_thread::sleep_for(10ms);
    }
    const double list_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - relist_start).count();
    // Give the informer time to apply the Replace (every item is re-delivered).
    std::this_thread::sleep_for(3s);
    const long hwm_relist = StatusKB("VmHWM");
    std::printf(" relist_list_s=%.2f hwm_relist_kb=%ld relist_peak_over_steady=%.3f", list_s,
                hwm_relist, static_cast<double>(hwm_relist) / static_cast<double>(rss_steady));
  }
  std::printf("\n");
  std::fflush(stdout);
  factory.Shutdown();
  return 0;
}
