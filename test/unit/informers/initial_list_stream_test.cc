// The informer's first list is queued and applied while its body arrives (DeltaFIFO::BeginList),
// against a scripted server: items reach the cache and the handlers before the body has ended,
// HasSynced stays false until it has, and a list cut midway leaves what was applied of it until
// the next list, which reconciles it by Replace's rules (docs/design/list-streaming.md,
// "Initial list as it arrives").
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/keys.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/client/rest_client.h"
#include "pkg/informers/resource_lister_watcher.h"
#include "pkg/informers/resources.h"
#include "test/unit/client/test_server.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;
using mocks::WaitUntil;

// More than one batch of the reflector's hand-over (256 items), so that some items are handed
// over while the body is still open and some are not.
constexpr int kPrefix = 300;

std::string PodJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"ns","resourceVersion":")" + rv + R"("},"status":{"phase":"Running"}})";
}

std::string ListHead(const std::string& rv) {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"("},"items":[)";
}

std::string Pods(int from, int to, const std::string& rv) {
  std::string out;
  for (int i = from; i < to; ++i)
    out += (i > from ? "," : "") + PodJson("p" + std::to_string(i), rv);
  return out;
}

bool IsWatch(const RecordedRequest& r) {
  return r.query.find("watch=true") != std::string::npos;
}

// What the handler saw, in order: "add p1 initial", "update p0 10->20", "delete p3".
class Recorder {
 public:
  cache::ResourceEventHandlerFuncs Funcs() {
    return {
        .add_func =
            [this](const api::ObjectPtr& obj, bool initial) {
              Push("add " + obj->Meta().name + (initial ? " initial" : ""));
            },
        .update_func =
            [this](const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) {
              Push("update " + new_obj->Meta().name + " " + old_obj->Meta().resource_version +
                   "->" + new_obj->Meta().resource_version);
            },
        .delete_func =
            [this](const api::ObjectPtr& obj) {
              const auto* tombstone = cache::AsTombstone(*obj);
              Push("delete " + (tombstone ? tombstone->Obj()->Meta().name : obj->Meta().name));
            },
    };
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  void Push(std::string e) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(e));
  }
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

// An informer of the pods of namespace ns on the scripted server, run on its own thread.
class RunningInformer {
 public:
  RunningInformer(const TestServer& server, int max_retries) {
    client::RestClient::Options options;
    options.retry.max_retries = max_retries;
    auto c = client::RestClient::Create({.host = server.url(), .qps = -1}, options);
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    auto pods = std::make_shared<client::ResourceClient>(*c, PodsResource().gvr, true);
    auto lw = std::make_shared<ResourceListerWatcher>(pods, "ns", api::PodCodec(),
                                                      TweakListOptionsFunc{}, stop_.get_token());
    informer_ = std::make_unique<cache::SharedIndexInformer>(
        lw, cache::SharedIndexInformerOptions{.name = "test pods", .expected_kind = "Pod"});
    EXPECT_TRUE(informer_->AddEventHandler(recorder_.Funcs()).ok());
    thread_ = std::jthread([this] { informer_->Run(stop_.get_token()); });
  }
  ~RunningInformer() {
    stop_.request_stop();
    thread_.join();
  }
  cache::SharedIndexInformer& informer() { return *informer_; }
  const Recorder& recorder() const { return recorder_; }
  // name -> resourceVersion of what the cache holds.
  std::map<std::string, std::string> Cached() const {
    std::map<std::string, std::string> out;
    for (const auto& obj : informer_->GetIndexer()->List()) {
      out[obj->Meta().name] = obj->Meta().resource_version;
    }
    return out;
  }

 private:
  std::stop_source stop_;
  Recorder recorder_;
  std::unique_ptr<cache::SharedIndexInformer> informer_;
  std::jthread thread_;
};

// Blocks the server's handler until the test opens it (or 10 s pass).
class Gate {
 public:
  void Open() { open_ = true; }
  void Wait() const {
    WaitUntil([this] { return open_.load(); });
  }

 private:
  std::atomic<bool> open_{false};
};

// Items reach the cache and the handlers (as initial-list adds) while the body is still open;
// HasSynced and the store's resourceVersion wait for its end.
TEST(InitialListStreamTest, AppliedWhileTheBodyArrivesSyncedOnlyAtItsEnd) {
  Gate gate;
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    c.StartChunked(200);
    if (IsWatch(r)) {
      c.HoldOpen();
      return;
    }
    c.Chunk(ListHead("50") + Pods(0, kPrefix, "7"));
    gate.Wait();
    c.Chunk("," + Pods(kPrefix, kPrefix + 100, "7") + "]}");
    c.EndChunked();
  });
  RunningInformer run(server, /*max_retries=*/10);

  // The first batch is in the cache though the list has not ended.
  ASSERT_TRUE(WaitUntil([&] { return run.Cached().size() >= 256; }));
  EXPECT_FALSE(run.informer().HasSynced());
  EXPECT_EQ(run.informer().LastStoreSyncResourceVersion(), "");
  EXPECT_LT(run.Cached().size(), static_cast<size_t>(kPrefix + 100));

  gate.Open();
  ASSERT_TRUE(WaitUntil([&] { return run.informer().HasSynced(); }));
  EXPECT_EQ(run.Cached().size(), static_cast<size_t>(kPrefix + 100));
  EXPECT_EQ(run.informer().LastStoreSyncResourceVersion(), "50");
  // Each item once, as part of the initial list, in list order.
  ASSERT_TRUE(WaitUntil([&] { return run.recorder().events().size() >= kPrefix + 100u; }));
  const std::vector<std::string> events = run.recorder().events();
  ASSERT_EQ(events.size(), kPrefix + 100u);
  for (int i = 0; i < kPrefix + 100; ++i) {
    EXPECT_EQ(events[i], "add p" + std::to_string(i) + " initial");
  }
}

// The first list is cut after part of it was applied. client-go would apply nothing of it (its
// `Reflector.list` hands a list to `syncWith` → `DeltaFIFO.Replace` only once it is whole); here
// the applied part (a prefix of the snapshot at RV 10, never marked synced) stays until the next
// list (the snapshot at RV 20: p0 changed, q new, the rest gone), which is taken whole by
// Replace: updates for what it lists, deletions for what it does not. The handlers' events are
// those of a cache that held the prefix and then moved to RV 20; HasSynced turns true only once
// the cache is the RV 20 list. Once with the REST client retrying the cut GET (the decoder of the
// retry says a new answer begins), once with the list failing and the reflector listing again.
void CutListThenRelist(int max_retries) {
  Gate gate;
  std::atomic<int> lists{0};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    c.StartChunked(200);
    if (IsWatch(r)) {
      c.HoldOpen();
      return;
    }
    if (++lists == 1) {
      c.Chunk(ListHead("10") + Pods(0, kPrefix, "10"));
      gate.Wait();
      c.Chunk("," + PodJson("late", "10").substr(0, 20));  // half an item, then gone
      c.Close();
      return;
    }
    c.Chunk(ListHead("20") + PodJson("p0", "20") + "," + PodJson("q", "20") + "]}");
    c.EndChunked();
  });
  RunningInformer run(server, max_retries);

  ASSERT_TRUE(WaitUntil([&] { return run.Cached().size() >= 256; }));
  EXPECT_FALSE(run.informer().HasSynced());
  const size_t applied = run.Cached().size();
  gate.Open();

  ASSERT_TRUE(WaitUntil([&] { return run.informer().HasSynced(); }));
  // Synced means the cache is the second list, nothing of the first left.
  EXPECT_EQ(run.Cached(), (std::map<std::string, std::string>{{"p0", "20"}, {"q", "20"}}));
  EXPECT_EQ(run.informer().LastStoreSyncResourceVersion(), "20");
  EXPECT_EQ(lists.load(), 2);

  // Every item of the prefix handed over was added once (as initial-list items); the second
  // list updated p0, added q and deleted the rest of what had been added.
  const size_t expected = applied + 2 + (applied - 1);
  ASSERT_TRUE(WaitUntil([&] { return run.recorder().events().size() >= expected; }));
  const std::vector<std::string> events = run.recorder().events();
  ASSERT_EQ(events.size(), expected);
  std::multiset<std::string> got(events.begin(), events.end());
  std::multiset<std::string> want;
  for (size_t i = 0; i < applied; ++i) want.insert("add p" + std::to_string(i) + " initial");
  want.insert("update p0 10->20");
  want.insert("add q initial");
  for (size_t i = 1; i < applied; ++i) want.insert("delete p" + std::to_string(i));
  EXPECT_EQ(got, want);
  // The prefix came first, in list order.
  for (size_t i = 0; i < applied; ++i) {
    EXPECT_EQ(events[i], "add p" + std::to_string(i) + " initial");
  }
}

TEST(InitialListStreamTest, CutListRetriedByTheClientIsReconciledByReplace) {
  CutListThenRelist(/*max_retries=*/10);
}

TEST(InitialListStreamTest, CutListFailedThenRelistedIsReconciledByReplace) {
  CutListThenRelist(/*max_retries=*/0);
}

}  // namespace
}  // namespace kcm::informers
