#include "pkg/cache/processor_listener.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "pkg/util/klog.h"

namespace kcm::cache {
namespace {

class FuncsHandler final : public ResourceEventHandler {
 public:
  explicit FuncsHandler(ResourceEventHandlerFuncs funcs) : funcs_(std::move(funcs)) {}
  void OnAdd(const api::ObjectPtr& obj, bool is_in_initial_list) override {
    if (funcs_.add_func) funcs_.add_func(obj, is_in_initial_list);
  }
  void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) override {
    if (funcs_.update_func) funcs_.update_func(old_obj, new_obj);
  }
  void OnDelete(const api::ObjectPtr& obj) override {
    if (funcs_.delete_func) funcs_.delete_func(obj);
  }
  bool NonBlocking() const override { return funcs_.non_blocking; }

 private:
  ResourceEventHandlerFuncs funcs_;
};

}  // namespace

std::shared_ptr<ResourceEventHandler> MakeResourceEventHandler(ResourceEventHandlerFuncs funcs) {
  return std::make_shared<FuncsHandler>(std::move(funcs));
}

Clock::duration DetermineResyncPeriod(Clock::duration desired, Clock::duration check) {
  if (desired == Clock::duration::zero()) {
    return desired;
  }
  if (check == Clock::duration::zero()) {
    KLOG_WARNINGS("The informer does not resync; a handler's resync period is ignored");
    return Clock::duration::zero();
  }
  return std::max(desired, check);
}

ProcessorListener::ProcessorListener(std::shared_ptr<ResourceEventHandler> handler,
                                     Clock::duration requested_resync_period,
                                     Clock::duration resync_period, Clock::time_point now,
                                     std::function<bool()> upstream_has_synced)
    : handler_(std::move(handler)),
      requested_resync_period_(requested_resync_period),
      upstream_has_synced_(std::move(upstream_has_synced)),
      non_blocking_(handler_->NonBlocking()),
      resync_period_(resync_period),
      next_resync_(now + resync_period) {}

void ProcessorListener::Add(Notification notification) {
  if (non_blocking_) {
    // Handled before Add returns, so never outstanding for HasSynced.
    Dispatch(notification);
    return;
  }
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (const auto* add = std::get_if<AddNotification>(&notification);
        add != nullptr && add->is_in_initial_list) {
      ++initial_outstanding_;
    }
    pending_.push_back(std::move(notification));
    wake = std::exchange(run_waiting_, false);
  }
  // Only a listener blocked in Run needs a wake-up (one that is busy takes this notification with
  // its next batch), and outside the lock, so it does not wake straight into our mutex: each
  // needless futex wake is a context switch on the informer's hot path.
  if (wake) cv_.notify_one();
}

void ProcessorListener::Run(std::stop_token stop) {
  if (non_blocking_) return;  // Add delivers
  // Takes everything pending in one lock round trip and hands it out in order; the notifications
  // added meanwhile wait for the next batch.
  std::deque<Notification> batch;
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (pending_.empty()) {
        run_waiting_ = true;
        const bool ready = cv_.wait(lock, stop, [&] { return !pending_.empty(); });
        run_waiting_ = false;
        if (!ready) return;
      }
      batch.swap(pending_);
    }
    for (const Notification& next : batch) {
      if (stop.stop_requested()) return;  // undelivered notifications are dropped at stop
      Dispatch(next);
    }
    batch.clear();
  }
}

void ProcessorListener::Dispatch(const Notification& notification) {
  bool initial = false;
  try {
    if (const auto* add = std::get_if<AddNotification>(&notification)) {
      initial = add->is_in_initial_list;
      handler_->OnAdd(add->obj, add->is_in_initial_list);
    } else if (const auto* update = std::get_if<UpdateNotification>(&notification)) {
      handler_->OnUpdate(update->old_obj, update->new_obj);
    } else if (const auto* del = std::get_if<DeleteNotification>(&notification)) {
      handler_->OnDelete(del->obj);
    }
  } catch (const std::exception& e) {
    // A broken handler must not take the informer (or the other handlers) down with it.
    KLOG_ERRORS(e.what(), "Event handler threw, notification skipped");
  } catch (...) {
    KLOG_ERRORS("a non-exception", "Event handler threw, notification skipped");
  }
  if (initial && !non_blocking_) {
    // Counted even when the handler threw: it has seen the object, and HasSynced must not hang.
    std::lock_guard lock(mu_);
    --initial_outstanding_;
  }
}

bool ProcessorListener::HasSynced() const {
  if (!upstream_has_synced_()) {
    return false;
  }
  std::lock_guard lock(mu_);
  return initial_outstanding_ == 0;
}

bool ProcessorListener::ShouldResync(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  return resync_period_ != Clock::duration::zero() && now >= next_resync_;
}

void ProcessorListener::DetermineNextResync(Clock::time_point now) {
  std::lock_guard lock(mu_);
  next_resync_ = now + resync_period_;
}

void ProcessorListener::SetResyncPeriod(Clock::duration period) {
  std::lock_guard lock(mu_);
  resync_period_ = period;
}

Clock::duration ProcessorListener::resync_period() const {
  std::lock_guard lock(mu_);
  return resync_period_;
}

}  // namespace kcm::cache
