#include "pkg/sharding/membership.h"

#include <algorithm>

namespace kcm::sharding {

void Membership::Update(const std::vector<MemberLease>& leases) {
  std::map<std::string, Seen> next;
  const Clock::time_point now = clock_.Now();
  for (const MemberLease& l : leases) {
    auto it = seen_.find(l.name);
    if (it != seen_.end() && it->second.lease.resource_version == l.resource_version) {
      next.emplace(l.name, it->second);
    } else {
      next.emplace(l.name, Seen{l, now});
    }
  }
  seen_ = std::move(next);
}

std::optional<Clock::duration> Membership::Age(const Seen& s) const {
  if (s.lease.holder.empty()) return std::nullopt;
  Clock::duration age = clock_.Now() - s.changed;
  if (s.lease.renew_time) {
    // renewTime is the holder's clock: allow `skew` in its favour.
    const auto wall =
        std::chrono::duration_cast<Clock::duration>(clock_.WallNow() - *s.lease.renew_time) - skew_;
    age = std::max(age, wall);
  }
  return age;
}

void Membership::Observe(const MemberLease& lease) {
  auto it = seen_.find(lease.name);
  if (it != seen_.end() && it->second.lease.resource_version == lease.resource_version) return;
  seen_[lease.name] = Seen{lease, clock_.Now()};
}

void Membership::Forget(const std::string& name) {
  seen_.erase(name);
}

std::set<std::string> Membership::Live() const {
  std::set<std::string> live;
  for (const auto& [name, s] : seen_) {
    auto age = Age(s);
    if (age && *age <= std::chrono::seconds(s.lease.lease_duration_seconds)) {
      live.insert(s.lease.holder);
    }
  }
  return live;
}

std::vector<std::string> Membership::Stale(Clock::duration grace) const {
  std::vector<std::string> out;
  for (const auto& [name, s] : seen_) {
    auto age = Age(s);
    if (!age || *age > std::chrono::seconds(s.lease.lease_duration_seconds) + grace) {
      // A released Lease is stale once unchanged for `grace` on our clock.
      if (!age && clock_.Now() - s.changed <= grace) continue;
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace kcm::sharding
