#include "pkg/record/event_broadcaster.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "pkg/client/api_errors.h"
#include "pkg/util/klog.h"

namespace kcm::record {

// The queue between recorders and the worker. When it is full, which event goes is chosen so that
// what users read survives a flood (a scale-up of thousands of pods records one SuccessfulCreate
// per pod, and the correlator would fold all but the first few of them into one aggregate anyway):
//   1. an incoming Normal event that repeats a queued one (same object, same reason) is dropped;
//   2. else the oldest queued Normal event that has a queued repeat makes room;
//   3. else an incoming Warning takes the place of the oldest queued Normal event;
//   4. else the incoming event is dropped (upstream's DropIfChannelFull).
// So a Deployment's ScalingReplicaSet and every failure (Warning) event are kept while per-pod
// repeats are what is shed.
struct EventBroadcaster::Queue {
  explicit Queue(size_t cap) : capacity(cap) {}

  // False when the event was dropped.
  bool Push(api::Event event) {
    uint64_t dropped_now = 0;
    std::string lost;  // reason of the event dropped, for the log line
    {
      std::lock_guard lock(mu);
      if (!closed && items.size() < capacity) {
        Add(std::move(event));
        cv.notify_one();
        return true;
      }
      dropped_now = ++dropped;
      if (closed) {
        lost = event.reason;
      } else if (auto victim = Victim(event); victim != items.end()) {
        lost = victim->event.reason;
        Remove(victim);
        Add(std::move(event));
        cv.notify_one();
      } else {
        lost = event.reason;
      }
    }
    // Log the 1st, 2nd, 4th, 8th, ... drop: a flood must not turn into a flood of log lines.
    if ((dropped_now & (dropped_now - 1)) == 0) {
      KLOG_ERRORS("too many queued events or shutting down", "Unable to record event", "reason",
                  lost, "droppedSoFar", dropped_now);
    }
    return false;
  }

  // Drops every queued event (counted as dropped) and returns how many; under mu.
  size_t DropAllLocked() {
    const size_t n = items.size();
    dropped += n;
    items.clear();
    queued.clear();
    return n;
  }

  api::Event Pop() {
    Forget(items.front().key);
    api::Event e = std::move(items.front().event);
    items.pop_front();
    return e;
  }

  const size_t capacity;
  mutable std::mutex mu;
  std::condition_variable_any cv;
  struct Entry {
    api::Event event;
    std::string key;  // Key(event)
  };
  std::deque<Entry> items;  // guarded by mu
  bool closed = false;      // guarded by mu
  uint64_t dropped = 0;     // guarded by mu

 private:
  static std::string Key(const api::Event& e) {
    const auto& o = e.involved_object;
    return (o.uid.empty() ? o.kind + "/" + o.namespace_ + "/" + o.name : o.uid) + "\x1f" + e.reason;
  }
  static bool IsNormal(const api::Event& e) { return e.type == "Normal"; }

  void Add(api::Event e) {
    std::string key = Key(e);
    ++queued[key];
    items.push_back({std::move(e), std::move(key)});
  }
  void Forget(const std::string& key) {
    auto it = queued.find(key);
    if (it != queued.end() && --it->second == 0) queued.erase(it);
  }
  void Remove(std::deque<Entry>::iterator it) {
    Forget(it->key);
    items.erase(it);
  }
  // The queued event to give up for `incoming` (rules 2 and 3), or end() to drop `incoming`.
  // Linear in the queue, and only run when it is full.
  std::deque<Entry>::iterator Victim(const api::Event& incoming) {
    if (IsNormal(incoming) && queued.contains(Key(incoming))) return items.end();  // rule 1
    for (auto it = items.begin(); it != items.end(); ++it) {
      if (IsNormal(it->event) && queued.at(it->key) > 1) return it;  // rule 2
    }
    if (!IsNormal(incoming)) {
      for (auto it = items.begin(); it != items.end(); ++it) {
        if (IsNormal(it->event)) return it;  // rule 3
      }
    }
    return items.end();
  }

  std::unordered_map<std::string, int> queued;  // queued events per Key; guarded by mu
};

namespace {

class Recorder final : public EventRecorder {
 public:
  Recorder(std::shared_ptr<EventBroadcaster::Queue> queue, Clock& clock, api::EventSource source)
      : queue_(std::move(queue)), clock_(clock), source_(std::move(source)) {}

  void Event(const ObjectReference& object, std::string_view type, std::string_view reason,
             std::string_view message) override {
    if (type != kEventTypeNormal && type != kEventTypeWarning) {
      KLOG_ERRORS("", "Unsupported event type", "eventType", type);
      return;
    }
    const api::Time now = clock_.WallNow();
    api::Event event;
    event.metadata.name = EventName(object.name, now);
    // Cluster-scoped objects get their events in "default", as upstream.
    event.metadata.namespace_ = object.namespace_.empty() ? "default" : object.namespace_;
    event.involved_object = object;
    event.reason = std::string(reason);
    event.message = std::string(message);
    event.first_timestamp = now;
    event.last_timestamp = now;
    event.count = 1;
    event.type = std::string(type);
    event.source = source_;
    event.reporting_component = source_.component;
    event.reporting_instance = source_.host;
    queue_->Push(std::move(event));
  }

 private:
  std::shared_ptr<EventBroadcaster::Queue> queue_;
  Clock& clock_;
  const api::EventSource source_;
};

std::string Describe(const api::Event& e) {
  return e.metadata.namespace_ + "/" + e.metadata.name + " (" + e.involved_object.kind + " " +
         e.involved_object.name + " " + e.type + " " + e.reason + ")";
}

}  // namespace

EventBroadcaster::EventBroadcaster(BroadcasterOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::Get()),
      queue_(std::make_shared<Queue>(options_.queue_size)),
      correlator_(clock_, options_.correlator),
      rng_(std::random_device{}()) {}

EventBroadcaster::~EventBroadcaster() {
  Shutdown();
}

void EventBroadcaster::StartRecordingToSink(std::shared_ptr<EventSink> sink) {
  if (worker_.joinable()) {
    KLOG_ERRORS("StartRecordingToSink called twice", "EventBroadcaster ignored a second sink");
    return;
  }
  sink_ = std::move(sink);
  worker_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

std::shared_ptr<EventRecorder> EventBroadcaster::NewRecorder(api::EventSource source) {
  return std::make_shared<Recorder>(queue_, clock_, std::move(source));
}

void EventBroadcaster::Shutdown() {
  {
    std::lock_guard lock(queue_->mu);
    queue_->closed = true;
  }
  queue_->cv.notify_all();
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }
}

uint64_t EventBroadcaster::dropped() const {
  std::lock_guard lock(queue_->mu);
  return queue_->dropped;
}

void EventBroadcaster::Run(std::stop_token stop) {
  for (;;) {
    api::Event event;
    {
      std::unique_lock lock(queue_->mu);
      queue_->cv.wait(lock, stop, [&] { return !queue_->items.empty() || queue_->closed; });
      if (stop.stop_requested()) {
        // Shutdown drops what is still queued, as upstream's eventBroadcasterImpl.Shutdown does:
        // a replica handing its namespaces over, or losing its lease, must not wait
        // for a backlog of up to queue_size writes behind the client's rate limiter.
        const size_t n = queue_->DropAllLocked();
        lock.unlock();
        if (n > 0) {
          KLOG_V_INFOS(2, "Dropped queued events at shutdown", "count", n);
        }
        return;
      }
      if (queue_->items.empty()) {
        if (queue_->closed) return;
        continue;
      }
      event = queue_->Pop();
    }
    if (options_.log_verbosity >= 0) {
      KLOG_V_INFOS(options_.log_verbosity, "Event occurred", "object",
                   klog::KRef(event.involved_object.namespace_, event.involved_object.name), "kind",
                   event.involved_object.kind, "apiVersion", event.involved_object.api_version,
                   "type", event.type, "reason", event.reason, "message", event.message);
    }
    RecordToSink(event, stop);
  }
}

void EventBroadcaster::RecordToSink(const api::Event& event, std::stop_token stop) {
  EventCorrelateResult result = correlator_.EventCorrelate(event);
  if (result.skip) return;
  const bool update_existing = result.event.count > 1;
  for (int tries = 1;; ++tries) {
    if (RecordEvent(result.event, result.patch, update_existing, stop)) return;
    if (tries >= options_.max_tries) {
      KLOG_ERRORS("retry limit exceeded", "Unable to write event (retry limit exceeded!)", "event",
                  Describe(result.event));
      return;
    }
    auto wait = std::chrono::duration_cast<Clock::duration>(options_.retry_sleep);
    if (tries == 1) {
      wait = std::chrono::duration_cast<Clock::duration>(
          wait * std::uniform_real_distribution<double>(0.0, 1.0)(rng_));
    }
    if (!clock_.SleepFor(wait, stop)) {
      KLOG_WARNINGS("Not retrying event: shutting down", "event", Describe(result.event));
      return;
    }
  }
}

bool EventBroadcaster::RecordEvent(const api::Event& event, const std::string& patch,
                                   bool update_existing, std::stop_token stop) {
  Result<api::Event> written = Error::Local("NotAttempted", "");
  bool create = !update_existing;
  if (update_existing) {
    written = sink_->Patch(event, patch, stop);
    // The Event may have expired on the server (events have a TTL): create it afresh.
    if (!written.ok() && written.error().code == 404) create = true;
  }
  if (create) {
    // A create carries no resourceVersion; a new event has none, so it is copied only when it
    // came from the correlator's log of a written one.
    if (event.metadata.resource_version.empty()) {
      written = sink_->Create(event, stop);
    } else {
      api::Event fresh = event;
      fresh.metadata.resource_version.clear();
      written = sink_->Create(fresh, stop);
    }
  }
  if (written.ok()) {
    correlator_.UpdateState(*written);
    return true;
  }
  const Error& err = written.error();
  if (stop.stop_requested()) {
    // The write was canceled by Shutdown (or ended as it came): not retried.
    KLOG_V_INFOS(2, "Unable to write event (broadcaster is shut down)", "event", Describe(event),
                 "err", err.ToString());
    return true;
  }
  // Only a failure to reach the server (or to read its answer) is worth retrying; a server that
  // answered will answer the same way again.
  if (errors::IsTransport(err) || (err.code == 0 && err.reason == "DecodeError")) {
    KLOG_ERRORS(err.ToString(), "Unable to write event (may retry after sleeping)", "event",
                Describe(event));
    return false;
  }
  if (errors::IsAlreadyExists(err) || errors::IsNamespaceTerminating(err)) {
    KLOG_V_INFOS(5, "Server rejected event (will not retry!)", "event", Describe(event), "err",
                 err.ToString());
  } else {
    KLOG_ERRORS(err.ToString(), "Server rejected event (will not retry!)", "event",
                Describe(event));
  }
  return true;
}

}  // namespace kcm::record
