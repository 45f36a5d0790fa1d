// LeaderElector over a FakeLock on a FakeClock (L1-L5, M3): acquire, wait for a live
// holder by our own clock, take over an expired lease, optimistic conflicts, renewals, loss past
// the renew deadline, release on cancel and the leader_election_master_status metric.
#include "pkg/leaderelection/leader_elector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "pkg/api/lease.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/leaderelection/testing/fake_lock.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::leaderelection {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Bounded real-time wait for something another thread does.
bool WaitUntil(const std::function<bool()>& pred) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

double MasterStatus(const std::string& name) {
  return metrics::GaugeVec("leader_election_master_status", "", {"name"}).With({name}).Value();
}

// Longer than the longest jittered retry wait (2 s * 2.2), shorter than two of the shortest.
constexpr auto kAcquireStep = milliseconds(4400);

class LeaderElectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<FakeLeaseStore>();
    lock_ = std::make_shared<FakeLock>(store_, "me");
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    if (runner_.joinable()) {
      runner_.request_stop();
      runner_.join();
    }
  }

  LeaderElectionConfig Config() {
    LeaderElectionConfig c;
    c.lock = lock_;
    c.name = name_;
    c.clock = &clock_;
    c.callbacks.on_started_leading = [this](std::stop_token stop) {
      {
        std::lock_guard l(mu_);
        leading_ = stop;
      }
      started_ = true;
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock l(mu);
      cv.wait(l, stop, [] { return false; });
      work_done_ = true;
    };
    c.callbacks.on_stopped_leading = [this] {
      // Upstream's contract: leading work is told to stop before this runs... on loss, it may
      // still be winding down, so only record the order we saw.
      {
        std::lock_guard l(mu_);
        leading_cancelled_first_ = leading_.stop_requested();
      }
      stopped_ = true;
    };
    c.callbacks.on_new_leader = [this](const std::string& id) {
      std::lock_guard l(mu_);
      new_leaders_.push_back(id);
    };
    return c;
  }

  void Start(LeaderElectionConfig config) {
    auto e = LeaderElector::Create(std::move(config));
    ASSERT_TRUE(e.ok()) << e.error().ToString();
    elector_ = std::move(e).value();
    runner_ = std::jthread([this](std::stop_token stop) {
      elector_->Run(stop);
      run_returned_ = true;
    });
  }

  // The elector made another lock call and is asleep on the clock again.
  bool WaitForAttemptAfter(size_t ops_before) {
    return WaitUntil([&] { return lock_->OpCount() > ops_before && clock_.Waiters() == 1; });
  }
  // Steps the clock and waits until the elector has acted and parked again.
  bool StepAndWait(Clock::duration d) {
    const size_t before = lock_->OpCount();
    clock_.Step(d);
    return WaitForAttemptAfter(before);
  }

  LeaderElectionRecord Held(const std::string& holder, int transitions = 0) {
    LeaderElectionRecord r;
    r.holder_identity = holder;
    r.lease_duration_seconds = 15;
    r.acquire_time = r.renew_time = clock_.WallNow();
    r.leader_transitions = transitions;
    return r;
  }

  std::vector<std::string> NewLeaders() {
    std::lock_guard l(mu_);
    return new_leaders_;
  }

  FakeClock clock_;
  std::shared_ptr<FakeLeaseStore> store_;
  std::shared_ptr<FakeLock> lock_;
  std::string name_;
  std::unique_ptr<LeaderElector> elector_;
  std::atomic<bool> started_{false}, work_done_{false}, stopped_{false}, run_returned_{false};
  std::mutex mu_;
  std::vector<std::string> new_leaders_;
  std::stop_token leading_;               // on_started_leading's token (guarded by mu_)
  bool leading_cancelled_first_ = false;  // seen by on_stopped_leading (guarded by mu_)
  std::jthread runner_;  // last: stopped and joined before the state above goes away
};

TEST_F(LeaderElectorTest, AcquiresByCreatingAnAbsentLease) {  // L2, L1
  const api::Time now = clock_.WallNow();
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }));
  const auto ops = lock_->Ops();
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0], "get");
  EXPECT_EQ(ops[1], "create");
  const auto rec = store_->Record();
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->holder_identity, "me");
  EXPECT_EQ(rec->lease_duration_seconds, 15);
  EXPECT_EQ(rec->acquire_time, now);
  EXPECT_EQ(rec->renew_time, now);
  EXPECT_EQ(rec->leader_transitions, 0);
  EXPECT_TRUE(elector_->IsLeader());
  EXPECT_EQ(elector_->GetLeader(), "me");
  EXPECT_EQ(NewLeaders(), std::vector<std::string>{"me"});
  EXPECT_EQ(lock_->Events(), std::vector<std::string>{"me became leader"});
}

TEST_F(LeaderElectorTest, WaitsWhileAnotherHolderRenewsByTheLocalClock) {  // L2
  // The holder's renewTime is an hour old by its own (skewed) clock; only when WE saw the record
  // change counts.
  LeaderElectionRecord other = Held("other", 3);
  other.renew_time = clock_.WallNow() - hours(1);
  store_->Set(other);
  Start(Config());
  ASSERT_TRUE(WaitForAttemptAfter(0));
  EXPECT_FALSE(elector_->IsLeader());
  EXPECT_EQ(elector_->GetLeader(), "other");
  EXPECT_EQ(NewLeaders(), std::vector<std::string>{"other"});

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StepAndWait(kAcquireStep));  // 13.2 s < 15 s
  EXPECT_FALSE(started_);
  other.renew_time = clock_.WallNow();  // the holder renews
  store_->Set(other);
  ASSERT_TRUE(StepAndWait(kAcquireStep));  // 17.6 s after the first look: would have expired
  EXPECT_FALSE(started_);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StepAndWait(kAcquireStep));  // 13.2 s since the change
  EXPECT_FALSE(started_);
  for (const auto& op : lock_->Ops()) EXPECT_EQ(op, "get");

  clock_.Step(kAcquireStep);  // 17.6 s since we saw it change: expired
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }));
  const auto rec = store_->Record();
  EXPECT_EQ(rec->holder_identity, "me");
  EXPECT_EQ(rec->leader_transitions, 4);
}

TEST_F(LeaderElectorTest, TakesOverAnExpiredLeaseWithTransitionsPlusOne) {  // L2
  store_->Set(Held("other", 7));
  Start(Config());
  ASSERT_TRUE(WaitForAttemptAfter(0));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(StepAndWait(kAcquireStep));
  EXPECT_FALSE(started_);
  clock_.Step(kAcquireStep);
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }));
  const auto rec = store_->Record();
  EXPECT_EQ(rec->holder_identity, "me");
  EXPECT_EQ(rec->leader_transitions, 8);
  EXPECT_EQ(rec->lease_duration_seconds, 15);
  EXPECT_EQ(rec->acquire_time, clock_.WallNow());
  EXPECT_EQ(NewLeaders(), (std::vector<std::string>{"other", "me"}));
}

TEST_F(LeaderElectorTest, TakesAReleasedLeaseAtOnce) {  // L2, L3
  LeaderElectionRecord released = Held("", 2);
  released.lease_duration_seconds = 1;
  store_->Set(released);
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }));
  EXPECT_EQ(store_->Record()->leader_transitions, 3);
}

TEST_F(LeaderElectorTest, OptimisticConflictDoesNotClobberTheWinner) {  // L2
  LeaderElectionRecord released = Held("", 0);
  store_->Set(released);
  // Between our Get and our Update another candidate takes the lease.
  lock_->before_update = [&] {
    lock_->before_update = nullptr;
    store_->Set(Held("other", 1));
  };
  Start(Config());
  ASSERT_TRUE(WaitForAttemptAfter(1));
  EXPECT_EQ(lock_->Ops(), (std::vector<std::string>{"get", "update"}));
  EXPECT_EQ(store_->Record()->holder_identity, "other");
  EXPECT_FALSE(elector_->IsLeader());
  // The retry reads the winner's record and waits for it to expire.
  ASSERT_TRUE(StepAndWait(kAcquireStep));
  EXPECT_EQ(lock_->Ops().back(), "get");
  EXPECT_EQ(elector_->GetLeader(), "other");
  EXPECT_FALSE(started_);
}

TEST_F(LeaderElectorTest, RenewsEveryRetryPeriod) {  // L3
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  for (int i = 0; i < 3; ++i) {
    const size_t before = lock_->OpCount();
    clock_.Step(seconds(2));
    ASSERT_TRUE(WaitForAttemptAfter(before));
    const auto ops = lock_->Ops();
    EXPECT_EQ(ops.size(), before + 1);  // one optimistic update, no read
    EXPECT_EQ(ops.back(), "update");
    EXPECT_EQ(store_->Record()->renew_time, clock_.WallNow());
  }
  EXPECT_EQ(store_->Record()->leader_transitions, 0);
  EXPECT_TRUE(elector_->IsLeader());
  EXPECT_FALSE(stopped_);
}

TEST_F(LeaderElectorTest, SlowPathRenewsAfterAConflict) {  // L3
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  const metrics::Counter slowpath =
      metrics::CounterVec("leader_election_slowpath_total", "", {"name"}).With({name_});
  const double slow_before = slowpath.Value();
  // Someone else touched the object (same record, new resourceVersion).
  store_->Set(*store_->Record());
  ASSERT_TRUE(StepAndWait(seconds(2)));
  const auto ops = lock_->Ops();
  ASSERT_GE(ops.size(), 3u);
  EXPECT_EQ((std::vector<std::string>(ops.end() - 3, ops.end())),
            (std::vector<std::string>{"update", "get", "update"}));
  EXPECT_EQ(store_->Record()->renew_time, clock_.WallNow());
  EXPECT_EQ(slowpath.Value(), slow_before + 1);
  EXPECT_TRUE(elector_->IsLeader());
}

TEST_F(LeaderElectorTest, StopsLeadingWhenRenewalsFailPastTheRenewDeadline) {  // L3, L5
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  EXPECT_EQ(MasterStatus(name_), 1);
  lock_->FailAlways(Error::Transport(TransportCause::kConnectionRefused, "connection refused"));
  // Attempts at +2 (the deadline is then +12), +4, +6, +8, +10 all fail...
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(StepAndWait(seconds(2)));
  EXPECT_FALSE(stopped_);
  EXPECT_FALSE(work_done_);
  // ...and at +12 the deadline has passed.
  clock_.Step(seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_TRUE(stopped_);
  EXPECT_TRUE(work_done_);  // the leading work was told to stop
  EXPECT_EQ(MasterStatus(name_), 0);
  EXPECT_EQ(lock_->Events().back(), "me stopped leading");
}

// Fencing: when a renewal finds the lease held by someone else (another candidate took it over,
// or an admin rewrote it), the leading work is cancelled at that attempt, long before the renew
// deadline, and before on_stopped_leading runs.
TEST_F(LeaderElectorTest, StopsLeadingAtOnceWhenTheLeaseIsHeldByAnother) {
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  ASSERT_TRUE(StepAndWait(seconds(2)));  // one ordinary renewal
  EXPECT_FALSE(work_done_);
  store_->Set(Held("usurper", 1));
  // The next renewal (+2 s; the deadline would be +10 s later) conflicts, reads the record,
  // sees another holder and gives up at once.
  clock_.Step(seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_TRUE(work_done_);
  EXPECT_TRUE(stopped_);
  {
    std::lock_guard l(mu_);
    EXPECT_TRUE(leading_cancelled_first_);
  }
  EXPECT_FALSE(elector_->IsLeader());
  EXPECT_EQ(elector_->GetLeader(), "usurper");
  EXPECT_EQ(store_->Record()->holder_identity, "usurper");  // we never wrote over it
  EXPECT_EQ(MasterStatus(name_), 0);
  EXPECT_EQ(lock_->Events().back(), "me stopped leading");
}

// A renewal that fails without news of another holder (API server unreachable) is retried
// until the renew deadline; leading is cancelled before on_stopped_leading.
TEST_F(LeaderElectorTest, LeadingIsCancelledBeforeStoppedLeadingOnDeadline) {
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  lock_->FailAlways(Error{0, "Transport", "connection refused", {}});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(StepAndWait(seconds(2)));
  EXPECT_FALSE(work_done_);
  clock_.Step(seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  std::lock_guard l(mu_);
  EXPECT_TRUE(leading_cancelled_first_);
}

// A renewal request that hangs (no answer, no error) is cut off at the renew deadline, as
// upstream's renew does with its RenewDeadline context, so the loss is not delayed by it. The
// cut-off runs in real time (requests block in real time): short durations keep this test fast.
TEST_F(LeaderElectorTest, HungRenewalIsCutOffAtTheRenewDeadline) {
  LeaderElectionConfig c = Config();
  c.lease_duration = milliseconds(1000);
  c.renew_deadline = milliseconds(500);
  c.retry_period = milliseconds(200);
  Start(std::move(c));
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  lock_->hang_updates = true;
  const size_t before = lock_->OpCount();
  clock_.Step(milliseconds(200));  // the renewal starts and hangs; its deadline is +500 ms
  // The cut-off ends the whole attempt: the hung update fails "Canceled" and so does the slow
  // path's read, never sent after it. Only after that read is the elector's wait on the clock
  // the retry this test releases (a step taken earlier would reach no waiter, and the retry
  // would wait on a clock that no longer moves). Without a cut-off the update would hang for the
  // lock's 30 s bound, past WaitUntil's 10 s.
  ASSERT_TRUE(WaitForAttemptAfter(before + 1));
  const auto ops = lock_->Ops();
  EXPECT_EQ((std::vector<std::string>(ops.begin() + before, ops.end())),
            (std::vector<std::string>{"update", "get"}));
  EXPECT_FALSE(stopped_);
  EXPECT_TRUE(elector_->IsLeader());
  clock_.Step(milliseconds(600));  // past the deadline on the elector's clock: no more retries
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_TRUE(stopped_);
  EXPECT_TRUE(work_done_);
  EXPECT_EQ(lock_->OpCount(), before + 2);
  EXPECT_EQ(lock_->Events().back(), "me stopped leading");
}

TEST_F(LeaderElectorTest, AnotherElectorOfTheSameNameDoesNotResetTheMetric) {  // L5
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load(); }));
  EXPECT_EQ(MasterStatus(name_), 1);
  auto standby = LeaderElector::Create(Config());
  ASSERT_TRUE(standby.ok());
  EXPECT_EQ(MasterStatus(name_), 1);
}

TEST_F(LeaderElectorTest, ReleaseOnCancelWritesAnEmptyHolder) {  // L3, L5
  LeaderElectionConfig config = Config();
  config.release_on_cancel = true;
  Start(std::move(config));
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  clock_.Step(seconds(3));
  runner_.request_stop();
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_TRUE(work_done_);
  EXPECT_TRUE(stopped_);
  const auto rec = store_->Record();
  EXPECT_EQ(rec->holder_identity, "");
  EXPECT_EQ(rec->lease_duration_seconds, 1);
  EXPECT_EQ(rec->renew_time, clock_.WallNow());
  EXPECT_EQ(rec->leader_transitions, 0);
  EXPECT_FALSE(elector_->IsLeader());
  EXPECT_EQ(MasterStatus(name_), 0);
}

TEST_F(LeaderElectorTest, CancelWithoutReleaseKeepsTheHolder) {  // L3
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  runner_.request_stop();
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_EQ(store_->Record()->holder_identity, "me");
  EXPECT_TRUE(stopped_);
}

TEST_F(LeaderElectorTest, CancelWhileWaitingNeverStartsLeading) {  // L4
  store_->Set(Held("other"));
  Start(Config());
  ASSERT_TRUE(WaitForAttemptAfter(0));
  runner_.request_stop();
  ASSERT_TRUE(WaitUntil([&] { return run_returned_.load(); }));
  EXPECT_FALSE(started_);
  EXPECT_TRUE(stopped_);  // upstream calls OnStoppedLeading whenever Run returns
  EXPECT_EQ(MasterStatus(name_), 0);
}

TEST_F(LeaderElectorTest, CheckFailsWhenTheLeaderIsStuck) {  // L3
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  EXPECT_TRUE(elector_->Check(seconds(20)).ok());
  // The next renewal hangs inside the lock while time moves on. The flags are shared with the
  // hook so they outlive this body if the elector only notices `unblock` after it returns.
  auto in_update = std::make_shared<std::atomic<bool>>(false);
  auto unblock = std::make_shared<std::atomic<bool>>(false);
  lock_->before_update = [in_update, unblock] {
    *in_update = true;
    while (!*unblock) std::this_thread::sleep_for(milliseconds(1));
  };
  // Unblocks on every way out of this body, so TearDown can always join the elector.
  struct Unblock {
    std::shared_ptr<std::atomic<bool>> flag;
    ~Unblock() { *flag = true; }
  } unblock_on_exit{unblock};
  clock_.Step(seconds(2));
  ASSERT_TRUE(WaitUntil([&] { return in_update->load(); }));
  clock_.Step(seconds(34));  // 36 s since the last renewal
  // Upstream's tolerance: 36 s > 15 s + 20 s.
  Status stuck = elector_->Check(seconds(20));
  ASSERT_FALSE(stuck.ok());
  EXPECT_EQ(stuck.error().message, "failed election to renew leadership on lease " + name_);
  // Within a larger tolerance, the renewal that hangs still fails the check (ours, beyond
  // upstream: two retry periods without a renewal).
  Status hanging = elector_->Check(seconds(30));
  ASSERT_FALSE(hanging.ok());
  EXPECT_EQ(hanging.error().message,
            "the leader cannot renew lease " + name_ + ": no renewal has succeeded for 36s");
}

// Beyond upstream (which answers ok until lease_duration + 20 s, long after a leader that cannot
// reach the API server has given up): the check fails once a retry period and half the renew
// deadline (2 s + 5 s) have passed without a successful renewal, and recovers with the next one.
TEST_F(LeaderElectorTest, CheckFailsWhileTheLeaderCannotRenew) {
  Start(Config());
  ASSERT_TRUE(WaitUntil([&] { return started_.load() && clock_.Waiters() == 1; }));
  EXPECT_TRUE(elector_->Check(seconds(20)).ok());
  lock_->FailAlways(Error::Transport(TransportCause::kConnectionRefused, "connection refused"));
  for (int i = 0; i < 3; ++i) {  // 2, 4, 6 s: failing, but a slow API server could look so
    ASSERT_TRUE(StepAndWait(seconds(2)));
    EXPECT_TRUE(elector_->Check(seconds(20)).ok()) << i;
  }
  ASSERT_TRUE(StepAndWait(seconds(2)));  // 8 s without a renewal
  Status s = elector_->Check(seconds(20));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "the leader cannot renew lease " + name_ + ": no renewal has succeeded for 8s");
  lock_->StopFailing();  // the API server is back before the renew deadline
  ASSERT_TRUE(StepAndWait(seconds(2)));
  EXPECT_TRUE(elector_->Check(seconds(20)).ok());
  EXPECT_TRUE(elector_->IsLeader());
}

TEST(LeaderElectorConfigTest, RejectsInconsistentDurations) {  // L3
  auto lock = std::make_shared<FakeLock>(std::make_shared<FakeLeaseStore>(), "me");
  auto valid = [&] {
    LeaderElectionConfig c;
    c.lock = lock;
    c.callbacks.on_started_leading = [](std::stop_token) {};
    c.callbacks.on_stopped_leading = [] {};
    return c;
  };
  EXPECT_TRUE(LeaderElector::Create(valid()).ok());
  auto c = valid();
  c.lease_duration = seconds(10);  // == renew deadline
  EXPECT_FALSE(LeaderElector::Create(c).ok());
  c = valid();
  c.retry_period = milliseconds(8400);  // 10 s is not > 1.2 * 8.4 s
  EXPECT_FALSE(LeaderElector::Create(c).ok());
  c = valid();
  c.callbacks.on_stopped_leading = nullptr;
  EXPECT_FALSE(LeaderElector::Create(c).ok());
  c = valid();
  c.lock = std::make_shared<FakeLock>(std::make_shared<FakeLeaseStore>(), "");
  EXPECT_FALSE(LeaderElector::Create(c).ok());
}

TEST(IdentityTest, HostnameUnderscoreUUIDv4) {  // L2
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  auto id = NewIdentity();
  ASSERT_TRUE(id.ok());
  // 8-4-4-4-12 lower-case hex, version nibble 4, variant 8/9/a/b. (No std::regex: GCC 12 warns
  // inside it under the sanitizers.)
  auto uuid4 = [](std::string_view u) {
    if (u.size() != 36) return false;
    for (size_t i = 0; i < u.size(); ++i) {
      const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      const bool hex = (u[i] >= '0' && u[i] <= '9') || (u[i] >= 'a' && u[i] <= 'f');
      if (dash ? u[i] != '-' : !hex) return false;
    }
    return u[14] == '4' && std::string_view("89ab").find(u[19]) != std::string_view::npos;
  };
  ASSERT_EQ(id->rfind(std::string(host) + "_", 0), 0u) << *id;
  EXPECT_TRUE(uuid4(id->substr(std::string(host).size() + 1))) << *id;
  EXPECT_FALSE(uuid4("not-a-uuid"));
  EXPECT_NE(NewUUID(), NewUUID());
}

TEST(LeaseConversionTest, RecordRoundTripsThroughTheLeaseSpec) {  // L1
  LeaderElectionRecord r;
  r.holder_identity = "host_1";
  r.lease_duration_seconds = 15;
  r.acquire_time = api::Time{} + std::chrono::microseconds(1700000000123456);
  r.renew_time = api::Time{} + std::chrono::microseconds(1700000005654321);
  r.leader_transitions = 4;
  api::Lease lease;
  lease.metadata.name = "kube-controller-manager";
  lease.metadata.namespace_ = "kube-system";
  lease.spec = RecordToLeaseSpec(r);
  EXPECT_EQ(LeaseSpecToRecord(lease.spec), r);
  auto body = lease.ToJson();
  ASSERT_TRUE(body.ok());
  EXPECT_NE(body->find(R"("holderIdentity":"host_1")"), std::string::npos) << *body;
  EXPECT_NE(body->find(R"("leaseDurationSeconds":15)"), std::string::npos) << *body;
  EXPECT_NE(body->find(R"("renewTime":"2023-11-14T22:13:25.654321Z")"), std::string::npos) << *body;
  EXPECT_NE(body->find(R"("leaseTransitions":4)"), std::string::npos) << *body;
  // A released lease still writes its (empty) holder, as upstream.
  r.holder_identity.clear();
  EXPECT_EQ(RecordToLeaseSpec(r).holder_identity, std::optional<std::string>(""));
}

}  // namespace
}  // namespace kcm::leaderelection
