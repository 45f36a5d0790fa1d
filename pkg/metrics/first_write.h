// FirstWriteProbe: notes the first write request a reconcile sends, the end point of
// controller_reaction_duration_seconds (docs/operating.md). The controller installs a probe on its
// worker thread for the length of one reconcile (ScopedFirstWriteProbe); the REST client calls
// NoteWriteSent right before it sends a mutating request (a batch's requests too: DoAll sends them
// from the worker's own thread).
//
// The probe travels as the thread's current probe rather than as a parameter because the
// reconcilers reach the client through several layers (pod control, typed clients, status
// writers) that have no reason to know about metrics; a thread that has no probe installed (an
// informer, the event broadcaster) records nothing.
#pragma once

#include <atomic>
#include <functional>
#include <utility>

namespace kcm::metrics {

class FirstWriteProbe {
 public:
  explicit FirstWriteProbe(std::function<void()> on_first_write)
      : on_first_write_(std::move(on_first_write)) {}
  FirstWriteProbe(const FirstWriteProbe&) = delete;
  FirstWriteProbe& operator=(const FirstWriteProbe&) = delete;

  // Runs on_first_write on the first call only, on the calling thread; thread-safe.
  void WriteSent() {
    if (!fired_.exchange(true, std::memory_order_acq_rel) && on_first_write_) on_first_write_();
  }
  bool fired() const { return fired_.load(std::memory_order_acquire); }

 private:
  std::function<void()> on_first_write_;
  std::atomic<bool> fired_{false};
};

// Makes `probe` (may be null: no probe) the calling thread's current probe until the scope ends,
// then restores the previous one. The probe must outlive the scope.
class ScopedFirstWriteProbe {
 public:
  explicit ScopedFirstWriteProbe(FirstWriteProbe* probe);
  ~ScopedFirstWriteProbe();
  ScopedFirstWriteProbe(const ScopedFirstWriteProbe&) = delete;
  ScopedFirstWriteProbe& operator=(const ScopedFirstWriteProbe&) = delete;

 private:
  FirstWriteProbe* previous_;
};

// The calling thread's current probe, or null.
FirstWriteProbe* CurrentFirstWriteProbe();

// Tells the calling thread's current probe, if any, that a write request is being sent.
void NoteWriteSent();

}  // namespace kcm::metrics
