#include "pkg/sharding/shard_manager.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "pkg/informers/shared_informer_factory.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/metrics/metrics.h"
#include "pkg/sharding/assignment.h"
#include "pkg/sharding/map_lease.h"
#include "pkg/sharding/membership.h"
#include "pkg/sharding/shard_map.h"
#include "pkg/sharding/shard_work.h"
#include "pkg/sharding/work_balance.h"
#include "pkg/util/klog.h"

namespace kcm::sharding {
namespace {

const client::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

struct ShardMetrics {
  metrics::Gauge members = metrics::GaugeVec("controller_sharding_members",
                                             "Live controller manager replicas this one sees.", {})
                               .With({});
  metrics::Gauge ranges = metrics::GaugeVec("controller_sharding_ranges",
                                            "Namespace hash ranges this replica serves.", {})
                              .With({});
  metrics::Gauge namespaces =
      metrics::GaugeVec("controller_sharding_namespaces",
                        "Namespaces whose hash falls in the ranges this replica serves.", {})
          .With({});
  metrics::CounterVec changes{
      "controller_sharding_ownership_changes_total",
      "Ranges this replica started serving (acquired: unowned or from a dead replica, "
      "taken_over: handed to it) or stopped serving (released).",
      {"change"}};
};

// The sorted, distinct hashes of the namespaces an informer holds.
std::vector<uint64_t> NamespaceHashes(cache::Indexer& namespaces) {
  std::vector<uint64_t> hashes;
  for (const std::string& key : namespaces.ListKeys()) hashes.push_back(api::ShardHash(key));
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  return hashes;
}

// The Lease and namespace caches of the replica's own informers.
struct Caches {
  std::shared_ptr<cache::Indexer> leases;
  std::shared_ptr<cache::Indexer> namespaces;
};

Caches CachesOf(informers::SharedInformerFactory& factory) {
  return {factory.InformerFor(informers::GenericResource(kLeases, true))->GetIndexer(),
          factory.InformerFor(informers::GenericResource(kNamespaces, false))->GetIndexer()};
}

}  // namespace

struct ShardManager::Impl {
  ShardManagerConfig config;
  Clock& clock;
  MapLease map_lease;
  MemberLeases member_leases;
  ShardMetrics metrics;

  std::string bad_map_rv;        // the resourceVersion of an unreadable map, logged once
  RebalanceGate rebalance_gate;  // Run's thread only
  std::optional<Clock::time_point> work_published;         // Run's thread only
  std::shared_ptr<leaderelection::LeaseLock> member_lock;  // set by Run before the elector runs
  std::atomic<bool> coordinating{false};
  std::atomic<bool> serving_all{false};
  std::atomic<bool> member{false};
  // The member Lease's elector while Run runs, for Healthy (guarded by elector_mu).
  std::mutex elector_mu;
  std::shared_ptr<leaderelection::LeaderElector> member_elector;

  std::mutex mu;
  std::condition_variable_any cv;
  bool woken = false;                  // guarded by mu
  std::optional<Error> serve_failure;  // guarded by mu
  // Run's thread only. Declared last: destroyed (its ranges stopped) before what they call back.
  std::unique_ptr<Serving> serving;

  explicit Impl(ShardManagerConfig c)
      : config(std::move(c)),
        clock(config.clock != nullptr ? *config.clock : RealClock::Get()),
        map_lease(config.client, config.lease_namespace, ShardManager::MapLeaseName(config.name)),
        member_leases(config.client, config.lease_namespace, config.name, config.identity, clock,
                      config.clock_skew, 2 * config.retry_period + std::chrono::seconds(1)),
        rebalance_gate(3 * config.retry_period),
        serving(config.new_serving([this](Error e) { ServeFailed(std::move(e)); })) {}

  void Wake() {
    {
      std::lock_guard lock(mu);
      woken = true;
    }
    cv.notify_all();
  }

  void ServeFailed(Error e) {
    {
      std::lock_guard lock(mu);
      if (!serve_failure) serve_failure = std::move(e);
    }
    Wake();
  }

  // --- one pass ---

  // Reads the newest map, changes it by the rules this replica may apply (docs/design/sharding.md,
  // "The rules"), writes it if it changed, and serves exactly its ranges.
  void Step(informers::SharedInformerFactory& factory, std::stop_token stop) {
    PublishWork();
    const Caches caches = CachesOf(factory);
    std::optional<KnownMap> known = map_lease.Latest(*caches.leases);
    if (!known) {
      if (Status s = map_lease.Create(stop); !s.ok()) {
        KLOG_ERRORS(s.error().ToString(), "Creating the shard map failed");
      }
      return;
    }
    if (!known->map.ok()) {
      ServeNothing(*known);
      return;
    }
    const ShardMap& map = *known->map;
    const LiveMembers live = member_leases.Judge(*caches.leases, map, stop);
    metrics.members.Set(static_cast<double>(live.members.size()));
    const std::vector<uint64_t> hashes = NamespaceHashes(*caches.namespaces);
    const ShardMap next = Plan(map, live, hashes);
    if (coordinating) member_leases.DeleteStale(*caches.leases, stop);
    const ShardMap& current = next == map ? map : Publish(*known, next, stop);
    Serve(current, hashes);
  }

  // Nobody can tell who owns what: serve nothing rather than risk two writers; an operator who
  // deletes the Lease starts a new map.
  void ServeNothing(const KnownMap& known) {
    if (bad_map_rv != known.resource_version) {
      KLOG_ERRORS(known.map.error().ToString(),
                  "The shard map is unreadable, serving nothing until it is fixed or deleted",
                  "shardMap", klog::KRef(config.lease_namespace, map_lease.name()));
      bad_map_rv = known.resource_version;
    }
    serving->StopAll();
  }

  // The map after this replica's moves: its pending handoffs (their ranges stopped
  // first), the ranges of dead owners, and, when coordinating a load that stayed uneven for
  // its hold (RebalanceGate), requests for handoffs. `map` itself if the result is not a valid map.
  ShardMap Plan(const ShardMap& map, const LiveMembers& live, const std::vector<uint64_t>& hashes) {
    const Placement placement = Place(live.members, hashes, live.work, map);
    ShardMap next = map;
    std::vector<api::ShardRange> owed;
    for (const ShardMapEntry& e : map.entries()) {
      if (e.owner == config.identity && !e.next.empty()) owed.push_back(e.range);
    }
    if (!owed.empty()) {
      serving->StopIntersecting(owed);
      CompleteHandoffs(next, config.identity);
    }
    AssignFree(next, placement.desired, live.may_serve);
    if (coordinating) {
      rebalance_gate.SeeMembers(live.members);
    } else {
      rebalance_gate.Reset();  // a replica that becomes the coordinator starts at the first hold
    }
    if (coordinating &&
        rebalance_gate.Due(Uneven(placement, next, live.members, hashes),
                           !placement.weights.empty(), clock.Now()) &&
        Rebalance(next, placement.desired, live.may_serve)) {
      KLOG_INFOS("Rebalancing", "namespaces", hashes.size(), "replicas", live.members.size(), "by",
                 placement.weights.empty() ? "namespace count" : "work", "nextHold",
                 rebalance_gate.hold());
    }
    if (auto valid = ShardMap::FromEntries(next.entries()); !valid.ok()) {
      KLOG_ERRORS(valid.error().ToString(),
                  "Not writing an invalid shard map, keeping the current one");
      return map;
    }
    return next;
  }

  // At most every 10 s: this replica's shard-work into its member Lease's annotations, written
  // with its next renewal.
  void PublishWork() {
    if (config.served_work == nullptr || member_lock == nullptr) return;
    const Clock::time_point now = clock.Now();
    if (work_published && now - *work_published < std::chrono::seconds(10)) return;
    work_published = now;
    member_lock->SetAnnotations({{std::string(kShardWorkAnnotation),
                                  EncodeShardWork(ShardWorkOf(config.served_work->Count()))}});
  }

  // Writes `next` over `known`; the map now in force (`known`'s when the write failed).
  const ShardMap& Publish(const KnownMap& known, const ShardMap& next, std::stop_token stop) {
    auto w = map_lease.Write(known, next, stop);
    if (!w.ok()) {
      KLOG_ERRORS(w.error().ToString(), "Writing the shard map failed");
      return *known.map;
    }
    if (!*w) return *known.map;
    Count(*known.map, next);
    return *map_lease.written()->map;
  }

  void Serve(const ShardMap& current, const std::vector<uint64_t>& hashes) {
    const std::vector<api::ShardRange> served = current.Served(config.identity);
    serving->Reconcile(served);
    serving_all = true;
    int mine = 0;
    for (uint64_t h : hashes) {
      for (const api::ShardRange& r : served) mine += r.Contains(h) ? 1 : 0;
    }
    metrics.ranges.Set(static_cast<double>(served.size()));
    metrics.namespaces.Set(mine);
  }

  void Count(const ShardMap& before, const ShardMap& after) {
    const auto was = before.Served(config.identity);
    const auto now = after.Served(config.identity);
    for (const api::ShardRange& r : Subtract(now, was)) {
      const ShardMapEntry& e = before.At(r.first);
      metrics.changes.With({e.next == config.identity ? "taken_over" : "acquired"}).Inc();
    }
    if (!Subtract(was, now).empty()) metrics.changes.With({"released"}).Inc();
  }

  // After a stop: hands every range on (the ranges are stopped already). A few tries; a replica
  // that cannot reach the server leaves its ranges to expire with its member Lease.
  void ReleaseAll(informers::SharedInformerFactory& factory) {
    std::stop_source own;  // the run's token has ended; the client's timeout bounds each try
    const Caches caches = CachesOf(factory);
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto known = map_lease.Get(own.get_token());
      if (!known.ok()) {
        KLOG_ERRORS(known.error().ToString(), "Releasing shards failed");
        return;
      }
      if (!known->map.ok()) return;
      std::set<std::string> others =
          member_leases.Judge(*caches.leases, *known->map, own.get_token()).members;
      others.erase(config.identity);
      const std::vector<uint64_t> hashes = NamespaceHashes(*caches.namespaces);
      ShardMap next = *known->map;
      if (!Release(next, config.identity, DesiredPartition(others, hashes, next))) return;
      auto w = map_lease.Write(*known, next, own.get_token());
      if (w.ok() && *w) {
        KLOG_INFOS("Handed this replica's ranges to the other replicas", "replicas", others.size());
        metrics.changes.With({"released"}).Inc();
        return;
      }
      if (!w.ok()) {
        KLOG_ERRORS(w.error().ToString(), "Releasing shards failed");
        return;
      }
    }
  }

  void RunCoordinatorElection(std::stop_token stop) {
    while (!stop.stop_requested()) {
      leaderelection::LeaderElectionConfig lc;
      lc.lock = std::make_shared<leaderelection::LeaseLock>(
          config.client, config.lease_namespace, config.name, config.identity, config.recorder);
      lc.lease_duration = config.lease_duration;
      lc.renew_deadline = config.renew_deadline;
      lc.retry_period = config.retry_period;
      lc.release_on_cancel = true;
      lc.name = config.name;
      lc.clock = &clock;
      lc.callbacks.on_started_leading = [this](std::stop_token leading) {
        KLOG_INFOS("Coordinating the shard map", "identity", config.identity);
        coordinating = true;
        Wake();
        std::mutex m;
        std::unique_lock lock(m);
        std::condition_variable_any().wait(lock, leading, [] { return false; });
        coordinating = false;
      };
      lc.callbacks.on_stopped_leading = [] {};
      auto e = leaderelection::LeaderElector::Create(std::move(lc));
      if (!e.ok()) {
        KLOG_ERRORS(e.error().ToString(), "Coordinator election failed");
        return;
      }
      (*e)->Run(stop);
      clock.SleepFor(config.retry_period, stop);
    }
  }

  // The member's work: from acquiring the member Lease until losing it or stopping.
  Status ServeShare(std::stop_token stop) {
    member = true;
    informers::SharedInformerFactoryOptions fo;
    fo.namespace_ = config.lease_namespace;
    informers::SharedInformerFactory factory(config.informer_client, Clock::duration::zero(), fo);
    cache::ResourceEventHandlerFuncs wake;
    wake.add_func = [this](const api::ObjectPtr&, bool) { Wake(); };
    wake.update_func = [this](const api::ObjectPtr&, const api::ObjectPtr&) { Wake(); };
    wake.delete_func = [this](const api::ObjectPtr&) { Wake(); };
    wake.non_blocking = true;
    for (const auto& gvr : {kLeases, kNamespaces}) {
      auto inf = factory.InformerFor(informers::GenericResource(gvr, gvr.resource == "leases"));
      (void)inf->AddEventHandler(wake);
    }
    factory.Start(stop);
    for (const auto& [key, synced] : factory.WaitForCacheSync(stop)) {
      if (!synced) KLOG_WARNINGS("Informer not synced", "informer", key);
    }
    std::jthread coordinator([this](std::stop_token t) { RunCoordinatorElection(t); });
    std::stop_callback stop_coordinator(stop, [&coordinator] { coordinator.request_stop(); });
    std::optional<Error> failure;
    while (!stop.stop_requested()) {
      Step(factory, stop);
      std::unique_lock lock(mu);
      if (serve_failure) {
        failure = serve_failure;
        break;
      }
      cv.wait_for(lock, stop, config.retry_period, [this] { return woken || serve_failure; });
      woken = false;
    }
    serving_all = false;
    serving->StopForGood();
    serving->StopAll();
    coordinator.request_stop();
    coordinator.join();
    ReleaseAll(factory);
    factory.Shutdown();
    member = false;
    if (failure) return *failure;
    return OkStatus();
  }
};

Result<std::unique_ptr<ShardManager>> ShardManager::Create(ShardManagerConfig config) {
  if (config.client == nullptr || config.informer_client == nullptr) {
    return Error::Local("InvalidConfig", "no client");
  }
  if (!config.new_serving) return Error::Local("InvalidConfig", "nothing to serve the ranges");
  if (config.identity.empty() || config.name.empty() || config.lease_namespace.empty()) {
    return Error::Local("InvalidConfig", "identity, lease name and namespace are required");
  }
  return std::unique_ptr<ShardManager>(new ShardManager(std::make_unique<Impl>(std::move(config))));
}

ShardManager::ShardManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShardManager::~ShardManager() = default;

std::string ShardManager::MapLeaseName(const std::string& name) {
  return name + "-shards";
}

std::string ShardManager::MemberLeaseName(const std::string& name, const std::string& identity) {
  return sharding::MemberLeaseName(name, identity);
}

bool ShardManager::Coordinating() const {
  return impl_->coordinating;
}

Status ShardManager::Ready() const {
  if (!impl_->member) return Error::Local("NotMember", "the member lease is not held");
  if (!impl_->serving_all) return Error::Local("NotServing", "the shard map is not read yet");
  return OkStatus();
}

Status ShardManager::Healthy() const {
  std::shared_ptr<leaderelection::LeaderElector> elector;
  {
    std::lock_guard lock(impl_->elector_mu);
    elector = impl_->member_elector;
  }
  // The tolerance of the leader's check (upstream's NewLeaderHealthzAdaptor(20 s)).
  return elector ? elector->Check(std::chrono::seconds(20)) : OkStatus();
}

Status ShardManager::Run(std::stop_token stop) {
  Impl& d = *impl_;
  std::stop_source run;
  std::stop_callback forward(stop, [&run] { run.request_stop(); });
  Status result = OkStatus();       // written by the member's work, read after it joined
  std::atomic<bool> failed{false};  // the work failed (not a lost lease)
  bool lost = false;
  leaderelection::LeaderElectionConfig lc;
  const std::string member_name = MemberLeaseName(d.config.name, d.config.identity);
  d.member_lock = std::make_shared<leaderelection::LeaseLock>(
      d.config.client, d.config.lease_namespace, member_name, d.config.identity);
  lc.lock = d.member_lock;
  lc.lease_duration = d.config.lease_duration;
  lc.renew_deadline = d.config.renew_deadline;
  lc.retry_period = d.config.retry_period;
  lc.release_on_cancel = true;
  lc.name = member_name;
  lc.clock = &d.clock;
  lc.callbacks.on_started_leading = [&](std::stop_token leading) {
    KLOG_INFOS("Joined", "member", klog::KRef(d.config.lease_namespace, member_name));
    result = d.ServeShare(leading);
    // A failed serve ends the membership (the leases are given back on the way out).
    if (!result.ok()) {
      failed = true;
      run.request_stop();
    }
  };
  lc.callbacks.on_stopped_leading = [&] {
    if (!stop.stop_requested() && !failed) lost = true;
  };
  auto e = leaderelection::LeaderElector::Create(std::move(lc));
  if (!e.ok()) return e.error();
  std::shared_ptr<leaderelection::LeaderElector> elector = std::move(*e);
  {
    std::lock_guard lock(d.elector_mu);
    d.member_elector = elector;
  }
  elector->Run(run.get_token());
  {
    std::lock_guard lock(d.elector_mu);
    d.member_elector.reset();
  }
  if (lost) {
    return Error::Local("MemberLeaseLost",
                        "lost member lease " + d.config.lease_namespace + "/" + member_name);
  }
  return result;
}

}  // namespace kcm::sharding
