// EventBroadcaster: turns recorder calls into core/v1 Events on the API server without blocking
// the caller (client-go's record.EventBroadcaster, E1-E3). Recorders push onto a bounded
// queue (dropped beyond it); one worker thread correlates each event and writes it through an
// EventSink, retrying transport errors. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>

#include "pkg/api/event.h"
#include "pkg/record/event_recorder.h"
#include "pkg/record/event_sink.h"
#include "pkg/record/events_cache.h"
#include "pkg/util/clock.h"

namespace kcm::record {

struct BroadcasterOptions {
  Clock* clock = nullptr;    // nullptr = RealClock; must outlive the broadcaster and recorders
  size_t queue_size = 1000;  // events waiting for the sink; more are dropped
  // Writes failing on transport errors are tried up to max_tries times, retry_sleep apart (the
  // first wait is a random fraction of it, so recorders restarted together spread out).
  int max_tries = 12;
  std::chrono::milliseconds retry_sleep{10000};
  CorrelatorOptions correlator;
  // Each event is also logged at this glog verbosity (upstream StartStructuredLogging); < 0 off.
  int log_verbosity = 2;
};

class EventBroadcaster {
 public:
  explicit EventBroadcaster(BroadcasterOptions options = {});
  // Shutdown().
  ~EventBroadcaster();
  EventBroadcaster(const EventBroadcaster&) = delete;
  EventBroadcaster& operator=(const EventBroadcaster&) = delete;

  // Starts the worker that writes events to `sink`. Call at most once; events recorded before
  // it wait in the queue.
  void StartRecordingToSink(std::shared_ptr<EventSink> sink);

  // A recorder whose events carry `source` (component, e.g. "deployment-controller", and
  // optional host); reportingComponent/reportingInstance are set from it as upstream does. A
  // recorder may outlive the broadcaster: its events are then dropped.
  std::shared_ptr<EventRecorder> NewRecorder(api::EventSource source);

  // Stops accepting events, drops what is still queued (counted in dropped()), cancels the write
  // under way and joins the worker, as upstream's eventBroadcasterImpl.Shutdown stops its
  // watcher: it returns at once, whatever the backlog. Idempotent.
  void Shutdown();

  // Events dropped because the queue was full or closed, or still queued at Shutdown.
  uint64_t dropped() const;

  struct Queue;  // shared with the recorders (event_broadcaster.cc)

 private:
  void Run(std::stop_token stop);
  void RecordToSink(const api::Event& event, std::stop_token stop);
  // True when done with the event (written, or refused for good); false to retry.
  bool RecordEvent(const api::Event& event, const std::string& patch, bool update_existing,
                   std::stop_token stop);

  const BroadcasterOptions options_;
  Clock& clock_;
  std::shared_ptr<Queue> queue_;
  EventCorrelator correlator_;
  std::shared_ptr<EventSink> sink_;
  std::mt19937_64 rng_;  // worker thread only
  std::jthread worker_;  // last: joined before the members it uses go away
};

}  // namespace kcm::record
