// SharedProcessor: fans an informer's notifications out to its listeners and runs one thread per
// listener whose handler may block (behaviour 4.2, 4.3); a non-blocking handler is called by
// Distribute itself. All methods are safe for concurrent use; Start and Stop are called once each,
// by the informer's own thread (SharedIndexInformer::Run), so the processor needs no thread of
// its own to wait for the stop.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pkg/cache/processor_listener.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::cache {

class SharedProcessor {
 public:
  explicit SharedProcessor(Clock& clock);
  ~SharedProcessor();
  SharedProcessor(const SharedProcessor&) = delete;
  SharedProcessor& operator=(const SharedProcessor&) = delete;

  // Starts the listener's thread at once if the processor is started.
  void AddListener(std::shared_ptr<ProcessorListener> listener);
  // Stops the listener's thread (pending notifications are dropped) and forgets it. Must not be
  // called from the handler being removed.
  Status RemoveListener(const ResourceEventHandlerRegistration* registration);
  // sync: a resync notification, for the listeners ShouldResync found due only. Calls the
  // non-blocking handlers before returning, without this processor's lock.
  void Distribute(const Notification& notification, bool sync);
  // True if any listener's resync is due; remembers which, for the Distribute calls that follow.
  bool ShouldResync();
  void ResyncCheckPeriodChanged(Clock::duration check_period);
  // Starts the blocking listeners' threads, and from here on each added listener's at once.
  void Start();
  // Stops and joins the listeners' threads; a listener added later gets none.
  void Stop();

 private:
  struct Entry {
    std::shared_ptr<ProcessorListener> listener;
    std::jthread thread;  // none for a non-blocking listener
  };
  static std::jthread StartThread(const std::shared_ptr<ProcessorListener>& listener);
  void RebuildSnapshotLocked();

  Clock& clock_;
  std::mutex mu_;
  std::map<const ResourceEventHandlerRegistration*, Entry> listeners_;
  // The listeners, copied on each change: Distribute takes a reference under mu_ and hands out
  // without it.
  std::shared_ptr<const std::vector<std::shared_ptr<ProcessorListener>>> snapshot_;
  bool running_ = false;
};

}  // namespace kcm::cache
