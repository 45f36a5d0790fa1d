// Handlers and predicates of the controller runtime.
#include "pkg/runtime/handler.h"

#include <gtest/gtest.h>

#include <chrono>

#include "pkg/api/testing/fake_object.h"
#include "pkg/runtime/predicate.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::runtime {
namespace {

using mocks::FakeObject;

std::shared_ptr<FakeObject> Obj(const std::string& ns, const std::string& name) {
  auto o = std::make_shared<FakeObject>();
  o->meta.namespace_ = ns;
  o->meta.name = name;
  return o;
}

api::OwnerReference Ref(const std::string& api_version, const std::string& kind,
                        const std::string& name, bool controller) {
  api::OwnerReference r;
  r.api_version = api_version;
  r.kind = kind;
  r.name = name;
  r.uid = name + "-uid";
  r.controller = controller;
  return r;
}

std::vector<std::string> Drain(Queue& q) {
  std::vector<std::string> out;
  while (q.Len() > 0) {
    auto k = q.Get();
    out.push_back(*k);
    q.Done(*k);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(HandlerTest, EnqueueRequestForObjectUsesNamespaceAndName) {
  Queue q;
  auto h = EnqueueRequestForObject();
  h->Create({Obj("ns", "a")}, q);
  h->Update({Obj("ns", "a"), Obj("ns", "a")}, q);  // Same key: deduplicated.
  h->Delete({Obj("", "cluster-scoped")}, q);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"cluster-scoped", "ns/a"}));
}

TEST(HandlerTest, EnqueueRequestForOwnerMapsToControllerOfKindAndGroup) {
  Queue q;
  auto h = EnqueueRequestForOwner({"apps", "ReplicaSet", true, false});
  auto pod = Obj("ns", "pod-1");
  pod->meta.owner_references = {Ref("apps/v1", "ReplicaSet", "rs-1", true),
                                Ref("apps/v1", "ReplicaSet", "rs-not-controller", false),
                                Ref("v1", "ReplicaSet", "wrong-group", true),
                                Ref("apps/v1", "Deployment", "wrong-kind", true)};
  h->Create({pod}, q);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"ns/rs-1"}));
}

TEST(HandlerTest, EnqueueRequestForOwnerOnUpdateWakesOldAndNewOwner) {
  Queue q;
  auto h = EnqueueRequestForOwner({"apps", "ReplicaSet", false, false});
  auto old_pod = Obj("ns", "p");
  old_pod->meta.owner_references = {Ref("apps/v1", "ReplicaSet", "old-owner", true)};
  auto new_pod = Obj("ns", "p");
  new_pod->meta.owner_references = {Ref("apps/v1", "ReplicaSet", "new-owner", false)};
  h->Update({old_pod, new_pod}, q);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"ns/new-owner", "ns/old-owner"}));
}

TEST(HandlerTest, EnqueueRequestsFromMapFunc) {
  Queue q;
  auto h = EnqueueRequestsFromMapFunc([](const api::Object& o) {
    return std::vector<Request>{{"other", o.Meta().name + "-x"}, {"", "global"}};
  });
  h->Generic({Obj("ns", "a")}, q);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"global", "other/a-x"}));
}

// Another object type, which a typed handler for FakeObject must ignore.
class OtherObject final : public api::Object {
 public:
  std::string_view Kind() const override { return "Other"; }
  const api::ObjectMeta& Meta() const override { return meta; }
  api::ObjectMeta meta;
};

// A controller's typed handlers return what to enqueue; the adapter enqueues it, a delayed request
// with AddAfter, and ignores objects of another type and unset functions.
TEST(HandlerTest, EnqueueRequestsFromTypedFuncsEnqueuesWhatTheFunctionsReturn) {
  using namespace std::chrono_literals;
  FakeClock clock;
  Queue q{workqueue::RateLimitingQueueConfig{.clock = &clock}};
  TypedFuncs<FakeObject, std::vector<Enqueue>> funcs;
  std::vector<std::string> seen;
  funcs.create = [&](const std::shared_ptr<const FakeObject>& o) {
    seen.push_back("create " + o->meta.name);
    return std::vector<Enqueue>{RequestFor(*o), Request{"ns", "owner"}};
  };
  funcs.update = [&](const std::shared_ptr<const FakeObject>& old_obj,
                     const std::shared_ptr<const FakeObject>& new_obj) {
    seen.push_back("update " + old_obj->meta.name + "->" + new_obj->meta.name);
    return std::vector<Enqueue>{Enqueue(RequestFor(*new_obj), 10s)};
  };
  auto h = EnqueueRequestsFromTypedFuncs(std::move(funcs));

  h->Create({Obj("ns", "a")}, q);
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"ns/a", "ns/owner"}));

  h->Update({Obj("ns", "b"), Obj("ns", "b")}, q);
  EXPECT_EQ(q.Len(), 0) << "a delayed request waits for its delay";
  clock.Step(10s);
  auto key = q.Get();  // blocks until the delaying queue hands it over
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(*key, "ns/b");
  q.Done(*key);

  // Unset function (delete) and an object of another type: nothing enqueued, nothing called.
  h->Delete({Obj("ns", "c")}, q);
  auto other = std::make_shared<OtherObject>();
  other->meta.namespace_ = "ns";
  other->meta.name = "other";
  h->Create({other}, q);
  EXPECT_EQ(q.Len(), 0);
  EXPECT_EQ(seen, (std::vector<std::string>{"create a", "update b->b"}));
}

TEST(HandlerTest, AddAllAddsPlainRequestsAtOnce) {
  Queue q;
  AddAll(q, std::vector<Request>{{"ns", "a"}, {"ns", "a"}, {"", "b"}});
  EXPECT_EQ(Drain(q), (std::vector<std::string>{"b", "ns/a"}));
}

TEST(PredicateTest, GenerationChangedOnlyPassesSpecChanges) {
  auto p = GenerationChangedPredicate();
  auto a = Obj("ns", "a");
  a->meta.generation = 1;
  a->meta.resource_version = "1";
  auto status_only = Obj("ns", "a");
  status_only->meta.generation = 1;
  status_only->meta.resource_version = "2";
  auto spec = Obj("ns", "a");
  spec->meta.generation = 2;
  EXPECT_FALSE(p.Update({a, status_only}));
  EXPECT_TRUE(p.Update({a, spec}));
  EXPECT_TRUE(p.Create({a}));  // Only updates are filtered.
}

TEST(PredicateTest, ResourceVersionLabelAndAnnotationChanged) {
  auto a = Obj("ns", "a");
  a->meta.resource_version = "1";
  auto same = Obj("ns", "a");
  same->meta.resource_version = "1";
  auto labelled = Obj("ns", "a");
  labelled->meta.resource_version = "2";
  labelled->meta.labels = {{"k", "v"}};
  auto annotated = Obj("ns", "a");
  annotated->meta.resource_version = "3";
  annotated->meta.annotations = {{"k", "v"}};
  EXPECT_FALSE(ResourceVersionChangedPredicate().Update({a, same}));
  EXPECT_TRUE(ResourceVersionChangedPredicate().Update({a, labelled}));
  EXPECT_TRUE(LabelChangedPredicate().Update({a, labelled}));
  EXPECT_FALSE(LabelChangedPredicate().Update({a, annotated}));
  EXPECT_TRUE(AnnotationChangedPredicate().Update({a, annotated}));
  EXPECT_FALSE(AnnotationChangedPredicate().Update({a, labelled}));
}

TEST(PredicateTest, AllPredicatesMustPass) {
  std::vector<Predicate> ps = {
      NewPredicateFuncs([](const api::Object& o) { return o.Meta().namespace_ == "ns"; }),
      NewPredicateFuncs([](const api::Object& o) { return o.Meta().name != "b"; })};
  EXPECT_TRUE(PassCreate(ps, {Obj("ns", "a")}));
  EXPECT_FALSE(PassCreate(ps, {Obj("ns", "b")}));
  EXPECT_FALSE(PassDelete(ps, {Obj("other", "a")}));
  EXPECT_TRUE(PassGeneric({}, {Obj("x", "y")}));
}

TEST(RequestTest, KeyRoundTrips) {
  EXPECT_EQ((Request{"ns", "a"}.Key()), "ns/a");
  EXPECT_EQ(Request::FromKey("ns/a"), (Request{"ns", "a"}));
  EXPECT_EQ(Request::FromKey("node-1"), (Request{"", "node-1"}));
}

}  // namespace
}  // namespace kcm::runtime
