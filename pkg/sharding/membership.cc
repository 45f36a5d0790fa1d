#include "pkg/sharding/membership.h"

#include <utility>

#include "pkg/api/generic_object.h"
#include "pkg/api/lease.h"
#include "pkg/api/shard_selector.h"
#include "pkg/util/errors.h"
#include "pkg/util/klog.h"

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

MemberLeases::MemberLeases(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
                           std::string name, std::string identity, Clock& clock,
                           Clock::duration skew, Clock::duration fresh)
    : leases_(std::move(client), {"coordination.k8s.io", "v1", "leases"}, true),
      namespace_(std::move(lease_namespace)),
      name_(std::move(name)),
      identity_(std::move(identity)),
      membership_(name_, clock, skew, fresh) {}

std::optional<MemberLease> MemberLeases::Decode(std::string_view raw) {
  auto lease = api::DecodeLease(decoder_, raw);
  if (!lease.ok()) return std::nullopt;
  const api::Lease& l = **lease;
  MemberLease m;
  m.name = l.metadata.name;
  m.resource_version = l.metadata.resource_version.str();
  m.holder = l.spec.holder_identity.value_or("");
  m.lease_duration_seconds = l.spec.lease_duration_seconds.value_or(0);
  m.renew_time = l.spec.renew_time;
  if (auto it = l.metadata.annotations.find(std::string(kShardWorkAnnotation));
      it != l.metadata.annotations.end()) {
    m.shard_work = it->second;
  }
  return m;
}

LiveMembers MemberLeases::Judge(cache::Indexer& cached, const ShardMap& map, std::stop_token stop) {
  const std::string prefix = name_ + "-member-";
  std::vector<MemberLease> seen;
  for (const api::ObjectPtr& o : cached.List()) {
    if (!o->Meta().name.starts_with(prefix)) continue;
    if (auto l = Decode(static_cast<const api::GenericObject&>(*o).raw_json)) {
      seen.push_back(std::move(*l));
    }
  }
  membership_.Update(seen);
  std::set<std::string> alive = membership_.MayServe();
  std::set<std::string> suspects;
  for (const ShardMapEntry& e : map.entries()) {
    for (const std::string* who : {&e.owner, &e.next}) {
      if (!who->empty() && *who != identity_ && !alive.contains(*who)) suspects.insert(*who);
    }
  }
  bool unsure = false;
  for (const std::string& who : suspects) {
    const std::string lease_name = MemberLeaseName(name_, who);
    auto r = leases_.Get(namespace_, lease_name, {}, stop);
    if (r.ok()) {
      if (auto l = Decode(*r)) membership_.Observe(*l);
    } else if (errors::IsNotFound(r.error())) {
      membership_.Deleted(lease_name);
    } else {
      unsure = true;  // not dead until a read says so
      KLOG_WARNINGS("Reading a member lease failed", "member", who, "err", r.error().ToString());
    }
  }
  LiveMembers live{membership_.MayServe(), membership_.Members()};
  if (unsure) live.may_serve.insert(suspects.begin(), suspects.end());
  live.may_serve.insert(identity_);
  live.members.insert(identity_);
  for (const MemberLease& l : seen) {
    if (!l.shard_work || !live.members.contains(l.holder) ||
        MemberLeaseName(name_, l.holder) != l.name) {
      continue;
    }
    if (auto work = ParseShardWork(*l.shard_work)) {
      live.work[l.holder] = std::move(*work);
    } else {
      KLOG_V_INFOS(1, "Ignoring a member's shard-work annotation", "member", l.name);
    }
  }
  return live;
}

void MemberLeases::DeleteStale(cache::Indexer& cached, std::stop_token stop) {
  for (const std::string& lease_name : membership_.Stale(std::chrono::minutes(1))) {
    auto obj = cached.GetByKey(namespace_ + "/" + lease_name);
    if (obj == nullptr) continue;
    client::DeleteOptions o;
    o.precondition_resource_version = obj->Meta().resource_version.str();
    auto r = leases_.Delete(namespace_, lease_name, o, stop);
    if (r.ok()) KLOG_INFOS("Deleted the lease of a departed replica", "lease", lease_name);
  }
}

}  // namespace kcm::sharding
