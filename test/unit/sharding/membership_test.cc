#include "pkg/sharding/membership.h"

#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"

namespace kcm::sharding {
namespace {

using std::chrono::seconds;

class MembershipTest : public ::testing::Test {
 protected:
  // The Lease of `identity`, renewed now by the wall clock unless told otherwise.
  MemberLease Lease(const std::string& identity, const std::string& rv,
                    std::optional<api::Time> renewed = std::nullopt,
                    const std::string& holder = "\x01") {
    MemberLease l;
    l.name = MemberLeaseName("kcm", identity);
    l.holder = holder == "\x01" ? identity : holder;
    l.resource_version = rv;
    l.renew_time = renewed ? renewed : std::optional<api::Time>(clock_.WallNow());
    l.lease_duration_seconds = 15;
    return l;
  }

  FakeClock clock_;
  Membership m_{"kcm", clock_, seconds(2), seconds(5)};
};

TEST_F(MembershipTest, LeaseNamesAreValidObjectNames) {
  const std::string name = MemberLeaseName("kcm", "host_1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  EXPECT_EQ(name.rfind("kcm-member-", 0), 0u);
  EXPECT_EQ(name.size(), std::string("kcm-member-").size() + 16);
  EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-"), std::string::npos);
}

// Observed-time rule: alive while its Lease keeps changing; dead a lease duration after the last
// change we saw, whatever its renewTime says.
TEST_F(MembershipTest, DeadALeaseDurationAfterTheLastRenewalSeen) {
  m_.Update({Lease("a", "1"), Lease("b", "1")});
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a", "b"}));
  for (int i = 2; i <= 10; ++i) {
    clock_.Step(seconds(2));
    m_.Update({Lease("a", std::to_string(i)), Lease("b", "1", clock_.WallNow())});
  }
  // b's record never changed for 18 s: dead, although it claims a fresh renewTime.
  EXPECT_EQ(m_.MayServe(), (std::set<std::string>{"a"}));
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a"}));
}

// A replica that stopped renewing a moment ago may still serve, but is given nothing: it is
// probably dead, and whatever it got would wait a lease duration more.
TEST_F(MembershipTest, OnlyFreshReplicasAreGivenRanges) {
  m_.Update({Lease("a", "1"), Lease("b", "1")});
  clock_.Step(seconds(3));
  m_.Update({Lease("a", "2"), Lease("b", "1")});
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a", "b"}));
  clock_.Step(seconds(3));
  m_.Update({Lease("a", "3"), Lease("b", "1")});
  EXPECT_EQ(m_.MayServe(), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a"}));
  // Seen for the first time, but its renewTime is old.
  m_.Observe(Lease("c", "1", clock_.WallNow() - seconds(8)));
  EXPECT_TRUE(m_.MayServe().contains("c"));
  EXPECT_FALSE(m_.Members().contains("c"));
}

// A replica that just started sees an old renewTime and need not wait a lease duration.
TEST_F(MembershipTest, AnOldRenewTimeIsDeadAtOnce) {
  m_.Update({Lease("a", "1", clock_.WallNow() - seconds(30)),
             Lease("b", "1", clock_.WallNow() - seconds(16))});
  // b: 16 s is within 15 s + 2 s of skew.
  EXPECT_EQ(m_.MayServe(), (std::set<std::string>{"b"}));
}

// Deleted, released or taken by another holder: the replica learns it only at its next renewal,
// so it may still serve for a lease duration — but is given nothing.
TEST_F(MembershipTest, ALeaseThatChangedHandsMayStillServe) {
  m_.Update({Lease("a", "1"), Lease("b", "1"), Lease("c", "1")});
  clock_.Step(seconds(1));
  m_.Update({Lease("a", "2", std::nullopt, "thief"), Lease("b", "2", std::nullopt, "")});
  m_.Deleted(MemberLeaseName("kcm", "c"));  // also gone from the informer
  EXPECT_EQ(m_.MayServe(), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(m_.Members().empty());
  clock_.Step(seconds(16));
  EXPECT_TRUE(m_.MayServe().empty());
}

// A fresh read of a Lease the informer shows as stale brings it back to life.
TEST_F(MembershipTest, AFreshReadWins) {
  m_.Update({Lease("a", "1")});
  clock_.Step(seconds(16));
  EXPECT_TRUE(m_.MayServe().empty());
  m_.Observe(Lease("a", "7"));
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a"}));
}

// Deleted Leases are forgotten once their replica is certainly gone.
TEST_F(MembershipTest, ForgetsDeletedLeases) {
  m_.Update({Lease("a", "1")});
  m_.Update({});
  EXPECT_EQ(m_.MayServe(), (std::set<std::string>{"a"}));
  clock_.Step(seconds(31));
  m_.Update({});
  EXPECT_TRUE(m_.MayServe().empty());
  // A Lease of the same name seen again starts afresh.
  m_.Update({Lease("a", "1")});
  EXPECT_EQ(m_.Members(), (std::set<std::string>{"a"}));
}

TEST_F(MembershipTest, StaleAfterGrace) {
  m_.Update({Lease("a", "1"), Lease("b", "1")});
  clock_.Step(seconds(15 + 61));
  m_.Update({Lease("a", "1"), Lease("b", "2")});
  EXPECT_EQ(m_.Stale(seconds(60)), (std::vector<std::string>{MemberLeaseName("kcm", "a")}));
}

}  // namespace
}  // namespace kcm::sharding
