#include "pkg/cache/reflector.h"

#include <atomic>
#include <thread>
#include <vector>

#include "pkg/util/klog.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;

ReflectorOptions WithDefaults(ReflectorOptions options) {
  if (options.clock == nullptr) {
    options.clock = &RealClock::Get();
  }
  if (!options.rand) {
    options.rand = NewRandFunc();
  }
  return options;
}

Error StopRequested() {
  return Error::Local(errors::reason::kStopRequested, "stop requested");
}

// Items of a list taken by the store while the list arrives are handed over this many at a time:
// one lock and one wake-up of the consumer per batch rather than per item.
constexpr size_t kListBatch = 256;

// Where the items of one Reflector::List go. When the store takes the list as it arrives
// (ReflectorStore::BeginList: the first list into an empty informer), each item is handed to it
// in batches and not kept; otherwise each is swapped for the store's equal object, if any
// (ReuseUnchanged), and kept for one Replace at the end.
class ListIntake {
 public:
  explicit ListIntake(ReflectorStore& store) : store_(store), taking_(store.BeginList()) {}
  ~ListIntake() { Abort(); }
  ListIntake(const ListIntake&) = delete;
  ListIntake& operator=(const ListIntake&) = delete;

  bool taking() const { return taking_; }

  // The ListItemFunc. null: a new answer begins (a retried request; the decoder says so before
  // its first item).
  api::ObjectPtr Take(api::ObjectPtr obj) {
    if (!obj) {
      Restart();
      return nullptr;
    }
    if (!taking_) return store_.ReuseUnchanged(std::move(obj));
    if (!error_.ok()) return nullptr;
    batch_.push_back(std::move(obj));
    if (batch_.size() > kListBatch) Flush();
    return nullptr;
  }

  // What the items received so far belong to is not the list that will complete: a retried
  // request, the pager's full list after an expired continue token, the reflector's own retry at
  // the latest resourceVersion. If none reached the store yet, start over; else give up taking
  // (the store keeps them, and the whole new list goes to Replace).
  void Restart() {
    batch_.clear();
    error_ = OkStatus();
    if (taking_ && handed_over_) Abort();
  }

  // The list came whole: hands over the last batch with its end. Only while taking().
  Status Finish(const std::string& resource_version) {
    if (!error_.ok()) return error_;
    Status s = store_.EndList(batch_, resource_version);
    if (!s.ok()) {
      error_ = s;
      return s;
    }
    taking_ = false;
    return OkStatus();
  }

  void Abort() {
    if (!taking_) return;
    taking_ = false;
    batch_.clear();
    store_.AbortList();
  }

 private:
  // Hands over all but the newest item: the list's last item always goes with EndList.
  void Flush() {
    if (batch_.size() < 2 || !error_.ok()) return;
    handed_over_ = true;
    api::ObjectPtr newest = std::move(batch_.back());
    batch_.pop_back();
    // The first error (a transform's) is kept and returned by Finish; later items are dropped,
    // as Replace returns at its first failing item.
    error_ = store_.AddListItems(batch_);
    batch_.push_back(std::move(newest));
  }

  ReflectorStore& store_;
  bool taking_;
  bool handed_over_ = false;
  std::vector<api::ObjectPtr> batch_;
  Status error_ = OkStatus();
};

// Forwards to the reflector's ListerWatcher, telling the intake when the pager starts over: a
// request without a continue token after the first is a new snapshot.
class RestartNotingListerWatcher final : public ListerWatcher {
 public:
  RestartNotingListerWatcher(ListerWatcher& inner, ListIntake& intake)
      : inner_(inner), intake_(intake) {}
  Result<api::ObjectList> List(const api::ListOptions& options) override {
    return List(options, {});
  }
  Result<api::ObjectList> List(const api::ListOptions& options,
                               const ListItemFunc& on_item) override {
    if (!first_ && options.continue_token.empty()) intake_.Restart();
    first_ = false;
    return inner_.List(options, on_item);
  }
  Result<std::unique_ptr<WatchInterface>> Watch(const api::ListOptions& options) override {
    return inner_.Watch(options);
  }

 private:
  ListerWatcher& inner_;
  ListIntake& intake_;
  bool first_ = true;
};

}  // namespace

bool IsWatchErrorRetriable(const Error& err) {
  return errors::IsConnectionRefused(err) || errors::IsTooManyRequests(err);
}

bool IsExpiredOrGone(const Error& err) {
  return errors::IsResourceExpired(err) || errors::IsGone(err);
}

bool IsWatchStreamBroken(const Error& err) {
  return errors::IsClientTimeout(err) || errors::IsConnectionReset(err);
}

Reflector::Reflector(std::shared_ptr<ListerWatcher> lister_watcher,
                     std::shared_ptr<ReflectorStore> store, ReflectorOptions options)
    : lister_watcher_(std::move(lister_watcher)),
      store_(std::move(store)),
      options_(WithDefaults(std::move(options))),
      clock_(*options_.clock),
      backoff_(options_.backoff, clock_, options_.rand) {}

void Reflector::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    Status s = ListAndWatch(stop);
    if (!s.ok() && !stop.stop_requested()) {
      KLOG_WARNINGS("ListAndWatch failed", "reflector", options_.name, "err", s.error().ToString());
    }
    if (!clock_.SleepFor(backoff_.Next(), stop)) {
      return;
    }
  }
}

Status Reflector::ListAndWatch(std::stop_token stop) {
  std::unique_ptr<WatchInterface> w;
  bool fallback_to_list = !options_.use_watch_list;
  if (options_.use_watch_list) {
    Result<std::unique_ptr<WatchInterface>> streamed = WatchList(stop);
    if (stop.stop_requested()) {
      return OkStatus();
    }
    if (!streamed.ok()) {
      // Making progress with LIST beats waiting forever on a server that cannot stream.
      KLOG_WARNINGS("Streaming list failed, falling back to LIST", "reflector", options_.name,
                    "err", streamed.error().ToString());
      fallback_to_list = true;
    } else {
      w = std::move(streamed).value();
    }
  }
  if (fallback_to_list) {
    if (Status s = List(stop); !s.ok()) {
      return s;
    }
  }
  return WatchWithResync(std::move(w), stop);
}

Status Reflector::List(std::stop_token stop) {
  api::ListOptions options;
  options.resource_version = RelistResourceVersion();
  int64_t page_size = options_.page_size;
  if (!paginated_result_ && !options.resource_version.empty() && options.resource_version != "0") {
    // A specific RV can be served from the watch cache only when unpaginated; that spares etcd a
    // thundering herd of relists. RV="0" keeps the limit: the watch cache ignores it anyway, and
    // without a watch cache paging is what protects the server.
    page_size = 0;
  }
  // The first list into an empty informer is queued as it arrives, so the informer applies it
  // while the rest is on the wire (DeltaFIFO::BeginList). Any other list is kept whole for
  // Replace; its unchanged items are swapped for the objects the store holds as they are
  // decoded, so a relist costs the changed items only, not a second copy of the cache.
  ListIntake intake(*store_);
  RestartNotingListerWatcher lw(*lister_watcher_, intake);
  const ListItemFunc on_item = [&intake](api::ObjectPtr obj) {
    return intake.Take(std::move(obj));
  };
  Result<PagedList> list = ListAllPages(lw, options, page_size, stop, on_item);
  if (!list.ok() &&
      (IsExpiredOrGone(list.error()) || errors::IsTooLargeResourceVersion(list.error()))) {
    // The RV we asked for is gone or not there yet: relist from the latest state right away.
    SetResourceVersionUnavailable(true);
    api::ListOptions latest;
    latest.resource_version = RelistResourceVersion();
    intake.Restart();
    RestartNotingListerWatcher retry_lw(*lister_watcher_, intake);
    list = ListAllPages(retry_lw, latest, page_size, stop, on_item);
  }
  if (!list.ok()) {
    // What the store took of this list stays; client-go applies nothing of a failed list
    // (docs/design/list-streaming.md, "Initial list as it arrives", says why that is not visible).
    intake.Abort();
    return list.error();
  }
  // Only an RV="0" list tells whether the watch cache serves this resource; a later RV="" list is
  // paginated by etcd even when the watch cache exists.
  if (options.resource_version == "0" && list->paginated) {
    paginated_result_ = true;
  }
  SetResourceVersionUnavailable(false);
  if (intake.taking()) {
    // Items a ListerWatcher returned rather than passed to on_item go the same way.
    for (api::ObjectPtr& item : list->items) intake.Take(std::move(item));
    if (Status s = intake.Finish(list->resource_version); !s.ok()) {
      return s;
    }
  } else if (Status s = store_->Replace(std::move(list->items), list->resource_version); !s.ok()) {
    return s;
  }
  SetLastSyncResourceVersion(list->resource_version);
  return OkStatus();
}

Result<std::unique_ptr<WatchInterface>> Reflector::WatchList(std::stop_token stop) {
  while (true) {
    if (stop.stop_requested()) {
      return std::unique_ptr<WatchInterface>();
    }
    // The initial events go to a private store: the real store is a queue whose content cannot be
    // compared with the stream, so it gets one Replace at the end.
    std::shared_ptr<Store> temporary = NewStore(DeletionHandlingMetaNamespaceKeyFunc);
    std::string resource_version;
    api::ListOptions options;
    options.resource_version = RewatchResourceVersion();
    options.resource_version_match = "NotOlderThan";
    options.send_initial_events = true;
    options.allow_watch_bookmarks = true;
    options.timeout_seconds = WatchTimeoutSeconds();

    Result<std::unique_ptr<WatchInterface>> opened = lister_watcher_->Watch(options);
    if (!opened.ok()) {
      if (RetryWatchListAfter(opened.error(), stop)) {
        continue;
      }
      return opened.error();
    }
    std::unique_ptr<WatchInterface> w = std::move(opened).value();

    // A server that ignores sendInitialEvents never sends the end bookmark; do not hang on it.
    std::atomic<bool> timed_out{false};
    std::jthread timer([&](std::stop_token own) {
      if (clock_.SleepFor(options_.watch_list_timeout, own)) {
        timed_out = true;
        w->Stop();
      }
    });
    Result<bool> ended = HandleWatch(*w, *temporary, stop, /*exit_on_initial_events_end=*/true,
                                     [&](const std::string& rv) { resource_version = rv; });
    timer.request_stop();
    timer.join();

    if (stop.stop_requested()) {
      w->Stop();
      return std::unique_ptr<WatchInterface>();
    }
    if (!ended.ok()) {
      w->Stop();
      if (RetryWatchListAfter(ended.error(), stop)) {
        continue;
      }
      return ended.error();
    }
    if (!*ended) {
      w->Stop();
      const std::string what = "the watch ended before the initial-events-end bookmark";
      return timed_out ? Error::Local("WatchListTimeout", what)
                       : Error::Local("WatchListIncomplete", what);
    }
    SetResourceVersionUnavailable(false);
    if (Status s = store_->Replace(temporary->List(), resource_version); !s.ok()) {
      w->Stop();
      return s.error();
    }
    SetLastSyncResourceVersion(resource_version);
    return w;
  }
}

bool Reflector::RetryWatchListAfter(const Error& err, std::stop_token stop) {
  if (IsWatchErrorRetriable(err)) {
    return clock_.SleepFor(backoff_.Next(), stop);
  }
  if (IsExpiredOrGone(err) || errors::IsTooLargeResourceVersion(err)) {
    // The RV to resume from is unusable; ask for a fresh consistent snapshot instead.
    SetResourceVersionUnavailable(true);
    return true;
  }
  return false;
}

Status Reflector::WatchWithResync(std::unique_ptr<WatchInterface> w, std::stop_token stop) {
  // The resync timer lives exactly as long as this watch phase (behaviour 2.6).
  std::stop_source cancel;
  std::stop_callback forward(stop, [&cancel] { cancel.request_stop(); });
  std::jthread resyncer;
  if (options_.resync_period > Clock::duration::zero()) {
    resyncer = std::jthread([this, token = cancel.get_token()] { ResyncLoop(token); });
  }
  Status s = Watch(std::move(w), stop);
  cancel.request_stop();
  return s;
}

void Reflector::ResyncLoop(std::stop_token stop) {
  while (clock_.SleepFor(options_.resync_period, stop)) {
    if (options_.should_resync && !options_.should_resync()) {
      continue;
    }
    if (Status s = store_->Resync(); !s.ok()) {
      KLOG_ERRORS(s.error().ToString(), "Resync failed", "reflector", options_.name);
    }
  }
}

Status Reflector::Watch(std::unique_ptr<WatchInterface> w, std::stop_token stop) {
  while (!stop.stop_requested()) {
    if (!w) {
      api::ListOptions options;
      options.resource_version = LastSyncResourceVersion();
      options.allow_watch_bookmarks = true;
      options.timeout_seconds = WatchTimeoutSeconds();
      Result<std::unique_ptr<WatchInterface>> opened = lister_watcher_->Watch(options);
      if (!opened.ok()) {
        if (IsWatchErrorRetriable(opened.error())) {
          // The server is overloaded or restarting; what we have is still valid, so re-watch.
          if (!clock_.SleepFor(backoff_.Next(), stop)) {
            return OkStatus();
          }
          continue;
        }
        return opened.error();
      }
      w = std::move(opened).value();
    }
    Result<bool> handled =
        HandleWatch(*w, *store_, stop, /*exit_on_initial_events_end=*/false,
                    [this](const std::string& rv) { SetLastSyncResourceVersion(rv); });
    w->Stop();
    w.reset();
    if (stop.stop_requested()) {
      return OkStatus();
    }
    if (!handled.ok()) {
      const Error& err = handled.error();
      if (IsExpiredOrGone(err)) {
        // Relist at the last RV (ListAndWatch returns; Run relists after its backoff).
        KLOG_V_INFOS(1, "Watch closed with an error", "reflector", options_.name, "err",
                     err.ToString());
        return OkStatus();
      }
      if (IsWatchStreamBroken(err)) {
        // The stream broke or hit its client-side deadline between two events: nothing was
        // lost, so re-watch from the last RV without relisting, as upstream does when its
        // StreamWatcher ends on a timeout or probable EOF.
        // The backoff keeps a server that breaks every stream at once from spinning us.
        KLOG_WARNINGS("Watch stream ended, re-watching", "reflector", options_.name,
                      "resourceVersion", LastSyncResourceVersion(), "err", err.ToString());
        if (!clock_.SleepFor(backoff_.Next(), stop)) {
          return OkStatus();
        }
        continue;
      }
      if (IsWatchErrorRetriable(err)) {
        // A lazily opened stream (pkg/client sends the request on the first read) reports a
        // refused connection or a 429 here rather than from Watch(): back off and re-watch.
        if (!clock_.SleepFor(backoff_.Next(), stop)) {
          return OkStatus();
        }
        continue;
      }
      // Anything else (an undecodable or oversized event, an unexpected API error) may have cost
      // us an event: relist.
      KLOG_WARNINGS("Watch ended, relisting", "reflector", options_.name, "err", err.ToString());
      return OkStatus();
    }
    // A clean close (server timeout): re-watch from the last RV without relisting (behaviour 2.4).
  }
  return OkStatus();
}

Result<bool> Reflector::HandleWatch(WatchInterface& w, ReflectorStore& store, std::stop_token stop,
                                    bool exit_on_initial_events_end,
                                    const std::function<void(const std::string&)>& set_rv) {
  const Clock::time_point start = clock_.Now();
  int64_t event_count = 0;
  // Next() blocks; stopping the stream is the only way to end it promptly.
  std::stop_callback stop_watch(stop, [&w] { w.Stop(); });
  // The object events of one read of the stream, handed to the store together before the next
  // Next() that may wait: one queue lock and at most one wake-up of the informer per read instead
  // of one per event (client-go hands them over one by one; nothing else differs: the same
  // events in the same order, each its own push and resourceVersion).
  std::vector<api::WatchEvent> batch;
  std::string batch_rv;
  auto flush = [&] {
    if (batch.empty()) return;
    if (Status applied = store.AddWatchEvents(batch); !applied.ok()) {
      KLOG_ERRORS(applied.error().ToString(), "Unable to apply watch event", "reflector",
                  options_.name);
    }
    batch.clear();
    set_rv(batch_rv);
  };
  while (true) {
    if (w.buffered_events() == 0) flush();
    Result<std::optional<api::WatchEvent>> next = w.Next();
    if (stop.stop_requested()) {
      return StopRequested();
    }
    if (!next.ok()) {
      flush();
      return next.error();
    }
    if (!next->has_value()) {
      flush();
      break;
    }
    api::WatchEvent& event = **next;
    if (event.type == api::WatchEventType::kError) {
      flush();
      return event.error;
    }
    if (event.type != api::WatchEventType::kBookmark) {
      if (!event.object) {
        KLOG_ERRORS("watch event without an object", "Skipped a watch event", "reflector",
                    options_.name);
        continue;
      }
      if (!options_.expected_kind.empty() && event.object->Kind() != options_.expected_kind) {
        KLOG_ERRORS("unexpected kind", "Skipped a watch event", "reflector", options_.name,
                    "expectedKind", options_.expected_kind, "kind", event.object->Kind());
        continue;
      }
    }
    std::string rv = event.resource_version;
    if (rv.empty() && event.object) {
      rv = event.object->Meta().resource_version;
    }
    bool initial_events_end = false;
    switch (event.type) {
      case api::WatchEventType::kAdded:
        // The initial events of a streaming list go to a private store; an unchanged object is
        // taken from the real one, as for a LIST.
        if (exit_on_initial_events_end) {
          event.object = store_->ReuseUnchanged(std::move(event.object));
        }
        [[fallthrough]];
      case api::WatchEventType::kModified:
      case api::WatchEventType::kDeleted:
        batch.push_back(std::move(event));
        batch_rv = rv;
        break;
      case api::WatchEventType::kBookmark:
        // A bookmark only says "you are synced up to here": after the events before it.
        flush();
        initial_events_end = event.initial_events_end;
        if (!rv.empty()) store.Bookmark(rv);
        set_rv(rv);
        break;
      case api::WatchEventType::kError:
        break;
    }
    ++event_count;
    if (exit_on_initial_events_end && initial_events_end) {
      return true;
    }
  }
  if (clock_.Now() - start < 1s && event_count == 0) {
    return Error::Local("VeryShortWatch",
                        "unexpected watch close - watch lasted less than a second and no items "
                        "received");
  }
  return false;
}

std::string Reflector::RelistResourceVersion() const {
  std::lock_guard lock(mu_);
  if (last_sync_resource_version_unavailable_) {
    // Force a quorum read from etcd: the RV we had is unusable.
    return "";
  }
  if (last_sync_resource_version_.empty()) {
    // First list: whatever the watch cache has is fine and cheap.
    return "0";
  }
  return last_sync_resource_version_;
}

std::string Reflector::RewatchResourceVersion() const {
  std::lock_guard lock(mu_);
  return last_sync_resource_version_unavailable_ ? "" : last_sync_resource_version_;
}

std::string Reflector::LastSyncResourceVersion() const {
  std::lock_guard lock(mu_);
  return last_sync_resource_version_;
}

void Reflector::SetLastSyncResourceVersion(const std::string& rv) {
  std::lock_guard lock(mu_);
  last_sync_resource_version_ = rv;
}

void Reflector::SetResourceVersionUnavailable(bool unavailable) {
  std::lock_guard lock(mu_);
  last_sync_resource_version_unavailable_ = unavailable;
}

int64_t Reflector::WatchTimeoutSeconds() {
  const double seconds = std::chrono::duration<double>(options_.min_watch_timeout).count();
  return static_cast<int64_t>(seconds * (options_.rand() + 1.0));
}

}  // namespace kcm::cache
