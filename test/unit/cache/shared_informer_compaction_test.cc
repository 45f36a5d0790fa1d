// SharedIndexInformer tests of compaction: objects that stayed unchanged are compacted without
// a notification, and pending compactions stay bounded under a flood of updates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <stdexcept>
#include <thread>

#include "pkg/cache/lister.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/cache/wait.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/cache/shared_informer_fixture.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::Payload;
using ::kcm::mocks::WaitUntil;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// 4.7
// SharedIndexInformerOptions::compact: an object a list or watch event stored is offered once it
// has stayed unchanged for compact_after, and its copy replaces it without a notification; an
// object replaced or deleted before then is not offered at that version, nor one that
// `compactable` says has nothing to compact.
TEST_F(SharedInformerTest, CompactsWhatStayedUnchangedWithoutANotification) {
  std::mutex mu;
  std::vector<std::string> offered;
  informer_ = std::make_unique<SharedIndexInformer>(
      lw_, SharedIndexInformerOptions{
               .name = "test",
               .expected_kind = "Fake",
               .clock = &clock_,
               .rand = [] { return 0.5; },
               .compact = [&](const api::Object& obj) -> api::ObjectPtr {
                 std::lock_guard lock(mu);
                 const api::ObjectMeta& m = obj.Meta();
                 offered.push_back(m.name + "@" + m.resource_version.str());
                 if (m.name == "keep") return nullptr;
                 return MakeObj(m.namespace_.str(), m.name, m.resource_version.str(), "compacted");
               },
               .compactable = [](const api::Object& obj) { return obj.Meta().name != "packed"; },
               .compact_after = 10s});
  auto offers = [&] {
    std::lock_guard lock(mu);
    return offered;
  };
  auto handler = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer_->AddEventHandler(handler).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1"), MakeObj("ns", "keep", "1"),
                   MakeObj("ns", "packed", "1")},
                  "1");
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "2"));
  w->Push(api::WatchEventType::kDeleted, MakeObj("ns", "b", "3"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 6; }));
  const api::ObjectPtr a2 = informer_->GetStore()->GetByKey("ns/a");
  ASSERT_NE(a2, nullptr);
  EXPECT_TRUE(offers().empty()) << "nothing is due before compact_after";

  clock_.Step(10s);
  // Done once nothing is pending: the copy is stored after `compact` returns.
  ASSERT_TRUE(WaitUntil([&] { return informer_->PendingCompactions() == 0; }));
  EXPECT_THAT(offers(), ElementsAre("keep@1", "a@2"))
      << "a@1 was replaced, b deleted, packed not compactable";
  const api::ObjectPtr compacted = informer_->GetStore()->GetByKey("ns/a");
  ASSERT_NE(compacted, nullptr);
  EXPECT_NE(compacted, a2);
  EXPECT_EQ(Payload(compacted), "compacted");
  EXPECT_EQ(compacted->Meta().resource_version, "2");
  EXPECT_EQ(Payload(informer_->GetStore()->GetByKey("ns/keep")), "") << "null keeps the object";
  EXPECT_THAT(informer_->GetStore()->ListKeys(),
              UnorderedElementsAre("ns/a", "ns/keep", "ns/packed"));

  // A later change is offered again once it has stayed; the compacted copy itself is not.
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "5"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 7; }));
  clock_.Step(10s);
  ASSERT_TRUE(WaitUntil([&] { return offers().size() == 3; }));
  EXPECT_EQ(offers().back(), "a@5");
  EXPECT_THAT(handler->events(),
              ElementsAre("add a@1 initial", "add b@1 initial", "add keep@1 initial",
                          "add packed@1 initial", "update a@1->2", "delete b", "update a@2->5"))
      << "a compaction is not an event";
}

// Updates faster than compact_after (a busy rollout, or a server flooding one object) do not
// grow the pending compactions with the update rate: entries of replaced objects are dropped
// once the list has doubled, and only the stored object is offered when due.
TEST_F(SharedInformerTest, PendingCompactionsStayBoundedUnderAFloodOfUpdates) {
  std::mutex mu;
  std::set<std::string> offered;
  informer_ = std::make_unique<SharedIndexInformer>(
      lw_, SharedIndexInformerOptions{.name = "test",
                                      .expected_kind = "Fake",
                                      .clock = &clock_,
                                      .rand = [] { return 0.5; },
                                      .compact = [&](const api::Object& obj) -> api::ObjectPtr {
                                        std::lock_guard lock(mu);
                                        offered.insert(obj.Meta().name + "@" +
                                                       obj.Meta().resource_version.str());
                                        return nullptr;
                                      },
                                      .compact_after = 10s});
  auto handler = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer_->AddEventHandler(handler).ok());
  lw_->ScriptList({MakeObj("ns", "other", "1")}, "1");
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  // Each update applied before the next is sent: one pop each (updates queued together are one
  // pop, and leave one entry).
  constexpr int kUpdates = 2500;
  for (int i = 0; i < kUpdates; ++i) {
    w->Push(api::WatchEventType::kModified, MakeObj("ns", "hot", std::to_string(i + 2)));
    ASSERT_TRUE(WaitUntil([&] { return handler->size() == static_cast<size_t>(i) + 2; }));
  }
  // Two keys have a stored object: what stays is the slack plus about one per key.
  EXPECT_LE(informer_->PendingCompactions(), 1024u + 2 * 2);
  EXPECT_GE(informer_->PendingCompactions(), 2u) << "the stored objects are still pending";
  clock_.Step(10s);
  ASSERT_TRUE(WaitUntil([&] { return informer_->PendingCompactions() == 0; }));
  std::lock_guard lock(mu);
  EXPECT_THAT(offered, ElementsAre("hot@2501", "other@1"))
      << "only each key's stored object is offered";
}

}  // namespace
}  // namespace kcm::cache
