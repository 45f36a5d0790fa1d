// LeaderElector: runs for leadership on a ResourceLock, renews it while leading and gives it up
// on loss or shutdown (client-go's leaderelection.LeaderElector, L2-L5). Run blocks on the
// caller's thread; IsLeader/GetLeader/Check may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>

#include "pkg/leaderelection/metrics.h"
#include "pkg/leaderelection/resource_lock.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::leaderelection {

// Retry waits are retry_period * (1 + rand[0, 1.2)), as upstream's wait.JitterUntil.
inline constexpr double kJitterFactor = 1.2;

struct LeaderCallbacks {
  // Runs on its own thread once the lease is acquired; `stop` is requested when leadership ends
  // (lease lost or Run stopped) before on_stopped_leading runs, so work fenced with it issues no
  // write after the loss is known. Required.
  std::function<void(std::stop_token stop)> on_started_leading;
  // Called when Run returns, whether or not we ever led (upstream's contract; the daemon exits 1
  // here unless it is shutting down itself). Required.
  std::function<void()> on_stopped_leading;
  // Called on the elector's thread when the observed holder changes; must not block. Optional.
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  // While leading, a renewal's lock requests are cancelled at the renew deadline (through their
  // stop token, as upstream's renew does with its context). While acquiring they are not: give
  // the lock's client a request timeout <= renew_deadline too (kube-controller-manager builds
  // its leader-election client with Timeout = RenewDeadline).
  std::shared_ptr<ResourceLock> lock;
  // How long a non-leader waits after it last saw the record change before taking over.
  Clock::duration lease_duration = std::chrono::seconds(15);
  // How long the leader keeps retrying a failed renewal before it gives up leading.
  Clock::duration renew_deadline = std::chrono::seconds(10);
  // The wait between attempts (acquire: jittered; renew: fixed).
  Clock::duration retry_period = std::chrono::seconds(2);
  LeaderCallbacks callbacks;
  // On a graceful stop, write an empty holder so a standby takes over at once. Only safe if
  // on_started_leading's work has stopped when it returns (Run waits for it first).
  bool release_on_cancel = false;
  std::string name;        // the metrics' `name` label
  Clock* clock = nullptr;  // nullptr = RealClock
};

class LeaderElector {
 public:
  // Validates the config as upstream: lease_duration > renew_deadline > 1.2 * retry_period,
  // all positive, callbacks and lock set, identity non-empty.
  static Result<std::unique_ptr<LeaderElector>> Create(LeaderElectionConfig config);

  // Acquires the lease (or returns when `stop` is requested first), runs on_started_leading and
  // renews until the lease is lost or `stop` is requested; then calls on_stopped_leading.
  // Call once.
  void Run(std::stop_token stop);

  // True if the last observed record names this candidate.
  bool IsLeader() const;
  // The holder of the last observed record ("" before the first observation).
  std::string GetLeader() const;
  // For a health check (L6; upstream's HealthzAdaptor, check "leaderElection"): an error if we lead
  // but have not renewed for longer than lease_duration + max_tolerable_expired_lease (a stuck
  // elector), and — beyond upstream, which keeps answering ok while the API server is
  // unreachable — as soon as a leader has gone a retry period and half the renew deadline
  // without a successful renewal (failing or hanging requests): it can no longer renew and will
  // stop leading at the renew deadline.
  Status Check(Clock::duration max_tolerable_expired_lease) const;

  struct Private {
    explicit Private() = default;
  };
  LeaderElector(Private, LeaderElectionConfig config);

 private:
  bool Acquire(std::stop_token stop);
  // Renews every retry period (client-go's LeaderElector.renew). Returns true when leadership
  // was lost: no renewal succeeded within renew_deadline, or the lease was seen held by another
  // candidate (at once, without waiting for the deadline). False when `stop` ended it.
  bool RenewUntilLost(std::stop_token stop);
  bool TryAcquireOrRenew(std::stop_token stop);
  // TryAcquireOrRenew with its lock requests cancelled at `deadline`.
  bool TryAcquireOrRenewBefore(Clock::time_point deadline, std::stop_token stop);
  void Release();
  void MaybeReportTransition();
  // A successful acquisition or renewal, for Check.
  void RecordRenewal();

  LeaderElectionRecord ObservedRecord() const;
  void SetObservedRecord(const LeaderElectionRecord& record);
  bool IsLeaseValidLocked(Clock::time_point now) const;
  Clock::duration JitteredRetryPeriod();

  const LeaderElectionConfig config_;
  const std::string identity_;
  Clock& clock_;
  LeaderMetrics metrics_;
  std::mt19937_64 rng_;          // Run's thread only
  std::string reported_leader_;  // Run's thread only

  mutable std::mutex mu_;
  LeaderElectionRecord observed_record_;  // guarded by mu_
  // When WE saw the record change, by our own clock: expiry never trusts the holder's clock.
  Clock::time_point observed_time_{};  // guarded by mu_
  // The last successful acquisition or renewal, by our clock.
  Clock::time_point last_renewed_{};  // guarded by mu_
};

}  // namespace kcm::leaderelection
