#include "pkg/leaderelection/leader_elector.h"

#include <condition_variable>
#include <thread>
#include <utility>

#include "pkg/client/api_errors.h"
#include "pkg/util/duration.h"
#include "pkg/util/klog.h"

namespace kcm::leaderelection {
namespace {

Error InvalidConfig(std::string message) {
  return Error::Local("InvalidConfig", std::move(message));
}

}  // namespace

Result<std::unique_ptr<LeaderElector>> LeaderElector::Create(LeaderElectionConfig config) {
  if (config.lease_duration <= config.renew_deadline) {
    return InvalidConfig("leaseDuration must be greater than renewDeadline");
  }
  if (std::chrono::duration<double>(config.renew_deadline).count() <=
      kJitterFactor * std::chrono::duration<double>(config.retry_period).count()) {
    return InvalidConfig("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (config.lease_duration <= Clock::duration::zero()) {
    return InvalidConfig("leaseDuration must be greater than zero");
  }
  if (config.renew_deadline <= Clock::duration::zero()) {
    return InvalidConfig("renewDeadline must be greater than zero");
  }
  if (config.retry_period <= Clock::duration::zero()) {
    return InvalidConfig("retryPeriod must be greater than zero");
  }
  if (!config.callbacks.on_started_leading) {
    return InvalidConfig("OnStartedLeading callback must not be nil");
  }
  if (!config.callbacks.on_stopped_leading) {
    return InvalidConfig("OnStoppedLeading callback must not be nil");
  }
  if (!config.lock) return InvalidConfig("Lock must not be nil.");
  if (config.lock->Identity().empty()) return InvalidConfig("Lock identity is empty");
  return std::make_unique<LeaderElector>(Private(), std::move(config));
}

LeaderElector::LeaderElector(Private, LeaderElectionConfig config)
    : config_(std::move(config)),
      identity_(config_.lock->Identity()),
      clock_(config_.clock != nullptr ? *config_.clock : RealClock::Get()),
      metrics_(config_.name),
      rng_(std::random_device{}()) {}

void LeaderElector::Run(std::stop_token stop) {
  if (!Acquire(stop)) {
    config_.callbacks.on_stopped_leading();
    return;
  }
  std::stop_source leading;
  bool lost = false;
  {
    // The leading work stops when we stop leading, for whichever reason.
    std::stop_callback forward(stop, [&leading] { leading.request_stop(); });
    std::jthread work(
        [cb = config_.callbacks.on_started_leading, token = leading.get_token()] { cb(token); });
    lost = RenewUntilLost(stop);
    leading.request_stop();
    if (lost) {
      // Report at once: the daemon exits here, and must not wait for the work to wind down
      // while another candidate may already be taking over.
      config_.callbacks.on_stopped_leading();
      return;  // `work` joins on scope exit
    }
    // Graceful stop: the protected work must be over before the lease is given away.
    work.join();
  }
  if (config_.release_on_cancel) Release();
  metrics_.LeaderOff();
  config_.callbacks.on_stopped_leading();
}

bool LeaderElector::Acquire(std::stop_token stop) {
  const std::string desc = config_.lock->Describe();
  KLOG_INFOS("attempting to acquire leader lease", "lock", desc);
  while (!stop.stop_requested()) {
    const bool acquired = TryAcquireOrRenew(stop);
    MaybeReportTransition();
    if (acquired) {
      RecordRenewal();
      config_.lock->RecordEvent("became leader");
      metrics_.LeaderOn();
      KLOG_INFOS("successfully acquired lease", "lock", desc);
      return true;
    }
    KLOG_V_INFOS(4, "failed to acquire lease", "lock", desc);
    if (!clock_.SleepFor(JitteredRetryPeriod(), stop)) break;
  }
  return false;
}

bool LeaderElector::RenewUntilLost(std::stop_token stop) {
  const std::string desc = config_.lock->Describe();
  for (;;) {
    // Keep trying every retry period until the renew deadline (upstream's PollImmediateUntil
    // under a renewDeadline timeout).
    const Clock::time_point deadline = clock_.Now() + config_.renew_deadline;
    bool renewed = false;
    std::string taken_by;
    for (;;) {
      if (stop.stop_requested()) return false;
      renewed = TryAcquireOrRenewBefore(deadline, stop);
      if (renewed) {
        RecordRenewal();
        break;
      }
      // Another candidate holds the lease now (it took over, or an admin rewrote it): we are
      // certainly not the leader, so stop the leading work at once instead of retrying until the
      // renew deadline, which would let in-flight syncs keep writing next to the new leader.
      taken_by = GetLeader();
      if (!taken_by.empty() && taken_by != identity_) break;
      taken_by.clear();
      if (clock_.Now() >= deadline) break;
      const Clock::time_point next = std::min(clock_.Now() + config_.retry_period, deadline);
      if (!clock_.SleepUntil(next, stop)) return false;
      if (clock_.Now() >= deadline) break;
    }
    MaybeReportTransition();
    if (!renewed) {
      KLOG_ERRORS(taken_by.empty() ? "timed out waiting for the condition"
                                   : "the lease is held by " + taken_by,
                  "failed to renew lease", "lock", desc);
      config_.lock->RecordEvent("stopped leading");
      metrics_.LeaderOff();
      return true;
    }
    KLOG_V_INFOS(5, "successfully renewed lease", "lock", desc);
    if (!clock_.SleepFor(config_.retry_period, stop)) return false;
  }
}

bool LeaderElector::TryAcquireOrRenewBefore(Clock::time_point deadline, std::stop_token stop) {
  // upstream's renew hands tryAcquireOrRenew a context with the RenewDeadline timeout, so a hung
  // lock request cannot hold the leading work past the deadline. A request blocks in real time,
  // so the cut-off waits in real time for what the clock says is left.
  std::stop_source attempt;
  std::stop_callback forward(stop, [&attempt] { attempt.request_stop(); });
  const auto until = std::chrono::steady_clock::now() + (deadline - clock_.Now());
  std::jthread cutoff([&attempt, until](std::stop_token done) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_until(lock, done, until, [] { return false; });
    if (!done.stop_requested()) attempt.request_stop();
  });
  const bool ok = TryAcquireOrRenew(attempt.get_token());
  cutoff.request_stop();
  return ok;
}

bool LeaderElector::TryAcquireOrRenew(std::stop_token stop) {
  const api::Time wall_now = clock_.WallNow();
  LeaderElectionRecord desired;
  desired.holder_identity = identity_;
  desired.lease_duration_seconds = static_cast<int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  desired.acquire_time = wall_now;
  desired.renew_time = wall_now;

  // 1. Fast path: the leader updates on top of the object it wrote last time.
  {
    std::unique_lock lock(mu_);
    const bool leading_validly =
        observed_record_.holder_identity == identity_ && IsLeaseValidLocked(clock_.Now());
    const LeaderElectionRecord observed = observed_record_;
    lock.unlock();
    if (leading_validly) {
      desired.acquire_time = observed.acquire_time;
      desired.leader_transitions = observed.leader_transitions;
      Status s = config_.lock->Update(desired, stop);
      if (s.ok()) {
        SetObservedRecord(desired);
        return true;
      }
      KLOG_ERRORS(s.error().ToString(),
                  "Failed to update lock optimistically, falling back to slow path");
    }
  }

  // 2. Read the record, or create it.
  auto current = config_.lock->Get(stop);
  if (!current.ok()) {
    if (!errors::IsNotFound(current.error())) {
      KLOG_ERRORS(current.error().ToString(), "Error retrieving lease lock", "lock",
                  config_.lock->Describe());
      return false;
    }
    if (Status s = config_.lock->Create(desired, stop); !s.ok()) {
      KLOG_ERRORS(s.error().ToString(), "Error initially creating lease lock");
      return false;
    }
    SetObservedRecord(desired);
    return true;
  }

  // 3. Is someone else's lease still running, by our clock since we saw it change?
  bool leader = false;
  {
    std::lock_guard lock(mu_);
    if (observed_record_ != *current) {
      observed_record_ = *current;
      observed_time_ = clock_.Now();
    }
    leader = observed_record_.holder_identity == identity_;
    if (!current->holder_identity.empty() && IsLeaseValidLocked(clock_.Now()) && !leader) {
      KLOG_V_INFOS(4, "Lock is held and has not yet expired", "holder", current->holder_identity);
      return false;
    }
  }

  // 4. Take it over (or renew it on the slow path).
  if (leader) {
    desired.acquire_time = current->acquire_time;
    desired.leader_transitions = current->leader_transitions;
    metrics_.SlowpathExercised();
  } else {
    desired.leader_transitions = current->leader_transitions + 1;
  }
  if (Status s = config_.lock->Update(desired, stop); !s.ok()) {
    KLOG_ERRORS(s.error().ToString(), "Failed to update lock");
    return false;
  }
  SetObservedRecord(desired);
  return true;
}

void LeaderElector::Release() {
  if (!IsLeader()) return;
  const api::Time wall_now = clock_.WallNow();
  LeaderElectionRecord released;
  released.lease_duration_seconds = 1;  // lets a standby that already saw us take over at once
  released.acquire_time = wall_now;
  released.renew_time = wall_now;
  released.leader_transitions = ObservedRecord().leader_transitions;
  // Run's stop token is already requested; these requests must still go out.
  Status s = config_.lock->Update(released, {});
  if (!s.ok() && errors::IsConflict(s.error())) {
    // Our cached resourceVersion is stale; release only if the lease is still ours.
    auto current = config_.lock->Get({});
    if (current.ok() && current->holder_identity == identity_) {
      released.leader_transitions = current->leader_transitions;
      s = config_.lock->Update(released, {});
    } else {
      s = OkStatus();
    }
  }
  if (!s.ok()) {
    KLOG_ERRORS(s.error().ToString(), "Failed to release lease");
    return;
  }
  SetObservedRecord(released);
  KLOG_INFOS("Released lease", "lock", config_.lock->Describe());
}

void LeaderElector::MaybeReportTransition() {
  const std::string holder = GetLeader();
  if (holder == reported_leader_) return;
  reported_leader_ = holder;
  if (config_.callbacks.on_new_leader) config_.callbacks.on_new_leader(holder);
}

bool LeaderElector::IsLeader() const {
  std::lock_guard lock(mu_);
  return observed_record_.holder_identity == identity_;
}

std::string LeaderElector::GetLeader() const {
  std::lock_guard lock(mu_);
  return observed_record_.holder_identity;
}

Status LeaderElector::Check(Clock::duration max_tolerable_expired_lease) const {
  std::lock_guard lock(mu_);
  if (observed_record_.holder_identity != identity_) return OkStatus();
  const Clock::time_point now = clock_.Now();
  if (now - observed_time_ > config_.lease_duration + max_tolerable_expired_lease) {
    return Error::Local("LeaderElection",
                        "failed election to renew leadership on lease " + config_.name);
  }
  // A leader renews every retry period; once half the renew deadline more has passed without a
  // success, renewals are failing or hanging (an unreachable API server), not merely slow, and
  // the lease will be given up at the renew deadline.
  if (now - last_renewed_ > config_.retry_period + config_.renew_deadline / 2) {
    const auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_renewed_);
    return Error::Local("LeaderElection", "the leader cannot renew lease " + config_.name +
                                              ": no renewal has succeeded for " +
                                              FormatDuration(ago));
  }
  return OkStatus();
}

void LeaderElector::RecordRenewal() {
  std::lock_guard lock(mu_);
  last_renewed_ = clock_.Now();
}

LeaderElectionRecord LeaderElector::ObservedRecord() const {
  std::lock_guard lock(mu_);
  return observed_record_;
}

void LeaderElector::SetObservedRecord(const LeaderElectionRecord& record) {
  std::lock_guard lock(mu_);
  observed_record_ = record;
  observed_time_ = clock_.Now();
}

bool LeaderElector::IsLeaseValidLocked(Clock::time_point now) const {
  // The holder's declared duration, counted from when we observed the record.
  return observed_time_ + std::chrono::seconds(observed_record_.lease_duration_seconds) > now;
}

Clock::duration LeaderElector::JitteredRetryPeriod() {
  const double factor = 1.0 + std::uniform_real_distribution<double>(0.0, kJitterFactor)(rng_);
  return std::chrono::duration_cast<Clock::duration>(config_.retry_period * factor);
}

}  // namespace kcm::leaderelection
