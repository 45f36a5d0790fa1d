#include "pkg/record/events_cache.h"

#include <cstdio>
#include <initializer_list>
#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/time.h"
#include "pkg/client/rate_limiter.h"

namespace kcm::record {
namespace {

// Upstream concatenates the fields with no separator; a separator keeps ("ab","c") and ("a","bc")
// apart. The keys never leave the process, so this changes nothing visible.
std::string JoinKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (std::string_view p : parts) {
    key.append(p);
    key.push_back('\x1f');
  }
  return key;
}

// Identical events: same source, involved object, type, reason and message.
std::string EventKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return JoinKey({e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.field_path,
                  o.uid, o.api_version, e.type, e.reason, e.message});
}

// The spam filter's bucket: one per source + involved object.
std::string SpamKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return JoinKey(
      {e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid, o.api_version});
}

// Similar events: identical except for the message (EventAggregatorByReasonFunc).
std::string AggregateKey(const api::Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return JoinKey({e.source.component, e.source.host, o.kind, o.namespace_, o.name, o.uid,
                  o.api_version, e.type, e.reason, e.reporting_component, e.reporting_instance});
}

}  // namespace

std::string EventName(std::string_view object_name, api::Time t) {
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(nanos));
  std::string name(object_name);
  name.push_back('.');
  name.append(hex);
  return name;
}

EventCorrelator::EventCorrelator(Clock& clock, CorrelatorOptions options)
    : clock_(clock),
      options_(options),
      aggregates_(options.lru_cache_size),
      logs_(options.lru_cache_size),
      spam_(options.lru_cache_size) {}

EventCorrelator::~EventCorrelator() = default;

EventCorrelateResult EventCorrelator::EventCorrelate(const api::Event& event) {
  std::lock_guard lock(mu_);
  auto [aggregated, key] = Aggregate(event);
  EventCorrelateResult result;
  result.patch = Observe(aggregated, key);
  // Filtering comes last, as upstream: a dropped repeat still counts in the log, so the next
  // one that passes carries the full count.
  if (Filter(aggregated)) {
    result.skip = true;
    return result;
  }
  result.event = std::move(aggregated);
  return result;
}

std::pair<api::Event, std::string> EventCorrelator::Aggregate(const api::Event& event) {
  const Clock::time_point now = clock_.Now();
  const std::string aggregate_key = AggregateKey(event);
  AggregateRecord record;
  if (AggregateRecord* found = aggregates_.Get(aggregate_key);
      found != nullptr && now - found->last_seen <= options_.max_interval) {
    record = std::move(*found);
  }
  record.local_keys.insert(event.message);
  record.last_seen = now;
  const bool aggregate = record.local_keys.size() >= options_.max_events;
  if (aggregate) {
    // Keep the set at most max_events - 1 so every further distinct message aggregates too.
    record.local_keys.erase(record.local_keys.begin());
  }
  aggregates_.Add(aggregate_key, std::move(record));
  if (!aggregate) return {event, EventKey(event)};

  // Counted under the aggregate key, so later similar events patch this one aggregate Event.
  const api::Time wall_now = clock_.WallNow();
  api::Event combined;
  combined.metadata.name = EventName(event.involved_object.name, wall_now);
  combined.metadata.namespace_ = event.metadata.namespace_;
  combined.involved_object = event.involved_object;
  combined.count = 1;
  combined.first_timestamp = wall_now;
  combined.last_timestamp = wall_now;
  combined.message = std::string(kAggregatePrefix) + event.message;
  combined.type = event.type;
  combined.reason = event.reason;
  combined.source = event.source;
  // reportingComponent/reportingInstance stay empty, as in upstream EventAggregator: the
  // combined event is the correlator's, not one reported by the component.
  return {std::move(combined), aggregate_key};
}

std::string EventCorrelator::Observe(api::Event& event, const std::string& key) {
  std::string patch;
  if (const EventLog* last = logs_.Get(key); last != nullptr && last->count > 0) {
    event.metadata.name = last->name;
    event.metadata.resource_version = last->resource_version;
    event.first_timestamp = last->first_timestamp;
    event.count = last->count + 1;
    // What a two-way strategic merge patch between the stored and the new event holds: only
    // these three fields differ.
    api::json::Value body = api::json::Value::MakeObject();
    body.Set("count", api::json::Value::Int(event.count));
    if (event.last_timestamp) {
      body.Set("lastTimestamp", api::json::Value::String(api::FormatTime(*event.last_timestamp)));
    }
    body.Set("message", api::json::Value::String(event.message));
    patch = api::json::Serialize(body);
  }
  logs_.Add(key, EventLog{event.count, event.first_timestamp, event.metadata.name,
                          event.metadata.resource_version});
  return patch;
}

bool EventCorrelator::Filter(const api::Event& event) {
  const std::string key = SpamKey(event);
  SpamRecord record;
  if (SpamRecord* found = spam_.Get(key); found != nullptr) record = *found;
  if (!record.limiter) {
    record.limiter =
        std::make_shared<client::TokenBucketRateLimiter>(options_.qps, options_.burst, clock_);
  }
  const bool drop = !record.limiter->TryAccept();
  spam_.Add(key, std::move(record));
  return drop;
}

void EventCorrelator::UpdateState(const api::Event& event) {
  std::lock_guard lock(mu_);
  logs_.Add(EventKey(event), EventLog{event.count, event.first_timestamp, event.metadata.name,
                                      event.metadata.resource_version});
}

}  // namespace kcm::record
