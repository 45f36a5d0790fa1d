// NamespaceFence: which namespaces a sharded replica may write to, for controllers that run once
// for the replica's whole life while its share of the namespaces changes (docs/design/sharding.md,
// "Serving a share"). A write asks Admit for its namespace and holds the
// admission until its answer is in; Close refuses new writes to ranges of the namespace hash
// (api::ShardHash), cancels the admitted ones' tokens (a wait in the rate limiter ends, a request
// in flight is cancelled) and waits until they are answered, so that once it returns nothing of
// this replica is in flight to a range it hands over; Open lets writes to ranges in. Everything
// starts closed. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/shard_selector.h"
#include "pkg/util/clock.h"

namespace kcm::controller {

class NamespaceFence {
 public:
  // One admitted write: its namespace counts as written to until this is destroyed.
  class Admission {
   public:
    Admission(Admission&& other) noexcept
        : fence_(std::exchange(other.fence_, nullptr)),
          entry_(other.entry_),
          token_(other.token_) {}
    Admission& operator=(Admission&&) = delete;
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;
    ~Admission();
    // Cancelled once the namespace is closed: for the write's client call.
    std::stop_token token() const { return token_; }

   private:
    friend class NamespaceFence;
    using Entry = std::multimap<uint64_t, std::stop_source>::iterator;
    Admission(NamespaceFence* fence, Entry entry)
        : fence_(fence), entry_(entry), token_(entry->second.get_token()) {}
    NamespaceFence* fence_;
    Entry entry_;
    std::stop_token token_;
  };

  // nullopt when the namespace's hash is in no open range: the write must not go out.
  std::optional<Admission> Admit(std::string_view ns);
  // Lets writes to `ranges` in.
  void Open(const std::vector<api::ShardRange>& ranges);
  // Refuses new writes to `ranges` and cancels the admitted ones' tokens, then waits until none
  // of them is left or `grace` has passed: false in that case (a write still in flight).
  bool Close(const std::vector<api::ShardRange>& ranges, Clock::duration grace);
  // Whether a write to `ns` would be admitted now.
  bool IsOpen(std::string_view ns) const;

 private:
  bool OpenLocked(uint64_t hash) const;
  void Release(Admission::Entry entry);

  mutable std::mutex mu_;
  std::condition_variable released_;
  // The open ranges, disjoint, by first hash.
  std::map<uint64_t, uint64_t> open_;
  // Admitted writes in flight, by namespace hash, each with its cancellation.
  std::multimap<uint64_t, std::stop_source> in_flight_;
};

}  // namespace kcm::controller
