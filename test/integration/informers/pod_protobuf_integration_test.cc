// Protobuf reads against the shared testbed's kube-apiserver: with the client's content type
// application/vnd.kubernetes.protobuf (--kube-api-content-type's default) the server answers the
// pod LIST and WATCH in protobuf and a pod informer syncs and sees add, update and delete; with
// application/json the same informer reads JSON and sees the same.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"
#include "pkg/informers/shared_informer_factory.h"
#include "test/integration/framework/testenv.h"
#include "test/integration/informers/informer_testing.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using namespace kcm::informers::testing;

auto* const kEnv = testenv::RegisterTestbed({});

// What the informer's handler saw, in order.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // "add:<name>", "update:<name>:<label v>", "delete:<name>"

  void Record(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
    cv.notify_all();
  }
  bool WaitFor(const std::string& e, std::chrono::seconds timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] {
      for (const auto& x : events) {
        if (x == e) return true;
      }
      return false;
    });
  }
};

std::string LabelV(const api::ObjectPtr& obj) {
  const auto& labels = obj->Meta().labels;
  auto it = labels.find("v");
  return it == labels.end() ? "" : std::string(it->second);
}

class PodProtobufIntegration : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    KCM_REQUIRE_TESTBED();
    const auto& info = kEnv->info();
    admin_ = AdminClient(info.server, info.ca_file, info.admin_token);
    ASSERT_NE(admin_, nullptr);
    client::RestConfig config{
        .host = info.server, .ca_file = info.ca_file, .bearer_token = info.admin_token, .qps = -1};
    config.content_type = GetParam();
    auto c = client::RestClient::Create(config);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    client_ = *c;
    ns_ = UniqueName("pb");
    ASSERT_TRUE(CreateNamespace(admin_, ns_).ok());
  }
  void TearDown() override {
    if (admin_) DeleteNamespace(admin_, ns_);
  }
  bool Protobuf() const { return GetParam() == api::kContentTypeProtobuf; }

  std::shared_ptr<client::RestClient> admin_;
  std::shared_ptr<client::RestClient> client_;
  std::string ns_;
};

// The wire format the adapter negotiates: protobuf answers (magic bytes, protobuf Content-Type,
// length-prefixed watch frames) exactly when the content type asks for it.
TEST_P(PodProtobufIntegration, ServerAnswersInTheNegotiatedEncoding) {
  ASSERT_TRUE(CreatePods(admin_, ns_, "pre", 3, 3).ok());
  auto rc = std::make_shared<client::ResourceClient>(client_, kPodsGvr, true);
  const std::string accept = Protobuf() ? std::string(client::kAcceptProtobufOrJSON) : "";
  std::string content_type;
  auto body = rc->List(ns_, {}, {}, accept, &content_type);
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  EXPECT_EQ(client::IsProtobufContentType(content_type), Protobuf()) << content_type;
  EXPECT_EQ(api::HasProtobufMagic(*body), Protobuf());

  ResourceListerWatcher lw(rc, ns_, api::PodCodec());
  auto list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 3u);
  EXPECT_FALSE(list->resource_version.empty());

  auto stream = rc->Watch(ns_, {.resource_version = list->resource_version}, {}, accept);
  ASSERT_TRUE(stream.ok()) << stream.error().ToString();
  client::ResourceClient writer(admin_, kPodsGvr, true);
  ASSERT_TRUE(writer
                  .Patch(ns_, "pre-0", client::PatchType::kMergePatch,
                         R"({"metadata":{"labels":{"v":"1"}}})")
                  .ok());
  auto frame = (*stream)->Next();
  ASSERT_TRUE(frame.ok()) << frame.error().ToString();
  ASSERT_TRUE(frame->has_value());
  EXPECT_EQ((*stream)->protobuf(), Protobuf());
  api::Decoder decoder;
  auto ev = Protobuf() ? api::PodCodec().decode_watch_event_protobuf(decoder, **frame)
                       : api::PodCodec().decode_watch_event(decoder, api::JsonInput(**frame));
  ASSERT_TRUE(ev.ok()) << ev.error().ToString();
  EXPECT_EQ(ev->type, api::WatchEventType::kModified);
  EXPECT_EQ(ev->object->Meta().name, "pre-0");
  EXPECT_EQ(LabelV(ev->object), "1");
  (*stream)->Stop();
}

// A pod informer on this content type: initial LIST, then add, update and delete by WATCH.
TEST_P(PodProtobufIntegration, PodInformerSeesAddUpdateDelete) {
  ASSERT_TRUE(CreatePods(admin_, ns_, "pre", 3, 3).ok());
  SharedInformerFactoryOptions options;
  options.namespace_ = ns_;
  SharedInformerFactory factory(client_, 0s, options);
  auto pods = factory.Pods();
  Seen seen;
  auto reg = pods.informer->AddEventHandler(cache::MakeResourceEventHandler({
      .add_func = [&](const api::ObjectPtr& o, bool) { seen.Record("add:" + o->Meta().name); },
      .update_func =
          [&](const api::ObjectPtr&, const api::ObjectPtr& o) {
            seen.Record("update:" + o->Meta().name + ":" + LabelV(o));
          },
      .delete_func = [&](const api::ObjectPtr& o) { seen.Record("delete:" + o->Meta().name); },
  }));
  ASSERT_TRUE(reg.ok());
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(factory.WaitForCacheSync(stop.get_token())["pods"]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(seen.WaitFor("add:pre-" + std::to_string(i), 30s)) << i;
  }

  client::ResourceClient writer(admin_, kPodsGvr, true);
  ASSERT_TRUE(writer.Create(ns_, PodManifest("post")).ok());
  EXPECT_TRUE(seen.WaitFor("add:post", 30s));
  ASSERT_TRUE(writer
                  .Patch(ns_, "pre-1", client::PatchType::kMergePatch,
                         R"({"metadata":{"labels":{"v":"changed"}}})")
                  .ok());
  EXPECT_TRUE(seen.WaitFor("update:pre-1:changed", 30s));
  ASSERT_TRUE(writer.Delete(ns_, "pre-2", {.grace_period_seconds = 0}).ok());
  EXPECT_TRUE(seen.WaitFor("delete:pre-2", 30s));

  // The cache holds the decoded records: the label change and the pruned annotations.
  auto cached = pods.lister.ByNamespace(ns_).Get("pre-1");
  ASSERT_TRUE(cached.ok()) << cached.error().ToString();
  EXPECT_EQ((*cached)->metadata.labels.at("v"), "changed");
  EXPECT_EQ((*cached)->metadata.labels.at("app"), "informer-test");
  EXPECT_TRUE((*cached)->metadata.annotations.empty());
  EXPECT_EQ((*cached)->phase, api::PodPhase::kPending);
  factory.Shutdown();
}

INSTANTIATE_TEST_SUITE_P(ContentTypes, PodProtobufIntegration,
                         ::testing::Values(std::string(api::kContentTypeProtobuf),
                                           std::string(client::kContentTypeJSON)),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == api::kContentTypeProtobuf ? "Protobuf" : "Json";
                         });

}  // namespace
}  // namespace kcm::informers
