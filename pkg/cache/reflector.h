// Reflector: keeps a ReflectorStore in step with the API server by LIST then WATCH, relisting and
// re-watching with backoff (behaviour 2). Run/ListAndWatch are called from one thread (the
// reflector's); LastSyncResourceVersion may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "pkg/cache/listwatch.h"
#include "pkg/cache/pager.h"
#include "pkg/cache/store.h"
#include "pkg/cache/wait.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::cache {

struct ReflectorOptions {
  // For logs, e.g. "ReplicaSet informer".
  std::string name = "reflector";
  // Watch events whose object has another Kind() are logged and skipped ("" = accept any).
  std::string expected_kind;
  // 0 = never resync (behaviour 2.6).
  Clock::duration resync_period{0};
  // Asked before each periodic resync; unset = always.
  std::function<bool()> should_resync;
  // Streaming list (behaviour 2.7). Off by default: with the LIST decoded as it arrives, the
  // streaming list was no faster at 50,000 pods, kept more resident (docs/benchmarks/informers.md).
  bool use_watch_list = false;
  // How long a streaming list may take to deliver its initial-events-end bookmark before the
  // reflector gives up on it and falls back to LIST.
  Clock::duration watch_list_timeout = std::chrono::seconds(60);
  int64_t page_size = kDefaultPageSize;
  // timeoutSeconds = min_watch_timeout × random[1, 2), spreading reconnects (behaviour 2.4).
  Clock::duration min_watch_timeout = std::chrono::minutes(5);
  ExponentialBackoff::Options backoff;
  // Defaults to RealClock::Get().
  Clock* clock = nullptr;
  // Defaults to NewRandFunc().
  RandFunc rand;
};

class Reflector {
 public:
  Reflector(std::shared_ptr<ListerWatcher> lister_watcher, std::shared_ptr<ReflectorStore> store,
            ReflectorOptions options);

  // Loops ListAndWatch with backoff between attempts (behaviour 2.1) until stop is requested.
  void Run(std::stop_token stop);
  // One LIST (or streaming list) followed by WATCHes until the watch must be re-listed, an error
  // occurs, or stop is requested (then OK). The active watch is stopped as soon as stop is set.
  Status ListAndWatch(std::stop_token stop);
  // The resourceVersion of the last list or accepted watch event ("" before the first).
  std::string LastSyncResourceVersion() const;

 private:
  Status List(std::stop_token stop);
  Result<std::unique_ptr<WatchInterface>> WatchList(std::stop_token stop);
  Status WatchWithResync(std::unique_ptr<WatchInterface> w, std::stop_token stop);
  Status Watch(std::unique_ptr<WatchInterface> w, std::stop_token stop);
  void ResyncLoop(std::stop_token stop);
  // Applies the events of w to store until the stream ends. Returns true if it stopped at an
  // initial-events-end bookmark (only when exit_on_initial_events_end).
  Result<bool> HandleWatch(WatchInterface& w, ReflectorStore& store, std::stop_token stop,
                           bool exit_on_initial_events_end,
                           const std::function<void(const std::string&)>& set_rv);
  // Backs off or marks the RV unavailable for errors a streaming list can recover from.
  bool RetryWatchListAfter(const Error& err, std::stop_token stop);
  std::string RelistResourceVersion() const;
  std::string RewatchResourceVersion() const;
  void SetLastSyncResourceVersion(const std::string& rv);
  void SetResourceVersionUnavailable(bool unavailable);
  int64_t WatchTimeoutSeconds();

  const std::shared_ptr<ListerWatcher> lister_watcher_;
  const std::shared_ptr<ReflectorStore> store_;
  ReflectorOptions options_;
  Clock& clock_;
  ExponentialBackoff backoff_;  // reflector thread only

  // Set once a RV="0" list came back paginated: the watch cache is off for this resource, so
  // later lists stay paginated too (behaviour 2.2). Reflector thread only.
  bool paginated_result_ = false;

  mutable std::mutex mu_;
  std::string last_sync_resource_version_;
  bool last_sync_resource_version_unavailable_ = false;
};

// How the reflector reads an error: by reason and transport cause only (pkg/util/errors.h).
// 429 or connection refused: the watch can be retried after a backoff without relisting
// (upstream's isWatchErrorRetriable).
bool IsWatchErrorRetriable(const Error& err);
// 410 Expired or Gone: the resourceVersion was compacted away; relist.
bool IsExpiredOrGone(const Error& err);
// The stream broke (reset) or hit the client's deadline (timed out) between two events: nothing
// was lost; re-watch after a backoff, without relisting.
bool IsWatchStreamBroken(const Error& err);

}  // namespace kcm::cache
