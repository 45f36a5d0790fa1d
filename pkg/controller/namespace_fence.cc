#include "pkg/controller/namespace_fence.h"

#include <utility>

namespace kcm::controller {

NamespaceFence::Admission::~Admission() {
  if (fence_ != nullptr) fence_->Release(entry_);
}

bool NamespaceFence::OpenLocked(uint64_t hash) const {
  auto it = open_.upper_bound(hash);
  if (it == open_.begin()) return false;
  --it;
  return hash <= it->second;
}

std::optional<NamespaceFence::Admission> NamespaceFence::Admit(std::string_view ns) {
  const uint64_t hash = api::ShardHash(ns);
  std::lock_guard lock(mu_);
  if (!OpenLocked(hash)) return std::nullopt;
  return Admission(this, in_flight_.emplace(hash, std::stop_source()));
}

bool NamespaceFence::IsOpen(std::string_view ns) const {
  const uint64_t hash = api::ShardHash(ns);
  std::lock_guard lock(mu_);
  return OpenLocked(hash);
}

void NamespaceFence::Release(Admission::Entry entry) {
  {
    std::lock_guard lock(mu_);
    in_flight_.erase(entry);
  }
  released_.notify_all();
}

void NamespaceFence::Open(const std::vector<api::ShardRange>& ranges) {
  std::lock_guard lock(mu_);
  for (const api::ShardRange& r : ranges) {
    uint64_t first = r.first;
    uint64_t last = r.last;
    // Merge with the open ranges it overlaps or touches, so that open_ stays disjoint.
    auto it = open_.upper_bound(first);
    if (it != open_.begin()) {
      auto prev = std::prev(it);
      if (prev->second >= first || (first > 0 && prev->second == first - 1)) it = prev;
    }
    while (it != open_.end() &&
           (it->first <= last || (last < UINT64_MAX && it->first == last + 1))) {
      first = std::min(first, it->first);
      last = std::max(last, it->second);
      it = open_.erase(it);
    }
    open_.emplace(first, last);
  }
}

bool NamespaceFence::Close(const std::vector<api::ShardRange>& ranges, Clock::duration grace) {
  std::unique_lock lock(mu_);
  for (const api::ShardRange& r : ranges) {
    // Cut [r.first, r.last] out of every open range it overlaps.
    auto it = open_.upper_bound(r.first);
    if (it != open_.begin()) --it;
    while (it != open_.end() && it->first <= r.last) {
      const auto [first, last] = *it;
      if (last < r.first) {
        ++it;
        continue;
      }
      it = open_.erase(it);
      if (first < r.first) open_.emplace(first, r.first - 1);
      if (last > r.last) {
        open_.emplace(r.last + 1, last);
        break;
      }
    }
  }
  // Under the lock: request_stop runs the writes. stop callbacks, which must not
  // call back into the fence (they wake a rate limiter's wait or a transfer).
  for (const api::ShardRange& r : ranges) {
    for (auto it = in_flight_.lower_bound(r.first); it != in_flight_.end() && it->first <= r.last;
         ++it) {
      it->second.request_stop();
    }
  }
  auto none_in_flight = [&] {
    for (const api::ShardRange& r : ranges) {
      auto it = in_flight_.lower_bound(r.first);
      if (it != in_flight_.end() && it->first <= r.last) return false;
    }
    return true;
  };
  return released_.wait_for(lock, grace, none_in_flight);
}

}  // namespace kcm::controller
