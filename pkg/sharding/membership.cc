#include "pkg/sharding/membership.h"

#include "pkg/api/shard_selector.h"

namespace kcm::sharding {

std::string MemberLeaseName(const std::string& name, const std::string& identity) {
  return name + "-member-" + api::ShardHex(api::ShardHash(identity)).substr(2);
}

void Membership::Observe(const MemberLease& lease) {
  auto [it, added] = seen_.try_emplace(lease.name);
  Seen& s = it->second;
  if (!added && !s.deleted && s.lease.resource_version == lease.resource_version) return;
  s.lease = lease;
  s.changed = clock_.Now();
  s.deleted = false;
  if (!lease.holder.empty() && MemberLeaseName(group_, lease.holder) == lease.name) {
    s.member = lease.holder;
  }
}

void Membership::Deleted(const std::string& lease_name) {
  auto it = seen_.find(lease_name);
  if (it == seen_.end() || it->second.deleted) return;
  it->second.deleted = true;
  it->second.changed = clock_.Now();
}

void Membership::Update(const std::vector<MemberLease>& leases) {
  std::set<std::string> present;
  for (const MemberLease& l : leases) {
    present.insert(l.name);
    Observe(l);
  }
  for (auto& [name, s] : seen_) {
    if (!present.contains(name)) Deleted(name);
  }
  // Forget a deleted Lease once its replica is certainly gone (each restart joins under a new
  // identity, so they would pile up).
  std::erase_if(seen_, [this](const auto& entry) {
    const Seen& s = entry.second;
    return s.deleted && !Alive(s) &&
           clock_.Now() - s.changed > 2 * std::chrono::seconds(s.lease.lease_duration_seconds);
  });
}

bool Membership::Alive(const Seen& s) const {
  if (s.member.empty()) return false;
  const auto duration = std::chrono::seconds(s.lease.lease_duration_seconds);
  if (clock_.Now() - s.changed > duration) return false;
  // Its own renewTime can only shorten its life, and only while the Lease is its own.
  if (!s.deleted && s.lease.holder == s.member && s.lease.renew_time) {
    const auto since = clock_.WallNow() - *s.lease.renew_time;
    if (since > duration + skew_) return false;
  }
  return true;
}

std::set<std::string> Membership::MayServe() const {
  std::set<std::string> out;
  for (const auto& [name, s] : seen_) {
    if (Alive(s)) out.insert(s.member);
  }
  return out;
}

std::set<std::string> Membership::Members() const {
  std::set<std::string> out;
  for (const auto& [name, s] : seen_) {
    if (!Alive(s) || s.deleted || s.lease.holder != s.member) continue;
    if (clock_.Now() - s.changed > fresh_) continue;
    if (s.lease.renew_time && clock_.WallNow() - *s.lease.renew_time > fresh_ + skew_) continue;
    out.insert(s.member);
  }
  return out;
}

std::vector<std::string> Membership::Stale(Clock::duration grace) const {
  std::vector<std::string> out;
  for (const auto& [name, s] : seen_) {
    if (s.deleted || Alive(s)) continue;
    if (clock_.Now() - s.changed > std::chrono::seconds(s.lease.lease_duration_seconds) + grace) {
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace kcm::sharding
