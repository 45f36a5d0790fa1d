// EventCorrelator: what happens to an event between the recorder and the API server (client-go's
// events_cache.go): a spam filter per source+object, aggregation of similar events into one
// "(combined from similar events)" event, and de-duplication of identical events into a count on
// the existing Event (sent as a patch). Thread-safe; in practice one sink thread calls it.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "pkg/api/event.h"
#include "pkg/record/lru_cache.h"
#include "pkg/util/clock.h"

namespace kcm::client {
class RateLimiter;
}

namespace kcm::record {

struct CorrelatorOptions {
  size_t lru_cache_size = 4096;
  // Spam filter: a token bucket per source+object (burst 25, one new event per 5 minutes).
  int burst = 25;
  double qps = 1.0 / 300.0;
  // Aggregation: this many distinct messages for one source+object+type+reason, each within
  // max_interval of the previous one, turn into one aggregate event.
  size_t max_events = 10;
  std::chrono::seconds max_interval{600};
};

inline constexpr std::string_view kAggregatePrefix = "(combined from similar events): ";

struct EventCorrelateResult {
  api::Event event;
  // A strategic merge patch ({"count","lastTimestamp","message"}) when `event` repeats one the
  // server already has (event.count > 1); empty for a new event.
  std::string patch;
  // Dropped by the spam filter: send nothing.
  bool skip = false;
};

// "<object-name>.<hex unix nanos>", the name of a new Event.
std::string EventName(std::string_view object_name, api::Time t);

class EventCorrelator {
 public:
  explicit EventCorrelator(Clock& clock, CorrelatorOptions options = {});
  ~EventCorrelator();

  // Aggregates, counts and filters one event (in that order, as upstream).
  EventCorrelateResult EventCorrelate(const api::Event& event);
  // Records the server's copy (name, resourceVersion, count) after a successful write, so the
  // next repeat patches the right object.
  void UpdateState(const api::Event& event);

 private:
  struct AggregateRecord {
    std::set<std::string> local_keys;  // distinct messages
    Clock::time_point last_seen;
  };
  struct EventLog {
    int32_t count = 0;
    std::optional<api::Time> first_timestamp;
    std::string name;
    std::string resource_version;
  };
  struct SpamRecord {
    std::shared_ptr<client::RateLimiter> limiter;
  };

  // Returns the event to send and the key it is counted under.
  std::pair<api::Event, std::string> Aggregate(const api::Event& event);
  std::string Observe(api::Event& event, const std::string& key);
  bool Filter(const api::Event& event);

  Clock& clock_;
  const CorrelatorOptions options_;
  std::mutex mu_;
  LruCache<AggregateRecord> aggregates_;
  LruCache<EventLog> logs_;
  LruCache<SpamRecord> spam_;
};

}  // namespace kcm::record
