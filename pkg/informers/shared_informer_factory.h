// SharedInformerFactory: one SharedIndexInformer per resource, shared by every controller, with a
// default resync period and per-resource overrides (behaviour 6). Thread-safe. Start runs each new
// informer on its own thread; Shutdown (or the destructor) stops and joins them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/delta_fifo.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/client/rest_client.h"
#include "pkg/informers/listers.h"
#include "pkg/informers/resource_lister_watcher.h"
#include "pkg/informers/resources.h"
#include "pkg/informers/sharded_lister_watcher.h"
#include "pkg/util/clock.h"

namespace kcm::informers {

struct SharedInformerFactoryOptions {
  std::string namespace_;                   // "" = all namespaces (6.1)
  TweakListOptionsFunc tweak_list_options;  // label/field selectors for every informer (6.1)
  std::map<std::string, Clock::duration> custom_resync;    // by ResourceType::name (6.2)
  std::map<std::string, cache::TransformFunc> transforms;  // by ResourceType::name (6.1)
  bool use_watch_list = false;                             // streaming list (behaviour 2.7)
  // Only this shard of every namespaced resource, asked of the server and kept on our side
  // (ShardedListerWatcher); nullopt = every object. With the REST constructor only.
  std::optional<api::ShardSelector> shard_selector;
  ShardFilterObserver shard_filter_observer;  // told whether the server applied it
  // Namespaced informers are made without objects of their own: AddShard gives each a source per
  // shard, added and removed while they run (docs/design/sharding.md, "Serving a
  // share"). Not with shard_selector.
  bool shard_sources = false;
  // The informers (by InformerKey) whose shard sources AddShard adds first, in this order, each
  // synced before the next is added; RemoveShard removes them last, in reverse. The others come
  // after them, and go before them.
  std::vector<std::string> shard_source_order;
  Clock* clock = nullptr;  // null = RealClock
};

// A resource's informer and its typed lister.
template <typename T>
struct TypedInformer {
  std::shared_ptr<cache::SharedIndexInformer> informer;
  TypedLister<T> lister;
};

// The factory's key for a resource: ResourceType::name, prefixed "generic:" for schema-less
// (GenericResource) informers so they never share a cache with the typed informer of the same
// resource. WaitForCacheSync reports by this key.
std::string InformerKey(const ResourceType& resource);

class SharedInformerFactory {
 public:
  // Makes a ResourceListerWatcher for a resource, of one shard when `shard` is set (an informer's
  // source, AddShard); tests swap in fakes.
  using ListerWatcherFactory = std::function<std::shared_ptr<cache::ListerWatcher>(
      const ResourceType&, const api::ShardSelector* shard)>;

  SharedInformerFactory(std::shared_ptr<client::RestClient> client, Clock::duration default_resync,
                        SharedInformerFactoryOptions options = {});
  SharedInformerFactory(ListerWatcherFactory lister_watchers, Clock::duration default_resync,
                        SharedInformerFactoryOptions options = {});
  ~SharedInformerFactory();
  SharedInformerFactory(const SharedInformerFactory&) = delete;
  SharedInformerFactory& operator=(const SharedInformerFactory&) = delete;

  // The one informer of this resource (by InformerKey); the first call creates it with this
  // factory's options (6.2).
  std::shared_ptr<cache::SharedIndexInformer> InformerFor(const ResourceType& resource);

  TypedInformer<api::Pod> Pods();
  TypedInformer<api::ReplicaSet> ReplicaSets();
  TypedInformer<api::Deployment> Deployments();

  // Starts every informer not started yet; safe to call again after adding informers (6.3).
  // Informers stop when `stop` is requested or on Shutdown.
  void Start(std::stop_token stop);
  // Waits for the started informers; per InformerKey, whether it synced before `stop` or
  // Shutdown (6.3).
  std::map<std::string, bool> WaitForCacheSync(std::stop_token stop);
  // Stops every informer and waits for their threads (6.3). Idempotent.
  void Shutdown();

  // With options.shard_sources: every namespaced informer, and each made later, lists and
  // watches the namespaces `shard` selects through a source named `name`, which keeps only
  // their objects. The sources are added one informer at a time (options.shard_source_order
  // first), each once the one before has its first list in; returns when the last has, or with
  // an error when `stop` came first (the sources added stay until RemoveShard). Error when the
  // name is taken or the factory has shut down.
  Status AddShard(const std::string& name, const api::ShardSelector& shard,
                  std::stop_token stop = {});
  // Stops the shard's sources, in the reverse order: its objects leave every cache, with a
  // delete for the handlers. Error when there is no such shard.
  Status RemoveShard(const std::string& name);

 private:
  struct Entry {
    std::shared_ptr<cache::SharedIndexInformer> informer;
    ResourceType resource;
    bool started = false;
  };

  ListerWatcherFactory lister_watchers_;
  const Clock::duration default_resync_;
  const SharedInformerFactoryOptions options_;

  std::mutex mu_;
  std::map<std::string, Entry> informers_;
  // The namespaced informers in the order AddShard adds their sources (guarded by mu_).
  std::vector<Entry*> ShardSourceOrderLocked();

  // AddShard's shards, by name: the sources of each namespaced informer.
  std::map<std::string, api::ShardSelector> shards_;
  std::stop_source shutdown_;
  // One table for all informers' decoders (ResourceListerWatcher): equal label sets, owner
  // references and strings of different resources share one copy (a pod's labels and its
  // ReplicaSet's template labels).
  std::shared_ptr<api::InternTable> interner_ = std::make_shared<api::InternTable>();
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> forwards_;
  std::vector<std::jthread> threads_;
  bool shut_down_ = false;
};

}  // namespace kcm::informers
