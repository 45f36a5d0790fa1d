#include "pkg/informers/shared_informer_factory.h"

#include <algorithm>
#include <memory>

#include "pkg/api/shared_text.h"
#include "pkg/cache/index.h"
#include "pkg/util/any_stop.h"
#include "pkg/util/klog.h"

namespace kcm::informers {
namespace {

// Whether a resource's objects are watched with their kept text plain and packed by their informer
// once they stay unchanged (SharedIndexInformerOptions::compact), instead of packed at every watch
// event: ReplicaSets and Deployments, whose codec can pack their kept text. The lister-watcher and
// the informer must agree on it.
bool PacksOnceUnchanged(const ResourceType& r) {
  return r.codec->pack_kept_text != nullptr;
}

// The keys ("namespace/name") of the namespaces `shard` selects.
cache::SourceFilter KeysIn(const api::ShardSelector& shard) {
  return [shard](std::string_view key) {
    const size_t slash = key.find('/');
    return slash != std::string_view::npos && shard.Matches(key.substr(0, slash));
  };
}

}  // namespace

std::string InformerKey(const ResourceType& resource) {
  // A typed informer and a schema-less one of the same resource hold different object types;
  // sharing one would hand a GenericObject to a typed lister's cast.
  return resource.codec == &api::GenericCodec() ? "generic:" + resource.name : resource.name;
}

SharedInformerFactory::SharedInformerFactory(std::shared_ptr<client::RestClient> client,
                                             Clock::duration default_resync,
                                             SharedInformerFactoryOptions options)
    : SharedInformerFactory(
          [this, client, ns = options.namespace_, tweak = options.tweak_list_options,
           shard = options.shard_selector, observer = options.shard_filter_observer](
              const ResourceType& r,
              const api::ShardSelector* source) -> std::shared_ptr<cache::ListerWatcher> {
            auto rc = std::make_shared<client::ResourceClient>(client, r.gvr, r.namespaced);
            // shutdown_ is set by Shutdown and by the stop token given to Start.
            auto lw = std::make_shared<ResourceListerWatcher>(
                rc, r.namespaced ? ns : "", *r.codec, tweak, shutdown_.get_token(), interner_);
            if (PacksOnceUnchanged(r)) lw->set_pack_watched_objects(false);
            if (source != nullptr) {
              return std::make_shared<ShardedListerWatcher>(std::move(lw), *source, observer);
            }
            if (shard && r.namespaced) {
              return std::make_shared<ShardedListerWatcher>(std::move(lw), *shard, observer);
            }
            return lw;
          },
          default_resync, options) {}

SharedInformerFactory::SharedInformerFactory(ListerWatcherFactory lister_watchers,
                                             Clock::duration default_resync,
                                             SharedInformerFactoryOptions options)
    : lister_watchers_(std::move(lister_watchers)),
      default_resync_(default_resync),
      options_(std::move(options)) {}

SharedInformerFactory::~SharedInformerFactory() {
  Shutdown();
}

std::shared_ptr<cache::SharedIndexInformer> SharedInformerFactory::InformerFor(
    const ResourceType& resource) {
  std::lock_guard lock(mu_);
  const std::string key = InformerKey(resource);
  auto it = informers_.find(key);
  if (it != informers_.end()) return it->second.informer;

  cache::SharedIndexInformerOptions o;
  o.name = resource.name;
  o.expected_kind = std::string(resource.codec->kind);
  auto custom = options_.custom_resync.find(resource.name);
  o.resync_period = custom != options_.custom_resync.end() ? custom->second : default_resync_;
  o.indexers = {{cache::kNamespaceIndex, cache::MetaNamespaceIndexFunc}};
  o.use_watch_list = options_.use_watch_list;
  o.clock = options_.clock;
  if (PacksOnceUnchanged(resource)) {
    // One packer per informer, used on its processing thread only.
    o.compact = [pack = resource.codec->pack_kept_text,
                 packer = std::make_shared<api::TextPacker>()](const api::Object& obj) {
      return pack(obj, *packer);
    };
    o.compactable = resource.codec->kept_text_plain;
  }
  const bool sourced = options_.shard_sources && resource.namespaced;
  auto informer = std::make_shared<cache::SharedIndexInformer>(
      sourced ? nullptr : lister_watchers_(resource, nullptr), std::move(o));
  if (auto t = options_.transforms.find(resource.name); t != options_.transforms.end()) {
    // Cannot fail: the informer has not started.
    (void)informer->SetTransform(t->second);
  }
  if (sourced) {
    for (const auto& [name, shard] : shards_) {
      // Cannot fail: a new informer, a new name.
      (void)informer->AddSource(name, lister_watchers_(resource, &shard), KeysIn(shard));
    }
  }
  informers_.emplace(key, Entry{informer, resource, false});
  return informer;
}

TypedInformer<api::Pod> SharedInformerFactory::Pods() {
  auto inf = InformerFor(PodsResource());
  return {inf, PodLister(inf->GetIndexer())};
}

TypedInformer<api::ReplicaSet> SharedInformerFactory::ReplicaSets() {
  auto inf = InformerFor(ReplicaSetsResource());
  return {inf, ReplicaSetLister(inf->GetIndexer())};
}

TypedInformer<api::Deployment> SharedInformerFactory::Deployments() {
  auto inf = InformerFor(DeploymentsResource());
  return {inf, DeploymentLister(inf->GetIndexer())};
}

void SharedInformerFactory::Start(std::stop_token stop) {
  std::lock_guard lock(mu_);
  if (shut_down_) return;
  // Either the caller's stop or Shutdown ends the informers.
  std::stop_source& own = shutdown_;
  forwards_.push_back(std::make_unique<std::stop_callback<std::function<void()>>>(
      stop, std::function<void()>([&own] { own.request_stop(); })));
  for (auto& [name, entry] : informers_) {
    if (entry.started) continue;
    entry.started = true;
    threads_.emplace_back(
        [informer = entry.informer, token = shutdown_.get_token()] { informer->Run(token); });
    KLOG_V_INFOS(1, "Started informer", "informer", name);
  }
}

std::map<std::string, bool> SharedInformerFactory::WaitForCacheSync(std::stop_token stop) {
  std::vector<std::pair<std::string, std::shared_ptr<cache::SharedIndexInformer>>> started;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, entry] : informers_) {
      if (entry.started) started.emplace_back(name, entry.informer);
    }
  }
  // Shutdown ends the wait too: a stopped informer never syncs.
  const AnyStop either(stop, shutdown_.get_token());
  std::map<std::string, bool> result;
  Clock& clock = options_.clock ? *options_.clock : RealClock::Get();
  // An informer's watermark moves when the indexer has applied its initial list's last item (the
  // list is one push), which is when HasSynced turns true: wake the poll then, not up to 100 ms
  // later. The poll stays for anything else that makes HasSynced true.
  auto waker = std::make_shared<cache::SyncWaker>();
  for (auto& [name, informer] : started) {
    const uint64_t id = informer->AddStoreSyncListener([waker] { waker->Wake(); });
    result[name] = cache::WaitForCacheSync(
        either.token(), {[informer] { return informer->HasSynced(); }}, clock, waker.get());
    informer->RemoveStoreSyncListener(id);
  }
  return result;
}

std::vector<SharedInformerFactory::Entry*> SharedInformerFactory::ShardSourceOrderLocked() {
  std::vector<Entry*> order;
  for (const std::string& key : options_.shard_source_order) {
    if (auto it = informers_.find(key); it != informers_.end() && it->second.resource.namespaced) {
      order.push_back(&it->second);
    }
  }
  for (auto& [key, entry] : informers_) {
    if (!entry.resource.namespaced ||
        std::find(order.begin(), order.end(), &entry) != order.end()) {
      continue;
    }
    order.push_back(&entry);
  }
  return order;
}

Status SharedInformerFactory::AddShard(const std::string& name, const api::ShardSelector& shard,
                                       std::stop_token stop) {
  std::vector<std::pair<std::shared_ptr<cache::SharedIndexInformer>, ResourceType>> informers;
  {
    std::lock_guard lock(mu_);
    if (!options_.shard_sources) {
      return Error::Local("InvalidArgument", "the informer factory does not take shards");
    }
    if (shut_down_) return Error::Local("FactoryShutDown", "shard " + name + " not added");
    if (!shards_.emplace(name, shard).second) {
      return Error::Local("ShardExists", "shard " + name + " exists");
    }
    for (Entry* entry : ShardSourceOrderLocked()) {
      informers.emplace_back(entry->informer, entry->resource);
    }
  }
  // Without mu_: the waits below take as long as a list.
  const AnyStop either(stop, shutdown_.get_token());
  Clock& clock = options_.clock ? *options_.clock : RealClock::Get();
  for (const auto& [informer, resource] : informers) {
    if (Status s = informer->AddSource(name, lister_watchers_(resource, &shard), KeysIn(shard));
        !s.ok()) {
      return s;
    }
    auto waker = std::make_shared<cache::SyncWaker>();
    const uint64_t id = informer->AddStoreSyncListener([waker] { waker->Wake(); });
    const bool synced = cache::WaitForCacheSync(
        either.token(), {[informer, &name] { return informer->SourceHasSynced(name); }}, clock,
        waker.get());
    informer->RemoveStoreSyncListener(id);
    if (!synced) {
      return Error::Local("ShardStopped", "shard " + name + " stopped before its caches synced");
    }
  }
  return OkStatus();
}

Status SharedInformerFactory::RemoveShard(const std::string& name) {
  std::vector<std::shared_ptr<cache::SharedIndexInformer>> informers;
  {
    std::lock_guard lock(mu_);
    if (shards_.erase(name) == 0) return Error::Local("NoSuchShard", "no shard " + name);
    for (Entry* entry : ShardSourceOrderLocked()) informers.push_back(entry->informer);
  }
  // Without mu_: a removal joins the source's threads, whose handlers may ask for informers. In
  // the reverse order: an owner's objects leave before what it owns.
  for (auto it = informers.rbegin(); it != informers.rend(); ++it) {
    // NotFound: AddShard was stopped before it reached this informer.
    (void)(*it)->RemoveSource(name);
  }
  return OkStatus();
}

void SharedInformerFactory::Shutdown() {
  std::vector<std::jthread> threads;
  {
    std::lock_guard lock(mu_);
    shut_down_ = true;
    shutdown_.request_stop();
    threads = std::move(threads_);
  }
  threads.clear();  // Joins every informer thread.
  std::lock_guard lock(mu_);
  forwards_.clear();
}

}  // namespace kcm::informers
