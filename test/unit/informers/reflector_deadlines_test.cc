// The reflector over the production ListerWatcher and a scripted server that stalls or
// misbehaves: it recovers by the error's reason and transport cause alone (pkg/util/errors.h) —
// a stalled LIST is retried after its deadline, a silent watch is re-watched without a relist,
// an oversized watch frame makes it relist.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "pkg/cache/reflector.h"
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
using mocks::RecordingStore;
using mocks::WaitUntil;

std::string Pod(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","resourceVersion":")" + rv +
         R"("}})";
}

std::string PodList(const std::string& rv, const std::string& items) {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"("},"items":[)" + items + "]}";
}

bool IsWatch(const RecordedRequest& r) {
  return r.query.find("watch=true") != std::string::npos;
}

int Count(const TestServer& server, bool watches) {
  int n = 0;
  for (const auto& r : server.requests()) n += IsWatch(r) == watches ? 1 : 0;
  return n;
}

// Runs a Reflector on its own thread until destroyed.
class RunningReflector {
 public:
  RunningReflector(const TestServer& server, client::RestConfig config,
                   std::shared_ptr<RecordingStore> store, cache::ReflectorOptions options = {}) {
    config.host = server.url();
    config.qps = -1;
    auto c = client::RestClient::Create(config);
    EXPECT_TRUE(c.ok()) << c.error().ToString();
    auto pods = std::make_shared<client::ResourceClient>(*c, PodsResource().gvr, true);
    auto lw = std::make_shared<ResourceListerWatcher>(pods, "ns", api::PodCodec(),
                                                      TweakListOptionsFunc{}, stop_.get_token());
    options.name = "test pods";
    options.backoff.initial = 50ms;
    reflector_ = std::make_unique<cache::Reflector>(lw, store, options);
    thread_ = std::jthread([this] { reflector_->Run(stop_.get_token()); });
  }
  ~RunningReflector() {
    stop_.request_stop();
    thread_.join();
  }

 private:
  std::stop_source stop_;
  std::unique_ptr<cache::Reflector> reflector_;
  std::jthread thread_;
};

// A LIST the server never answers ends at the stall limit (kTimedOut, logged by Run) and the
// reflector lists again after its backoff; the second LIST fills the store.
TEST(ReflectorDeadlineTest, StalledListIsRetriedAfterTheStallLimit) {
  std::atomic<int> lists{0};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r)) {
      c.StartChunked(200);
      c.HoldOpen();
    } else if (++lists == 1) {
      c.HoldOpen();  // accepts the LIST, never answers
    } else {
      c.Respond(200, PodList("5", Pod("a", "5")));
    }
  });
  auto store = std::make_shared<RecordingStore>();
  {
    RunningReflector running(server, {.stall_timeout = 1s}, store);
    EXPECT_TRUE(WaitUntil([&] { return !store->ops().empty(); }, 20s));
  }
  ASSERT_FALSE(store->ops().empty());
  EXPECT_EQ(store->ops().front(), "Replace@5: a");
  EXPECT_GE(lists.load(), 2);
}

// A watch that stays silent past timeoutSeconds + margin is ended by the client (kTimedOut) and
// re-watched from the last resourceVersion without a relist: no event was lost.
TEST(ReflectorDeadlineTest, SilentWatchIsRewatchedWithoutRelist) {
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r)) {
      c.StartChunked(200);
      c.HoldOpen();  // never a byte, not even a bookmark
    } else {
      c.Respond(200, PodList("10", Pod("a", "10")));
    }
  });
  auto store = std::make_shared<RecordingStore>();
  cache::ReflectorOptions options;
  options.min_watch_timeout = 1s;  // timeoutSeconds=1
  {
    RunningReflector running(server, {.watch_timeout_margin = 1s}, store, options);
    EXPECT_TRUE(WaitUntil([&] { return Count(server, /*watches=*/true) >= 2; }, 20s));
  }
  EXPECT_EQ(Count(server, /*watches=*/false), 1);
  int watches = 0;
  for (const auto& r : server.requests()) {
    if (!IsWatch(r)) continue;
    ++watches;
    EXPECT_NE(r.query.find("resourceVersion=10"), std::string::npos) << r.query;
    EXPECT_NE(r.query.find("timeoutSeconds=1"), std::string::npos) << r.query;
  }
  EXPECT_GE(watches, 2);
  EXPECT_EQ(store->ops(), (std::vector<std::string>{"Replace@10: a"}));
}

// A watch frame over max_object_bytes ends the watch (kTooLarge): the event is lost, so the
// reflector relists and then watches from the new list's resourceVersion.
TEST(ReflectorDeadlineTest, OversizedWatchFrameMakesTheInformerRelist) {
  constexpr std::size_t kLimit = 32 * 1024;
  std::atomic<int> lists{0};
  std::atomic<int> watches{0};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r)) {
      c.StartChunked(200);
      if (++watches == 1) {
        c.Chunk(R"({"type":"ADDED","object":{"metadata":{"name":"b","namespace":"ns",)"
                R"("resourceVersion":"11","annotations":{"pad":")" +
                std::string(4 * kLimit, 'z') + R"("}}}})" + "\n");
      }
      c.HoldOpen();
    } else if (++lists == 1) {
      c.Respond(200, PodList("10", Pod("a", "10")));
    } else {
      c.Respond(200, PodList("20", Pod("a", "10") + "," + Pod("b", "20")));
    }
  });
  auto store = std::make_shared<RecordingStore>();
  {
    RunningReflector running(server, {.max_object_bytes = kLimit}, store);
    EXPECT_TRUE(WaitUntil([&] { return watches.load() >= 2; }, 20s));
  }
  EXPECT_EQ(store->ops(), (std::vector<std::string>{"Replace@10: a", "Replace@20: a b"}));
  std::vector<std::string> watch_rvs;
  for (const auto& r : server.requests()) {
    if (IsWatch(r)) watch_rvs.push_back(r.query);
  }
  ASSERT_GE(watch_rvs.size(), 2u);
  EXPECT_NE(watch_rvs[0].find("resourceVersion=10"), std::string::npos) << watch_rvs[0];
  EXPECT_NE(watch_rvs[1].find("resourceVersion=20"), std::string::npos) << watch_rvs[1];
}

}  // namespace
}  // namespace kcm::informers
