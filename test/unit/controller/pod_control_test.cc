#include "pkg/controller/pod_control.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/replicaset.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/record/testing/fake_recorder.h"
#include "test/unit/client/test_server.h"

namespace kcm::controller {
namespace {

namespace json = api::json;
using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;

constexpr char kTemplate[] = R"({
  "metadata": {"labels": {"app": "foo"}, "annotations": {"a": "1"}, "finalizers": ["f/x"],
               "name": "ignored", "namespace": "ignored-too"},
  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], "futureField": {"x": [1, 2.50]}}
})";

api::ReplicaSet MakeRS() {
  api::ReplicaSet rs;
  rs.metadata.name = "rs";
  rs.metadata.namespace_ = "ns";
  rs.metadata.uid = "rs-uid";
  rs.metadata.resource_version = "42";
  rs.spec.pod_template = api::PodTemplate{kTemplate, {{"app", "foo"}}};
  return rs;
}

// R11: the create body — generateName, labels/annotations/finalizers and spec verbatim (unknown
// fields and number spellings included), one controller ownerReference, template name dropped.
TEST(GetPodFromTemplateTest, BuildsCreateBody) {
  const api::ReplicaSet rs = MakeRS();
  const api::OwnerReference ref =
      api::ControllerOwnerReference("apps/v1", "ReplicaSet", rs.metadata);
  Result<std::string> body = GetPodFromTemplate(rs.spec.pod_template, "ns", "rs", &ref);
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  auto pod = json::Parse(*body);
  ASSERT_TRUE(pod.ok());
  auto tmpl = json::Parse(kTemplate);
  EXPECT_EQ(json::GetPath(*pod, {"kind"})->as_string(), "Pod");
  EXPECT_EQ(json::GetPath(*pod, {"apiVersion"})->as_string(), "v1");
  EXPECT_EQ(json::GetPath(*pod, {"metadata", "generateName"})->as_string(), "rs-");
  EXPECT_EQ(json::GetPath(*pod, {"metadata", "name"}), nullptr);
  EXPECT_EQ(json::GetPath(*pod, {"metadata", "namespace"})->as_string(), "ns");
  for (std::string_view field : {"labels", "annotations", "finalizers"}) {
    EXPECT_EQ(*json::GetPath(*pod, {"metadata", field}), *json::GetPath(*tmpl, {"metadata", field}))
        << field;
  }
  EXPECT_EQ(*json::GetPath(*pod, {"spec"}), *json::GetPath(*tmpl, {"spec"}));
  EXPECT_EQ(json::GetPath(*pod, {"spec", "futureField", "x"})->as_array()[1].number_text(), "2.50");
  const auto& owners = json::GetPath(*pod, {"metadata", "ownerReferences"})->as_array();
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0], api::OwnerReferenceToJson(ref));
  EXPECT_TRUE(owners[0].Find("controller")->as_bool());
  EXPECT_TRUE(owners[0].Find("blockOwnerDeletion")->as_bool());

  // The same body pkg/api builds for a ReplicaSet.
  Result<std::string> from_api = api::NewPodFromReplicaSet(rs);
  ASSERT_TRUE(from_api.ok());
  EXPECT_TRUE(json::SemanticEqual(*pod, *json::Parse(*from_api)));
}

// R11: a template without labels is refused.
TEST(GetPodFromTemplateTest, RefusesTemplateWithoutLabels) {
  api::PodTemplate tmpl{R"({"spec":{"containers":[]}})", {}};
  Result<std::string> body = GetPodFromTemplate(tmpl, "ns", "rs", nullptr);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.error().reason, "InvalidArgument");
  EXPECT_FALSE(errors::IsInvalid(body.error()));  // a local error, not a 422
}

std::string StatusBody(int code, const char* reason, const char* message, const char* causes = "") {
  return std::string(R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")") +
         message + R"(","reason":")" + reason + R"(","details":{"causes":[)" + causes +
         R"(]},"code":)" + std::to_string(code) + "}";
}

class RealPodControlTest : public ::testing::Test {
 protected:
  void Start(TestServer::Handler handler, WriteFence fence = {}) {
    server_ = std::make_unique<TestServer>(std::move(handler));
    auto rest = client::RestClient::Create({.host = server_->url(), .qps = -1});
    ASSERT_TRUE(rest.ok()) << rest.error().ToString();
    auto pods = std::make_shared<client::ResourceClient>(
        *rest, client::GroupVersionResource{"", "v1", "pods"}, true);
    control_ = std::make_unique<RealPodControl>(pods, recorder_, "apps/v1", std::move(fence));
  }

  api::ReplicaSet rs_ = MakeRS();
  api::OwnerReference ref_ = api::ControllerOwnerReference("apps/v1", "ReplicaSet", rs_.metadata);
  record::FakeRecorder recorder_{/*include_object=*/true};
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<RealPodControl> control_;
};

// R11, R12: a create POSTs the pod body and records SuccessfulCreate on the ReplicaSet.
TEST_F(RealPodControlTest, CreateRecordsSuccessfulCreate) {
  Start([](const RecordedRequest&, Conn& c) {
    c.Respond(201, R"({"kind":"Pod","metadata":{"name":"rs-x7k2p","namespace":"ns"}})");
  });
  ASSERT_TRUE(control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_).ok());
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns/pods");
  auto sent = json::Parse(requests[0].body);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(json::GetPath(*sent, {"metadata", "generateName"})->as_string(), "rs-");
  EXPECT_EQ(recorder_.Events(),
            (std::vector<std::string>{"Normal SuccessfulCreate Created pod: rs-x7k2p "
                                      "involvedObject{kind=ReplicaSet,apiVersion=apps/v1}"}));
}

// Fencing: once the controller's stop token (the leader's "leading" token) is requested, every
// write is refused locally with "Canceled" — no request reaches the server and no event is
// recorded — while writes before the stop went out.
TEST_F(RealPodControlTest, ClosedFenceRefusesEveryWriteLocally) {
  std::stop_source leading;
  Start(
      [](const RecordedRequest& r, Conn& c) {
        if (r.method == "POST") {
          c.Respond(201, R"({"kind":"Pod","metadata":{"name":"rs-a","namespace":"ns"}})");
        } else {
          c.Respond(200, R"({"kind":"Pod","metadata":{"name":"rs-a","namespace":"ns"}})");
        }
      },
      WriteFence(leading.get_token()));
  ASSERT_TRUE(control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_).ok());
  ASSERT_EQ(server_->requests().size(), 1u);

  leading.request_stop();
  Status created = control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_);
  Status deleted = control_->DeletePod("ns", "rs-a", rs_);
  Status patched = control_->PatchPod("ns", "rs-a", R"({"metadata":{}})");
  for (const Status* s : {&created, &deleted, &patched}) {
    ASSERT_FALSE(s->ok());
    EXPECT_EQ(s->error().reason, "Canceled");
    EXPECT_NE(s->error().message.find("write refused"), std::string::npos) << s->error().message;
    EXPECT_TRUE(IsStopped(s->error()));
  }
  EXPECT_NE(created.error().message.find("create pod in ns"), std::string::npos);
  EXPECT_NE(deleted.error().message.find("delete pod ns/rs-a"), std::string::npos);
  EXPECT_EQ(server_->requests().size(), 1u);  // nothing sent after the stop
  EXPECT_EQ(recorder_.Events().size(), 1u);   // only the SuccessfulCreate before it
}

// R12: a failed create records FailedCreate with the server's message and returns the error.
TEST_F(RealPodControlTest, CreateFailureRecordsFailedCreate) {
  Start([](const RecordedRequest&, Conn& c) {
    c.Respond(403, StatusBody(403, "Forbidden", "exceeded quota: q"));
  });
  Status s = control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, 403);
  EXPECT_EQ(recorder_.Events(),
            (std::vector<std::string>{"Warning FailedCreate Error creating: exceeded quota: q "
                                      "involvedObject{kind=ReplicaSet,apiVersion=apps/v1}"}));
}

// R7, R12: creates refused because the namespace is terminating record no event.
TEST_F(RealPodControlTest, NamespaceTerminatingRecordsNoEvent) {
  Start([](const RecordedRequest&, Conn& c) {
    c.Respond(403, StatusBody(403, "Forbidden", "namespace ns is being terminated",
                              R"({"reason":"NamespaceTerminating","message":"m"})"));
  });
  Status s = control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(recorder_.Events().empty());
}

// R11: no labels → refused before any request.
TEST_F(RealPodControlTest, CreateWithoutLabelsSendsNothing) {
  Start([](const RecordedRequest&, Conn& c) { c.Respond(201, "{}"); });
  api::PodTemplate unlabeled{R"({"spec":{}})", {}};
  EXPECT_FALSE(control_->CreatePods("ns", unlabeled, rs_, ref_).ok());
  EXPECT_TRUE(server_->requests().empty());
}

// R8, R12: delete records SuccessfulDelete; NotFound is returned without an event; other
// failures record FailedDelete.
TEST_F(RealPodControlTest, DeleteEvents) {
  Start([](const RecordedRequest& r, Conn& c) {
    if (r.path.ends_with("/ok")) {
      c.Respond(200, R"({"kind":"Pod","metadata":{"name":"ok"}})");
    } else if (r.path.ends_with("/gone")) {
      c.Respond(404, StatusBody(404, "NotFound", "pods \"gone\" not found"));
    } else {
      c.Respond(403, StatusBody(403, "Forbidden", "no delete for you"));
    }
  });
  ASSERT_TRUE(control_->DeletePod("ns", "ok", rs_).ok());
  EXPECT_EQ(server_->requests().back().method, "DELETE");
  EXPECT_EQ(server_->requests().back().path, "/api/v1/namespaces/ns/pods/ok");

  Status gone = control_->DeletePod("ns", "gone", rs_);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, 404);

  Status denied = control_->DeletePod("ns", "denied", rs_);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, 403);
  EXPECT_EQ(recorder_.Events(),
            (std::vector<std::string>{"Normal SuccessfulDelete Deleted pod: ok "
                                      "involvedObject{kind=ReplicaSet,apiVersion=apps/v1}",
                                      "Warning FailedDelete Error deleting: no delete for you "
                                      "involvedObject{kind=ReplicaSet,apiVersion=apps/v1}"}));
}

// R13: PatchPod sends a strategic merge patch.
TEST_F(RealPodControlTest, PatchIsStrategicMerge) {
  Start([](const RecordedRequest&, Conn& c) { c.Respond(200, R"({"kind":"Pod"})"); });
  const std::string patch = api::ReleaseOwnerPatch("rs-uid", "pod-uid");
  ASSERT_TRUE(control_->PatchPod("ns", "p", patch).ok());
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "PATCH");
  EXPECT_EQ(requests[0].path, "/api/v1/namespaces/ns/pods/p");
  EXPECT_EQ(requests[0].Header("content-type"), "application/strategic-merge-patch+json");
  EXPECT_EQ(requests[0].body, patch);
  EXPECT_TRUE(recorder_.Events().empty());
}

// Upstream RealPodControl.OnWrite: told the stored pod's resourceVersion after a create (with the
// controllerRef it was created for) and after a patch that leaves the pod with a controller; not
// after a patch that released it, nor after a delete.
TEST_F(RealPodControlTest, OnWriteSeesCreatesAndAdoptionsWithTheirResourceVersions) {
  Start([](const RecordedRequest& r, Conn& c) {
    if (r.method == "POST") {
      c.Respond(201, R"({"kind":"Pod","metadata":{"name":"rs-a","namespace":"ns",)"
                     R"("resourceVersion":"101"}})");
    } else if (r.path.ends_with("/adopted")) {
      c.Respond(200, R"({"kind":"Pod","metadata":{"name":"adopted","resourceVersion":"102",)"
                     R"("ownerReferences":[{"apiVersion":"v1","kind":"Other","name":"x",)"
                     R"("uid":"x-uid"},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs",)"
                     R"("uid":"rs-uid","controller":true}]}})");
    } else {
      c.Respond(200, R"({"kind":"Pod","metadata":{"name":"p","resourceVersion":"103"}})");
    }
  });
  std::vector<std::string> seen;
  control_->SetOnWrite(
      [&](std::string_view ns, const api::OwnerReference& owner, const std::string& rv) {
        seen.push_back(std::string(ns) + " " + owner.kind + "/" + owner.name + "/" +
                       owner.uid.str() + " @" + rv);
      });
  ASSERT_TRUE(control_->CreatePods("ns", rs_.spec.pod_template, rs_, ref_).ok());
  ASSERT_TRUE(control_->PatchPod("ns", "adopted", "{}").ok());
  ASSERT_TRUE(control_->PatchPod("ns", "released", "{}").ok());
  ASSERT_TRUE(control_->DeletePod("ns", "gone", rs_).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"ns ReplicaSet/rs/rs-uid @101",
                                            "ns ReplicaSet/rs/rs-uid @102"}));
}

// R7, R12: a batch of creates goes out at once (the server answers none until all four arrived,
// so a batch sent one after another would time out) and each answer is handled as CreatePods
// handles one: an event each, the observer told each resourceVersion, in call order.
TEST_F(RealPodControlTest, CreateBatchSendsAllAtOnceAndRecordsEach) {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  Start([&](const RecordedRequest&, Conn& c) {
    int n = 0;
    bool all = false;
    {
      std::unique_lock lock(mu);
      n = ++arrived;
      cv.notify_all();
      all = cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived >= 4; });
    }
    if (!all) {
      c.Respond(403, StatusBody(403, "Forbidden", "sent one at a time"));
      return;
    }
    c.Respond(201, R"({"kind":"Pod","metadata":{"name":"rs-)" + std::to_string(n) +
                       R"(","namespace":"ns","resourceVersion":")" + std::to_string(10 + n) +
                       R"("}})");
  });
  std::vector<std::string> rvs;
  control_->SetOnWrite(
      [&](std::string_view, const api::OwnerReference& owner, const std::string& rv) {
        EXPECT_EQ(owner.uid, "rs-uid");
        rvs.push_back(rv);
      });
  std::vector<WriteOutcome> out =
      control_->CreatePodsBatch("ns", rs_.spec.pod_template, rs_, ref_, 4, {});
  ASSERT_EQ(out.size(), 4u);
  for (const WriteOutcome& o : out) {
    EXPECT_FALSE(o.skipped);
    EXPECT_TRUE(o.status.ok()) << o.status.error().ToString();
  }
  EXPECT_EQ(server_->requests().size(), 4u);
  EXPECT_EQ(rvs.size(), 4u);
  EXPECT_EQ(recorder_.Events().size(), 4u);
}

// Fencing: a batch asked for once the worker's stop was requested sends nothing; every create
// comes back skipped and no event is recorded.
TEST_F(RealPodControlTest, CreateBatchAfterTheStopSendsNothing) {
  Start([](const RecordedRequest&, Conn& c) { c.Respond(201, "{}"); });
  std::stop_source stop;
  stop.request_stop();
  std::vector<WriteOutcome> out =
      control_->CreatePodsBatch("ns", rs_.spec.pod_template, rs_, ref_, 3, stop.get_token());
  ASSERT_EQ(out.size(), 3u);
  for (const WriteOutcome& o : out) {
    EXPECT_TRUE(o.skipped);
    ASSERT_FALSE(o.status.ok());
    EXPECT_TRUE(IsStopped(o.status.error()));
  }
  EXPECT_TRUE(server_->requests().empty());
  EXPECT_TRUE(recorder_.Events().empty());
}

// R8, R12: a batch of deletes: outcomes in the order of the names, NotFound returned as is with
// no event, other failures recorded as FailedDelete.
TEST_F(RealPodControlTest, DeleteBatchOutcomesInOrder) {
  Start([](const RecordedRequest& r, Conn& c) {
    if (r.path.ends_with("/gone")) {
      c.Respond(404, StatusBody(404, "NotFound", "pods \"gone\" not found"));
    } else if (r.path.ends_with("/denied")) {
      c.Respond(403, StatusBody(403, "Forbidden", "no delete for you"));
    } else {
      c.Respond(200, R"({"kind":"Pod"})");
    }
  });
  const std::vector<std::string> names = {"a", "gone", "denied", "b"};
  std::vector<WriteOutcome> out = control_->DeletePodsBatch("ns", names, rs_, {});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].status.ok());
  ASSERT_FALSE(out[1].status.ok());
  EXPECT_TRUE(errors::IsNotFound(out[1].status.error()));
  ASSERT_FALSE(out[2].status.ok());
  EXPECT_EQ(out[2].status.error().code, 403);
  EXPECT_TRUE(out[3].status.ok());
  EXPECT_EQ(server_->requests().size(), 4u);
  std::vector<std::string> events = recorder_.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(
      std::count_if(events.begin(), events.end(),
                    [](const std::string& e) { return e.starts_with("Warning FailedDelete"); }),
      1);
}

}  // namespace
}  // namespace kcm::controller
