#include "pkg/cache/shared_processor.h"

#include <vector>

namespace kcm::cache {

SharedProcessor::SharedProcessor(Clock& clock) : clock_(clock) {}

SharedProcessor::~SharedProcessor() {
  std::map<const ResourceEventHandlerRegistration*, Entry> listeners;
  {
    std::lock_guard lock(mu_);
    listeners.swap(listeners_);
  }
  // jthread destructors stop and join, outside the lock.
}

std::jthread SharedProcessor::StartThread(const std::shared_ptr<ProcessorListener>& listener) {
  if (listener->non_blocking()) return {};  // called by Distribute itself
  return std::jthread([listener](std::stop_token stop) { listener->Run(stop); });
}

void SharedProcessor::RebuildSnapshotLocked() {
  auto snapshot = std::make_shared<std::vector<std::shared_ptr<ProcessorListener>>>();
  snapshot->reserve(listeners_.size());
  for (const auto& [key, entry] : listeners_) snapshot->push_back(entry.listener);
  snapshot_ = std::move(snapshot);
}

void SharedProcessor::AddListener(std::shared_ptr<ProcessorListener> listener) {
  std::lock_guard lock(mu_);
  Entry& entry = listeners_[listener.get()];
  entry.listener = listener;
  if (running_) {
    entry.thread = StartThread(listener);
  }
  RebuildSnapshotLocked();
}

Status SharedProcessor::RemoveListener(const ResourceEventHandlerRegistration* registration) {
  std::jthread thread;
  {
    std::lock_guard lock(mu_);
    auto it = listeners_.find(registration);
    if (it == listeners_.end()) {
      return Error::Local("HandlerNotFound", "event handler registration not found");
    }
    thread = std::move(it->second.thread);
    listeners_.erase(it);
    RebuildSnapshotLocked();
  }
  // Joined here, outside the lock, so that Distribute is never held up by a slow handler.
  return OkStatus();
}

void SharedProcessor::Distribute(const Notification& notification, bool sync) {
  // Without mu_ while handing out: a non-blocking handler runs inside Add and may call into the
  // informer, whose locks are taken before mu_ elsewhere (AddEventHandler).
  std::shared_ptr<const std::vector<std::shared_ptr<ProcessorListener>>> listeners;
  {
    std::lock_guard lock(mu_);
    listeners = snapshot_;
  }
  if (!listeners) return;
  for (const auto& listener : *listeners) {
    if (!sync || listener->syncing()) {
      listener->Add(notification);
    }
  }
}

bool SharedProcessor::ShouldResync() {
  std::lock_guard lock(mu_);
  const Clock::time_point now = clock_.Now();
  bool any = false;
  for (auto& [key, entry] : listeners_) {
    const bool syncing = entry.listener->ShouldResync(now);
    entry.listener->set_syncing(syncing);
    if (syncing) {
      any = true;
      entry.listener->DetermineNextResync(now);
    }
  }
  return any;
}

void SharedProcessor::ResyncCheckPeriodChanged(Clock::duration check_period) {
  std::lock_guard lock(mu_);
  for (auto& [key, entry] : listeners_) {
    entry.listener->SetResyncPeriod(
        DetermineResyncPeriod(entry.listener->requested_resync_period(), check_period));
  }
}

void SharedProcessor::Start() {
  std::lock_guard lock(mu_);
  running_ = true;
  for (auto& [key, entry] : listeners_) {
    entry.thread = StartThread(entry.listener);
  }
}

void SharedProcessor::Stop() {
  std::vector<std::jthread> threads;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    for (auto& [key, entry] : listeners_) {
      threads.push_back(std::move(entry.thread));
    }
  }
  for (std::jthread& t : threads) {
    t.request_stop();
  }
  // Destructors join, outside the lock: a handler may be adding or removing a listener.
}

}  // namespace kcm::cache
