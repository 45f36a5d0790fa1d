#include "pkg/sharding/shard_manager.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "pkg/api/compare_resource_version.h"
#include "pkg/api/generic_object.h"
#include "pkg/api/json.h"
#include "pkg/api/lease.h"
#include "pkg/client/resource_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/metrics/metrics.h"
#include "pkg/sharding/assignment.h"
#include "pkg/sharding/membership.h"
#include "pkg/sharding/shard_map.h"

namespace kcm::sharding {
namespace {

// The annotation of Lease `<name>-shards` that holds the ShardMap.
constexpr std::string_view kMapAnnotation = "kube-controller-manager-cpp/shard-map";

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

// Serve calls a replica keeps side by side before it joins them into one (ReconcileStacks).
constexpr size_t kMaxServeCalls = 4;

// Intervals of `a` not covered by `b` (both sorted, disjoint).
std::vector<api::ShardRange> Subtract(const std::vector<api::ShardRange>& a,
                                      const std::vector<api::ShardRange>& b) {
  std::vector<api::ShardRange> out;
  for (api::ShardRange r : a) {
    bool empty = false;
    for (const api::ShardRange& c : b) {
      if (c.last < r.first || c.first > r.last) continue;
      if (c.first > r.first) out.push_back({r.first, c.first - 1});
      if (c.last >= r.last) {
        empty = true;
        break;
      }
      r.first = c.last + 1;
    }
    if (!empty) out.push_back(r);
  }
  std::sort(out.begin(), out.end(),
            [](const api::ShardRange& x, const api::ShardRange& y) { return x.first < y.first; });
  return out;
}

bool Covered(const std::vector<api::ShardRange>& inner, const std::vector<api::ShardRange>& outer) {
  return Subtract(inner, outer).empty();
}

bool Intersects(const std::vector<api::ShardRange>& a, const std::vector<api::ShardRange>& b) {
  for (const api::ShardRange& x : a) {
    for (const api::ShardRange& y : b) {
      if (!(y.last < x.first || y.first > x.last)) return true;
    }
  }
  return false;
}

std::string Describe(const std::vector<api::ShardRange>& ranges) {
  return api::ShardSelector(api::ShardField::kNamespace, ranges).String();
}

}  // namespace

// The map as this replica last knew it: from the informer, or from its own last write while the
// informer has not shown that write yet (acting on an older map could restart a range it handed
// on).
struct KnownMap {
  std::string resource_version;
  std::string raw_json;  // the Lease object
  Result<ShardMap> map = ShardMap();
};

struct ShardManager::Impl {
  ShardManagerConfig config;
  Clock& clock;
  client::ResourceClient leases;
  Membership membership;
  api::Decoder lease_decoder;  // Run's thread only
  ShardMetrics metrics;

  // A set of ranges being served by one `serve` call.
  struct Stack {
    std::vector<api::ShardRange> ranges;
    std::stop_source stop;
    std::jthread thread;
  };
  std::list<Stack> stacks;  // Run's thread only

  std::optional<KnownMap> written;  // our last successful write
  std::string bad_map_rv;           // the resourceVersion of an unreadable map, logged once
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

  explicit Impl(ShardManagerConfig c)
      : config(std::move(c)),
        clock(config.clock != nullptr ? *config.clock : RealClock::Get()),
        leases(config.client, kLeases, true),
        membership(config.name, clock, config.clock_skew,
                   2 * config.retry_period + std::chrono::seconds(1)) {}

  void Wake() {
    {
      std::lock_guard lock(mu);
      woken = true;
    }
    cv.notify_all();
  }

  std::string MapName() const { return ShardManager::MapLeaseName(config.name); }
  std::string MemberName(const std::string& identity) const {
    return ShardManager::MemberLeaseName(config.name, identity);
  }

  // --- the map Lease ---

  // A member Lease through the Lease codec (pkg/api/lease.h); nullopt when it does not decode.
  std::optional<MemberLease> ParseMemberLease(const std::string& raw) {
    auto lease = api::DecodeLease(lease_decoder, raw);
    if (!lease.ok()) return std::nullopt;
    const api::Lease& l = **lease;
    MemberLease m;
    m.name = l.metadata.name;
    m.resource_version = l.metadata.resource_version.str();
    m.holder = l.spec.holder_identity.value_or("");
    m.lease_duration_seconds = l.spec.lease_duration_seconds.value_or(0);
    m.renew_time = l.spec.renew_time;
    return m;
  }

  // The map in a Lease object's JSON (its annotation; a fresh map when it has none yet).
  static KnownMap ReadMap(const std::string& raw) {
    KnownMap k;
    k.raw_json = raw;
    auto doc = api::json::Parse(raw);
    const api::json::Value* meta = doc.ok() && doc->is_object() ? doc->Find("metadata") : nullptr;
    if (meta == nullptr || !meta->is_object()) {
      k.map = Error::Local("InvalidShardMap", "the Lease has no metadata");
      return k;
    }
    if (const auto* rv = meta->Find("resourceVersion"); rv != nullptr && rv->is_string()) {
      k.resource_version = rv->as_string();
    }
    const api::json::Value* annotations = meta->Find("annotations");
    const api::json::Value* text = annotations != nullptr && annotations->is_object()
                                       ? annotations->Find(kMapAnnotation)
                                       : nullptr;
    if (text == nullptr) {
      k.map = ShardMap();
    } else if (!text->is_string()) {
      k.map = Error::Local("InvalidShardMap", "the annotation is not a string");
    } else {
      k.map = ShardMap::Parse(text->as_string());
    }
    return k;
  }

  // The newer of the informer's map and our own last write; nullopt when there is no map Lease.
  std::optional<KnownMap> LatestMap(cache::Indexer& cached) {
    auto obj = cached.GetByKey(config.lease_namespace + "/" + MapName());
    std::optional<KnownMap> seen;
    if (obj != nullptr) seen = ReadMap(static_cast<const api::GenericObject&>(*obj).raw_json);
    if (!written) return seen;
    // The informer's copy is older than our write only when the two compare and it is lower; a
    // resourceVersion that does not compare (api::CompareResourceVersion) is taken as newer
    // when it differs, so an unusual server cannot pin us to our own write.
    if (!seen || seen->resource_version == written->resource_version) return written;
    auto cmp = api::CompareResourceVersion(seen->resource_version, written->resource_version);
    if (cmp.ok() && *cmp < 0) return written;
    return seen;
  }

  Status CreateMapLease(std::stop_token stop) {
    api::json::Value obj = api::json::Value::MakeObject();
    obj.Set("apiVersion", api::json::Value::String("coordination.k8s.io/v1"));
    obj.Set("kind", api::json::Value::String("Lease"));
    api::json::Value meta = api::json::Value::MakeObject();
    meta.Set("name", api::json::Value::String(MapName()));
    meta.Set("namespace", api::json::Value::String(config.lease_namespace));
    api::json::Value annotations = api::json::Value::MakeObject();
    annotations.Set(kMapAnnotation, api::json::Value::String(ShardMap().Serialize()));
    meta.Set("annotations", std::move(annotations));
    obj.Set("metadata", std::move(meta));
    obj.Set("spec", api::json::Value::MakeObject());
    auto r = leases.Create(config.lease_namespace, api::json::Serialize(obj), {}, stop);
    if (!r.ok() && !errors::IsAlreadyExists(r.error())) return r.error();
    if (r.ok()) LOG(INFO) << "created the shard map " << config.lease_namespace << "/" << MapName();
    return OkStatus();
  }

  // Compare-and-swap of the map: the Lease as last read, with the annotation replaced. False on a
  // conflict (someone wrote in between; the informer brings the new map).
  Result<bool> WriteMap(const KnownMap& base, const ShardMap& next, std::stop_token stop) {
    auto doc = api::json::Parse(base.raw_json);
    if (!doc.ok()) return doc.error();
    api::json::Value* meta = doc->is_object() ? doc->Find("metadata") : nullptr;
    if (meta == nullptr || !meta->is_object()) {
      return Error::Local("InvalidShardMap", "the shard map Lease has no metadata");
    }
    meta->Set("resourceVersion", api::json::Value::String(base.resource_version));
    api::json::Value* annotations = meta->Find("annotations");
    if (annotations == nullptr || !annotations->is_object()) {
      annotations = &meta->Set("annotations", api::json::Value::MakeObject());
    }
    annotations->Set(kMapAnnotation, api::json::Value::String(next.Serialize()));
    meta->Erase("managedFields");
    auto r = leases.Update(config.lease_namespace, MapName(), api::json::Serialize(*doc), {}, stop);
    if (!r.ok()) {
      if (errors::IsConflict(r.error())) return false;
      return r.error();
    }
    auto answer = api::json::Parse(*r);
    if (!answer.ok()) return answer.error();
    KnownMap k;
    k.raw_json = *r;
    if (const auto* m = answer->Find("metadata"); m != nullptr && m->is_object()) {
      if (const auto* rv = m->Find("resourceVersion"); rv != nullptr && rv->is_string()) {
        k.resource_version = rv->as_string();
      }
    }
    k.map = next;
    written = std::move(k);
    return true;
  }

  // --- members ---

  // Who may still be serving (`may_serve`: their ranges stay theirs) and who may be given ranges
  // (`members`), this replica included in both.
  struct Live {
    std::set<std::string> may_serve;
    std::set<std::string> members;
  };

  Live LiveMembers(cache::Indexer& cached, const ShardMap& map, std::stop_token stop) {
    const std::string prefix = config.name + "-member-";
    std::vector<MemberLease> seen;
    for (const api::ObjectPtr& o : cached.List()) {
      if (!o->Meta().name.starts_with(prefix)) continue;
      if (auto l = ParseMemberLease(static_cast<const api::GenericObject&>(*o).raw_json)) {
        seen.push_back(std::move(*l));
      }
    }
    membership.Update(seen);
    // An owner that looks dead is declared dead only on a fresh read of its Lease: the informer
    // may lag behind its renewals.
    std::set<std::string> alive = membership.MayServe();
    std::set<std::string> suspects;
    for (const ShardMapEntry& e : map.entries()) {
      for (const std::string* who : {&e.owner, &e.next}) {
        if (!who->empty() && *who != config.identity && !alive.contains(*who)) {
          suspects.insert(*who);
        }
      }
    }
    bool unsure = false;
    for (const std::string& who : suspects) {
      const std::string lease_name = MemberLeaseName(config.name, who);
      auto r = leases.Get(config.lease_namespace, lease_name, {}, stop);
      if (r.ok()) {
        if (auto l = ParseMemberLease(*r)) membership.Observe(*l);
      } else if (errors::IsNotFound(r.error())) {
        membership.Deleted(lease_name);
      } else {
        unsure = true;  // not dead until a read says so
        LOG(WARNING) << "reading the member lease of " << who << ": " << r.error().ToString();
      }
    }
    Live live{membership.MayServe(), membership.Members()};
    if (unsure) live.may_serve.insert(suspects.begin(), suspects.end());
    live.may_serve.insert(config.identity);
    live.members.insert(config.identity);
    metrics.members.Set(static_cast<double>(live.members.size()));
    return live;
  }

  // The coordinator deletes the Leases of replicas dead for a minute (each start joins under a
  // new identity, so they would pile up), on the resourceVersion it judged.
  void DeleteStaleMembers(cache::Indexer& cached, std::stop_token stop) {
    for (const std::string& name : membership.Stale(std::chrono::minutes(1))) {
      auto obj = cached.GetByKey(config.lease_namespace + "/" + name);
      if (obj == nullptr) continue;
      client::DeleteOptions o;
      o.precondition_resource_version = obj->Meta().resource_version.str();
      auto r = leases.Delete(config.lease_namespace, name, o, stop);
      if (r.ok()) LOG(INFO) << "deleted the lease of a departed replica: " << name;
    }
  }

  // --- serving ---

  void StartStack(std::vector<api::ShardRange> ranges) {
    Stack& s = stacks.emplace_back();
    s.ranges = std::move(ranges);
    api::ShardSelector shard(api::ShardField::kNamespace, s.ranges);
    LOG(INFO) << "serving " << shard.String();
    s.thread = std::jthread([this, shard, token = s.stop.get_token()] {
      Status st = config.serve(shard, token);
      if (token.stop_requested()) return;
      {
        std::lock_guard lock(mu);
        if (!serve_failure) {
          serve_failure = st.ok() ? Error::Local("ServeStopped", "serving " + shard.String() +
                                                                     " returned before stop")
                                  : st.error();
        }
      }
      Wake();
    });
  }

  void StopStack(std::list<Stack>::iterator it) {
    LOG(INFO) << "stopping " << Describe(it->ranges);
    it->stop.request_stop();
    it->thread.join();  // none of its writes is in flight after this
    stacks.erase(it);
  }

  void StopStacksIntersecting(const std::vector<api::ShardRange>& ranges) {
    for (auto it = stacks.begin(); it != stacks.end();) {
      auto cur = it++;
      if (Intersects(cur->ranges, ranges)) StopStack(cur);
    }
  }

  void StopAllStacks() {
    while (!stacks.empty()) StopStack(stacks.begin());
  }

  // Serves exactly `served`: stops a stack holding anything else, starts one for what no stack
  // holds (or, past kMaxServeCalls, one for everything).
  void ReconcileStacks(const std::vector<api::ShardRange>& served) {
    std::vector<api::ShardRange> held;
    for (auto it = stacks.begin(); it != stacks.end();) {
      auto cur = it++;
      if (!Covered(cur->ranges, served)) {
        StopStack(cur);
        continue;
      }
      held.insert(held.end(), cur->ranges.begin(), cur->ranges.end());
    }
    std::sort(held.begin(), held.end(),
              [](const api::ShardRange& x, const api::ShardRange& y) { return x.first < y.first; });
    std::vector<api::ShardRange> missing = Subtract(served, held);
    if (!missing.empty() && stacks.size() >= kMaxServeCalls) {
      // Each call holds its own informers (three watches) and workers: after many changes of
      // membership, serve everything through one call again, at the cost of one relist.
      LOG(INFO) << "serving " << served.size() << " ranges through one set of informers again";
      StopAllStacks();
      StartStack(served);
    } else if (!missing.empty()) {
      StartStack(std::move(missing));
    }
    metrics.ranges.Set(static_cast<double>(served.size()));
  }

  // --- one pass ---

  void Step(informers::SharedInformerFactory& factory, std::stop_token stop) {
    auto lease_indexer =
        factory.InformerFor(informers::GenericResource(kLeases, true))->GetIndexer();
    auto ns_indexer =
        factory.InformerFor(informers::GenericResource(kNamespaces, false))->GetIndexer();
    std::optional<KnownMap> known = LatestMap(*lease_indexer);
    if (!known) {
      if (Status s = CreateMapLease(stop); !s.ok()) {
        LOG(ERROR) << "creating the shard map: " << s.error().ToString();
      }
      return;
    }
    if (!known->map.ok()) {
      // Nobody can tell who owns what: serve nothing rather than risk two writers; an operator
      // who deletes the Lease starts a new map.
      if (bad_map_rv != known->resource_version) {
        LOG(ERROR) << "the shard map " << config.lease_namespace << "/" << MapName()
                   << " is unreadable, serving nothing until it is fixed or deleted: "
                   << known->map.error().ToString();
        bad_map_rv = known->resource_version;
      }
      StopAllStacks();
      return;
    }
    const ShardMap& map = *known->map;
    const Live live = LiveMembers(*lease_indexer, map, stop);
    std::vector<uint64_t> hashes;
    for (const std::string& key : ns_indexer->ListKeys()) hashes.push_back(api::ShardHash(key));
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
    const Partition desired = DesiredPartition(live.members, hashes, map);

    ShardMap next = map;
    std::vector<api::ShardRange> owed;
    for (const ShardMapEntry& e : map.entries()) {
      if (e.owner == config.identity && !e.next.empty()) owed.push_back(e.range);
    }
    if (!owed.empty()) {
      StopStacksIntersecting(owed);
      CompleteHandoffs(next, config.identity);
    }
    AssignFree(next, desired, live.may_serve);
    if (coordinating && Unbalanced(Load(next, live.members, hashes), hashes.size())) {
      if (Rebalance(next, desired, live.may_serve)) {
        LOG(INFO) << "rebalancing " << hashes.size() << " namespaces over " << live.members.size()
                  << " replicas";
      }
    }
    if (coordinating) DeleteStaleMembers(*lease_indexer, stop);
    const ShardMap* current = &map;
    if (!(next == map)) {
      auto w = WriteMap(*known, next, stop);
      if (!w.ok()) {
        LOG(ERROR) << "writing the shard map: " << w.error().ToString();
      } else if (*w) {
        Count(map, next);
        current = &written->map.value();
      }
    }
    const std::vector<api::ShardRange> served = current->Served(config.identity);
    ReconcileStacks(served);
    serving_all = true;
    int mine = 0;
    for (uint64_t h : hashes) {
      for (const api::ShardRange& r : served) mine += r.Contains(h) ? 1 : 0;
    }
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

  // After a stop: hands every range on (stacks are stopped already). A few tries; a replica that
  // cannot reach the server leaves its ranges to expire with its member Lease.
  void ReleaseAll(informers::SharedInformerFactory& factory) {
    std::stop_source own;  // the run's token has ended; the client's timeout bounds each try
    auto lease_indexer =
        factory.InformerFor(informers::GenericResource(kLeases, true))->GetIndexer();
    auto ns_indexer =
        factory.InformerFor(informers::GenericResource(kNamespaces, false))->GetIndexer();
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto raw = leases.Get(config.lease_namespace, MapName(), {}, own.get_token());
      if (!raw.ok()) {
        LOG(ERROR) << "releasing shards: " << raw.error().ToString();
        return;
      }
      KnownMap known = ReadMap(*raw);
      if (!known.map.ok()) return;
      std::set<std::string> others =
          LiveMembers(*lease_indexer, *known.map, own.get_token()).members;
      others.erase(config.identity);
      std::vector<uint64_t> hashes;
      for (const std::string& key : ns_indexer->ListKeys()) hashes.push_back(api::ShardHash(key));
      ShardMap next = *known.map;
      if (!Release(next, config.identity, DesiredPartition(others, hashes, next))) return;
      auto w = WriteMap(known, next, own.get_token());
      if (w.ok() && *w) {
        LOG(INFO) << "handed this replica's ranges to " << others.size() << " other replicas";
        metrics.changes.With({"released"}).Inc();
        return;
      }
      if (!w.ok()) {
        LOG(ERROR) << "releasing shards: " << w.error().ToString();
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
        LOG(INFO) << "coordinating the shard map as " << config.identity;
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
        LOG(ERROR) << "coordinator election: " << e.error().ToString();
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
      if (!synced) LOG(WARNING) << "informer " << key << " not synced";
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
    StopAllStacks();
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
  if (!config.serve) return Error::Local("InvalidConfig", "no serve function");
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
  lc.lock = std::make_shared<leaderelection::LeaseLock>(d.config.client, d.config.lease_namespace,
                                                        member_name, d.config.identity);
  lc.lease_duration = d.config.lease_duration;
  lc.renew_deadline = d.config.renew_deadline;
  lc.retry_period = d.config.retry_period;
  lc.release_on_cancel = true;
  lc.name = member_name;
  lc.clock = &d.clock;
  lc.callbacks.on_started_leading = [&](std::stop_token leading) {
    LOG(INFO) << "joined as " << d.config.lease_namespace << "/" << member_name;
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
