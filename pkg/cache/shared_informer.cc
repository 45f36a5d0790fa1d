#include "pkg/cache/shared_informer.h"

#include <algorithm>
#include <condition_variable>
#include <optional>
#include <thread>

#include "pkg/util/klog.h"

namespace kcm::cache {
namespace {

SharedIndexInformerOptions WithDefaults(SharedIndexInformerOptions options) {
  if (options.clock == nullptr) {
    options.clock = &RealClock::Get();
  }
  if (!options.rand) {
    options.rand = NewRandFunc();
  }
  // Every source's reflector draws its jitter from it, each on its own thread, and a random
  // engine is not safe for concurrent use: one lock for them (a draw per watch, uncontended).
  options.rand = [rand = std::move(options.rand), mu = std::make_shared<std::mutex>()] {
    std::lock_guard lock(*mu);
    return rand();
  };
  return options;
}

// The indexer as one source knows it: only the keys the source owns.
class FilteredKeys final : public KeyListerGetter {
 public:
  FilteredKeys(std::shared_ptr<const Indexer> indexer, SourceFilter owns)
      : indexer_(std::move(indexer)), owns_(std::move(owns)) {}
  std::vector<std::string> ListKeys() const override {
    std::vector<std::string> keys;
    ForEachKey([&](const std::string& key) { keys.push_back(key); });
    return keys;
  }
  void ForEachKey(const std::function<void(const std::string&)>& fn) const override {
    indexer_->ForEachKey([&](const std::string& key) {
      if (owns_(key)) fn(key);
    });
  }
  api::ObjectPtr GetByKey(const std::string& key) const override {
    return owns_(key) ? indexer_->GetByKey(key) : nullptr;
  }

 private:
  const std::shared_ptr<const Indexer> indexer_;
  const SourceFilter owns_;
};

}  // namespace

SharedIndexInformer::SharedIndexInformer(std::shared_ptr<ListerWatcher> lister_watcher,
                                         SharedIndexInformerOptions options)
    : lister_watcher_(std::move(lister_watcher)),
      options_(WithDefaults(std::move(options))),
      clock_(*options_.clock),
      indexer_(NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, options_.indexers)),
      processor_(clock_),
      resync_check_period_(options_.resync_period) {}

SharedIndexInformer::~SharedIndexInformer() = default;

Result<std::shared_ptr<ResourceEventHandlerRegistration>> SharedIndexInformer::AddEventHandler(
    std::shared_ptr<ResourceEventHandler> handler) {
  return AddEventHandlerWithResyncPeriod(std::move(handler), options_.resync_period);
}

Result<std::shared_ptr<ResourceEventHandlerRegistration>> SharedIndexInformer::AddEventHandler(
    ResourceEventHandlerFuncs funcs) {
  return AddEventHandler(MakeResourceEventHandler(std::move(funcs)));
}

Result<std::shared_ptr<ResourceEventHandlerRegistration>>
SharedIndexInformer::AddEventHandlerWithResyncPeriod(std::shared_ptr<ResourceEventHandler> handler,
                                                     Clock::duration resync_period) {
  // block_deltas_ before mu_: the informer's thread holds block_deltas_ while it calls
  // non-blocking handlers, and those may call HasSynced (which takes mu_). While it is held no
  // delta is applied, so whether or not Run has started, the replay below (of an empty cache
  // before start) and the live notifications after it neither overlap nor leave a gap.
  std::lock_guard block(block_deltas_);
  std::shared_ptr<ProcessorListener> listener;
  bool started = false;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      return Error::Local("InformerStopped",
                          options_.name + ": handler not added because the informer has stopped");
    }
    if (resync_period > Clock::duration::zero()) {
      if (resync_period < kMinimumResyncPeriod) {
        KLOG_WARNINGS("Resync period too small, raised to 1s", "informer", options_.name);
        resync_period = kMinimumResyncPeriod;
      }
      if (resync_period < resync_check_period_) {
        if (started_) {
          // The reflector's timer already runs at the check period; it cannot go faster now.
          KLOG_WARNINGS("Resync period smaller than the check period, raised", "informer",
                        options_.name);
          resync_period = resync_check_period_;
        } else {
          resync_check_period_ = resync_period;
          processor_.ResyncCheckPeriodChanged(resync_period);
        }
      }
    }
    listener = std::make_shared<ProcessorListener>(
        std::move(handler), resync_period,
        DetermineResyncPeriod(resync_period, resync_check_period_), clock_.Now(),
        [this] { return HasSynced(); });
    started = started_;
  }
  // Without mu_: a non-blocking handler's replay runs on this thread and may call HasSynced.
  processor_.AddListener(listener);
  if (started) {
    // Replay the cache before returning the registration, so that its HasSynced can never be true
    // before the replay has been handled.
    for (api::ObjectPtr& obj : indexer_->List()) {
      listener->Add(AddNotification{std::move(obj), /*is_in_initial_list=*/true});
    }
  }
  return std::shared_ptr<ResourceEventHandlerRegistration>(listener);
}

Status SharedIndexInformer::RemoveEventHandler(
    const std::shared_ptr<ResourceEventHandlerRegistration>& registration) {
  if (!registration) {
    return Error::Local("InvalidArgument", "null registration");
  }
  // A non-blocking handler is called on the informer's thread under block_deltas_: holding it
  // here means no call is under way once the handler is removed (a listener thread is joined
  // instead).
  const auto* listener = dynamic_cast<const ProcessorListener*>(registration.get());
  std::unique_lock block(block_deltas_, std::defer_lock);
  if (listener != nullptr && listener->non_blocking()) block.lock();
  return processor_.RemoveListener(registration.get());
}

Status SharedIndexInformer::SetTransform(TransformFunc transform) {
  std::lock_guard lock(mu_);
  if (started_) {
    return Error::Local("InformerStarted", options_.name + ": transform must be set before start");
  }
  transform_ = std::move(transform);
  return OkStatus();
}

Status SharedIndexInformer::AddIndexers(const Indexers& indexers) {
  std::lock_guard lock(mu_);
  if (started_) {
    return Error::Local("InformerStarted", options_.name + ": indexers must be added before start");
  }
  return indexer_->AddIndexers(indexers);
}

std::unique_ptr<SharedIndexInformer::Source> SharedIndexInformer::NewSource(
    std::string name, std::shared_ptr<ListerWatcher> lw, SourceFilter owns,
    Clock::duration resync_period) {
  auto source = std::make_unique<Source>();
  source->name = std::move(name);
  source->owns = std::move(owns);
  // A source's relist deletes what it owns and did not list, nothing of another source's: its
  // known objects are the indexer seen through its filter.
  std::shared_ptr<const KeyListerGetter> known = indexer_;
  if (source->owns) known = std::make_shared<FilteredKeys>(indexer_, source->owns);
  source->fifo = std::make_shared<DeltaFIFO>(DeltaFIFOOptions{
      .key_func = DeletionHandlingMetaNamespaceKeyFunc,
      .known_objects = std::move(known),
      .transform = transform_,
      .on_store_sync_advanced = [this] { NotifyStoreSync(); },
  });
  source->reflector =
      std::make_shared<Reflector>(std::move(lw), source->fifo,
                                  ReflectorOptions{
                                      .name = options_.name,
                                      .expected_kind = options_.expected_kind,
                                      .resync_period = resync_period,
                                      .should_resync = [this] { return processor_.ShouldResync(); },
                                      .use_watch_list = options_.use_watch_list,
                                      .clock = &clock_,
                                      .rand = options_.rand,
                                  });
  return source;
}

void SharedIndexInformer::StartSource(Source& source) {
  source.reflector_thread =
      std::jthread([reflector = source.reflector](std::stop_token st) { reflector->Run(st); });
  source.processing_thread = std::jthread([this, fifo = source.fifo] { ProcessLoop(*fifo); });
}

void SharedIndexInformer::StopSource(Source& source) {
  // The consumer first (it ends once the queue is closed), then the producer, as Run does.
  source.fifo->Close();
  if (source.processing_thread.joinable()) source.processing_thread.join();
  if (source.reflector_thread.joinable()) {
    source.reflector_thread.request_stop();
    source.reflector_thread.join();
  }
}

void SharedIndexInformer::Run(std::stop_token stop) {
  std::shared_ptr<DeltaFIFO> fifo;
  std::shared_ptr<Reflector> reflector;
  {
    std::lock_guard lock(mu_);
    if (started_) {
      KLOG_WARNINGS("The sharedIndexInformer has started, run more than once is not allowed",
                    "informer", options_.name);
      return;
    }
    if (lister_watcher_ != nullptr) {
      std::unique_ptr<Source> own = NewSource("", lister_watcher_, nullptr, resync_check_period_);
      fifo = own->fifo;
      reflector = own->reflector;
      fifo_ = fifo;
      reflector_ = reflector;
    }
    started_ = true;
  }

  processor_.Start();
  if (fifo == nullptr) {
    {
      // Sources added before here start now; later ones as they are added (sources_started_).
      std::lock_guard lock(mu_);
      for (auto& source : sources_) StartSource(*source);
      sources_started_ = true;
    }
    ResyncSourcesLoop(stop);
    std::vector<std::unique_ptr<Source>> sources;
    {
      std::lock_guard lock(mu_);
      stopped_ = true;  // AddSource refuses from here
      sources = std::move(sources_);
    }
    for (auto& source : sources) StopSource(*source);
  } else {
    std::jthread reflector_thread([reflector](std::stop_token st) { reflector->Run(st); });
    {
      std::stop_callback close_queue(stop, [&fifo] { fifo->Close(); });
      ProcessLoop(*fifo);
    }
    // Stop the producer before the consumers of what it produced.
    reflector_thread.request_stop();
    reflector_thread.join();
  }
  processor_.Stop();
  std::lock_guard lock(mu_);
  stopped_ = true;
}

void SharedIndexInformer::ProcessLoop(DeltaFIFO& fifo) {
  std::vector<PendingNotification> notifications;  // reused: no allocation per event
  // block_deltas_ is taken before the queue lock (never inside Pop's process, which runs under
  // it): a handler called inline below holds block_deltas_ and may read HasSynced or
  // LastStoreSyncResourceVersion, which take the queue lock. WaitForItem keeps the lock free
  // while the queue is empty, so that AddEventHandler is not held up by a quiet informer.
  for (;;) {
    // Sources' processing loops share the pending compactions: read under block_deltas_.
    std::optional<Clock::duration> compaction_wait;
    {
      std::lock_guard block(block_deltas_);
      if (!compactions_.empty()) {
        // Once a second while compactions are pending, not at each one's due time: every update
        // of a packed kind sets a due time of its own, and waking for each cost a context switch
        // per update (docs/benchmarks/deployment-cpu.md); a compaction a second late changes
        // nothing. A timed wait, not one until the due time: the Clock may be a test's fake
        // one, which a condition variable cannot wait on. Pops run CompactDue too.
        compaction_wait = compactions_.front().due <= clock_.Now()
                              ? Clock::duration::zero()
                              : Clock::duration(std::chrono::seconds(1));
      }
    }
    if (!compaction_wait) {
      if (!fifo.WaitForItem()) break;
    } else if (!fifo.WaitForItemFor(*compaction_wait)) {
      if (fifo.IsClosed()) break;
      std::lock_guard block(block_deltas_);
      CompactDue();
      continue;
    }
    // The indexer changes first, the watermark next, the handlers last: a handler that reads
    // the cache or LastStoreSyncResourceVersion sees at least what its event brought. Deltas
    // and their notifications stay under block_deltas_ together (see AddEventHandler).
    std::lock_guard block(block_deltas_);
    Status s = fifo.Pop(
        [&](const Deltas& deltas, bool is_in_initial_list) {
          return ApplyDeltas(deltas, is_in_initial_list, notifications);
        },
        [&] {
          for (const auto& [notification, is_sync] : notifications) {
            processor_.Distribute(notification, is_sync);
          }
          notifications.clear();
        });
    if (!s.ok() && !fifo.IsClosed()) {
      KLOG_ERRORS(s.error().ToString(), "Processing deltas failed", "informer", options_.name);
    }
    CompactDue();
  }
}

void SharedIndexInformer::ResyncSourcesLoop(std::stop_token stop) {
  Clock::duration period;
  {
    std::lock_guard lock(mu_);
    period = resync_check_period_;
  }
  if (period <= Clock::duration::zero()) {
    // No handler resyncs: only wait for the stop.
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, stop, [] { return false; });
    return;
  }
  while (clock_.SleepFor(period, stop)) {
    if (!processor_.ShouldResync()) continue;
    std::vector<std::shared_ptr<DeltaFIFO>> fifos;
    {
      std::lock_guard lock(mu_);
      for (const auto& source : sources_) fifos.push_back(source->fifo);
    }
    for (const auto& fifo : fifos) {
      if (Status s = fifo->Resync(); !s.ok()) {
        KLOG_ERRORS(s.error().ToString(), "Resync failed", "informer", options_.name);
      }
    }
  }
}

Status SharedIndexInformer::AddSource(const std::string& name,
                                      std::shared_ptr<ListerWatcher> lister_watcher,
                                      SourceFilter owns) {
  if (lister_watcher == nullptr || !owns) {
    return Error::Local("InvalidArgument", options_.name +
                                               ": a source needs a lister-watcher "
                                               "and a filter");
  }
  std::lock_guard lock(mu_);
  if (lister_watcher_ != nullptr) {
    return Error::Local("InvalidArgument",
                        options_.name + ": an informer with a lister-watcher takes no source");
  }
  if (stopped_) {
    return Error::Local("InformerStopped",
                        options_.name + ": source not added because the informer has stopped");
  }
  for (const auto& source : sources_) {
    if (source->name == name) {
      return Error::Local("SourceExists", options_.name + ": source " + name + " exists");
    }
  }
  // The sources' reflectors run no resync timer: ResyncSourcesLoop resyncs them all at once.
  sources_.push_back(
      NewSource(name, std::move(lister_watcher), std::move(owns), Clock::duration::zero()));
  if (sources_started_) StartSource(*sources_.back());
  return OkStatus();
}

Status SharedIndexInformer::RemoveSource(const std::string& name) {
  std::unique_ptr<Source> source;
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(sources_.begin(), sources_.end(),
                           [&](const auto& s) { return s->name == name; });
    if (it == sources_.end()) {
      return Error::Local("NoSuchSource", options_.name + ": no source " + name);
    }
    source = std::move(*it);
    sources_.erase(it);
  }
  // Nothing of the source is applied after this, so the deletes below are its objects' last word.
  StopSource(*source);
  std::lock_guard block(block_deltas_);
  for (const std::string& key : indexer_->ListKeys()) {
    if (!source->owns(key)) continue;
    api::ObjectPtr obj = indexer_->GetByKey(key);
    if (obj == nullptr) continue;
    if (Status s = indexer_->Delete(obj); !s.ok()) return s;
    processor_.Distribute(DeleteNotification{std::move(obj)}, /*sync=*/false);
  }
  // A source added later under the same name is a new stream: its watermark starts afresh.
  NotifyStoreSync();
  return OkStatus();
}

Status SharedIndexInformer::ApplyDeltas(const Deltas& deltas, bool is_in_initial_list,
                                        std::vector<PendingNotification>& out) {
  // Only the object the key's deltas leave stored can stay unchanged: one pending compaction per
  // pop, not one per delta (a key updated many times while queued carries many).
  const Delta* to_compact = nullptr;
  for (const Delta& delta : deltas) {
    switch (delta.type) {
      case DeltaType::kSync:
      case DeltaType::kReplaced:
      case DeltaType::kAdded:
      case DeltaType::kUpdated: {
        if (delta.type != DeltaType::kSync) {
          const bool compactable =
              options_.compact && (!options_.compactable || options_.compactable(*delta.object));
          to_compact = compactable ? &delta : nullptr;
        }
        if (api::ObjectPtr old = indexer_->Upsert(delta.object)) {
          const bool is_sync =
              delta.type == DeltaType::kSync ||
              (delta.type == DeltaType::kReplaced &&
               old->Meta().resource_version == delta.object->Meta().resource_version);
          out.emplace_back(UpdateNotification{std::move(old), delta.object}, is_sync);
        } else {
          out.emplace_back(AddNotification{delta.object, is_in_initial_list}, false);
        }
        break;
      }
      case DeltaType::kDeleted:
        to_compact = nullptr;
        if (Status s = indexer_->Delete(delta.object); !s.ok()) {
          return s;
        }
        out.emplace_back(DeleteNotification{delta.object}, false);
        break;
    }
  }
  if (to_compact != nullptr) {
    compactions_.push_back({clock_.Now() + options_.compact_after,
                            DeletionHandlingMetaNamespaceKeyFunc(*to_compact->object),
                            to_compact->object.get()});
  }
  return OkStatus();
}

void SharedIndexInformer::CompactDue() {
  // Here, after the pop, rather than in ApplyDeltas: that runs under the DeltaFIFO's lock, which
  // a clean-up's lookups would hold against the reflector's pushes.
  DropStaleCompactionsIfGrown();
  if (compactions_.empty()) return;
  const Clock::time_point now = clock_.Now();
  while (!compactions_.empty() && compactions_.front().due <= now) {
    const PendingCompaction c = std::move(compactions_.front());
    compactions_.pop_front();
    api::ObjectPtr stored = indexer_->GetByKey(c.key);
    // Replaced or deleted since: a later entry has the replacement, if any.
    if (stored == nullptr || stored.get() != c.object) continue;
    if (api::ObjectPtr smaller = options_.compact(*stored)) indexer_->Upsert(std::move(smaller));
  }
  compactions_kept_ = std::min(compactions_kept_, compactions_.size());
  if (compactions_.empty()) compactions_.shrink_to_fit();
}

void SharedIndexInformer::DropStaleCompactionsIfGrown() {
  // Without this, objects updated more often than compact_after (a busy rollout, or a server
  // that floods updates) would leave one entry per update for compact_after: the list would grow
  // with the update rate. Each live entry is its key's stored object, so what a drop keeps is
  // about one per key, and the next drop comes after at least as many pushes as it read.
  constexpr size_t kSlack = 1024;
  if (compactions_.size() < 2 * compactions_kept_ + kSlack) return;
  std::erase_if(compactions_, [this](const PendingCompaction& c) {
    api::ObjectPtr stored = indexer_->GetByKey(c.key);
    return stored == nullptr || stored.get() != c.object;
  });
  compactions_kept_ = compactions_.size();
}

size_t SharedIndexInformer::PendingCompactions() const {
  std::lock_guard block(block_deltas_);
  return compactions_.size();
}

uint64_t SharedIndexInformer::AddStoreSyncListener(std::function<void()> fn) {
  std::lock_guard lock(store_sync_mu_);
  const uint64_t id = next_store_sync_id_++;
  store_sync_listeners_.emplace(id, std::move(fn));
  RebuildStoreSyncSnapshotLocked();
  return id;
}

void SharedIndexInformer::RemoveStoreSyncListener(uint64_t id) {
  std::lock_guard lock(store_sync_mu_);
  store_sync_listeners_.erase(id);
  RebuildStoreSyncSnapshotLocked();
}

void SharedIndexInformer::RebuildStoreSyncSnapshotLocked() {
  if (store_sync_listeners_.empty()) {
    store_sync_snapshot_.reset();
    return;
  }
  auto snapshot = std::make_shared<std::vector<std::function<void()>>>();
  snapshot->reserve(store_sync_listeners_.size());
  for (const auto& [id, fn] : store_sync_listeners_) snapshot->push_back(fn);
  store_sync_snapshot_ = std::move(snapshot);
}

void SharedIndexInformer::NotifyStoreSync() const {
  std::shared_ptr<const std::vector<std::function<void()>>> listeners;
  {
    std::lock_guard lock(store_sync_mu_);
    listeners = store_sync_snapshot_;
  }
  if (listeners == nullptr) return;
  for (const auto& fn : *listeners) fn();
}

bool SharedIndexInformer::HasSynced() const {
  std::vector<std::shared_ptr<DeltaFIFO>> fifos;
  {
    std::lock_guard lock(mu_);
    if (lister_watcher_ != nullptr) {
      if (fifo_ == nullptr) return false;
      fifos.push_back(fifo_);
    } else {
      if (!started_) return false;
      for (const auto& source : sources_) fifos.push_back(source->fifo);
    }
  }
  // Outside mu_: the queue's lock is taken after it nowhere else.
  return std::all_of(fifos.begin(), fifos.end(), [](const auto& f) { return f->HasSynced(); });
}

bool SharedIndexInformer::SourceHasSynced(const std::string& name) const {
  std::shared_ptr<DeltaFIFO> fifo;
  {
    std::lock_guard lock(mu_);
    if (!started_) return false;
    for (const auto& source : sources_) {
      if (source->name == name) fifo = source->fifo;
    }
  }
  return fifo != nullptr && fifo->HasSynced();
}

bool SharedIndexInformer::IsStopped() const {
  std::lock_guard lock(mu_);
  return stopped_;
}

std::string SharedIndexInformer::LastSyncResourceVersion() const {
  std::shared_ptr<Reflector> reflector;
  {
    std::lock_guard lock(mu_);
    reflector = reflector_;
  }
  return reflector ? reflector->LastSyncResourceVersion() : "";
}

std::string SharedIndexInformer::LastStoreSyncResourceVersion() const {
  std::shared_ptr<DeltaFIFO> fifo;
  {
    std::lock_guard lock(mu_);
    fifo = fifo_;
  }
  return fifo ? fifo->LastStoreSyncResourceVersion() : "";
}

std::string SharedIndexInformer::LastStoreSyncResourceVersionFor(std::string_view key) const {
  std::shared_ptr<DeltaFIFO> fifo;
  {
    std::lock_guard lock(mu_);
    if (lister_watcher_ != nullptr) {
      fifo = fifo_;
    } else {
      for (const auto& source : sources_) {
        if (source->owns(key)) {
          fifo = source->fifo;
          break;
        }
      }
    }
  }
  return fifo ? fifo->LastStoreSyncResourceVersion() : "";
}

}  // namespace kcm::cache
