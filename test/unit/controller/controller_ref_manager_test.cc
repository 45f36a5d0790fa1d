#include "pkg/controller/controller_ref_manager.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/testing/objects.h"
#include "pkg/controller/testing/fake_pod_control.h"
#include "pkg/controller/testing/fake_typed_client.h"

namespace kcm::controller {
namespace {

using api::testing::kNow;
using api::testing::PodBuilder;
using testing::FakePodControl;

api::ObjectMeta ReplicaSetMeta(bool deleting = false) {
  api::ObjectMeta m;
  m.name = "rs";
  m.namespace_ = "default";
  m.uid = "rs-uid";
  if (deleting) m.deletion_timestamp = kNow;
  return m;
}

api::OwnerReference ControllerRefTo(std::string uid) {
  return api::OwnerReference{"apps/v1", "ReplicaSet", "owner", std::move(uid), true, true};
}

api::labels::Selector AppFoo() {
  return api::labels::Selector::FromSet({{"app", "foo"}});
}

struct ClaimCase {
  const char* name;
  PodBuilder pod;
  bool rs_deleting = false;
  bool want_claimed = false;
  enum Action { kNone, kAdopt, kRelease } want_action = kNone;
};

// R13: the claim rules, one row each.
TEST(ControllerRefManagerTest, ClaimRules) {
  const std::vector<ClaimCase> cases = {
      {"owned by another controller, matching → ignore",
       PodBuilder("p").Label("app", "foo").Owner(ControllerRefTo("other-uid")), false, false},
      {"owned by us, matching → keep",
       PodBuilder("p").Label("app", "foo").Owner(ControllerRefTo("rs-uid")), false, true},
      {"owned by us, matching, RS deleting → keep",
       PodBuilder("p").Label("app", "foo").Owner(ControllerRefTo("rs-uid")), true, true},
      {"owned by us, not matching → release",
       PodBuilder("p").Label("app", "bar").Owner(ControllerRefTo("rs-uid")), false, false,
       ClaimCase::kRelease},
      {"owned by us, not matching, RS deleting → leave alone",
       PodBuilder("p").Label("app", "bar").Owner(ControllerRefTo("rs-uid")), true, false},
      {"orphan, matching → adopt", PodBuilder("p").Label("app", "foo"), false, true,
       ClaimCase::kAdopt},
      {"orphan with a non-controller owner, matching → adopt",
       PodBuilder("p").Label("app", "foo").Owner({"v1", "Node", "n", "node-uid", false, false}),
       false, true, ClaimCase::kAdopt},
      {"orphan, not matching → ignore", PodBuilder("p").Label("app", "bar"), false, false},
      {"orphan, matching, pod deleting → ignore", PodBuilder("p").Label("app", "foo").Deleting(),
       false, false},
      {"orphan, matching, RS deleting → ignore", PodBuilder("p").Label("app", "foo"), true, false},
      {"orphan, matching, other namespace → ignore",
       PodBuilder("p", "elsewhere").Label("app", "foo"), false, false},
  };
  for (const ClaimCase& c : cases) {
    SCOPED_TRACE(c.name);
    FakePodControl control;
    int can_adopt_calls = 0;
    ControllerRefManager m(ReplicaSetMeta(c.rs_deleting), "apps/v1", "ReplicaSet", AppFoo(), [&] {
      ++can_adopt_calls;
      return OkStatus();
    });
    auto result = m.ClaimObjects<api::Pod>({c.pod.Build()}, PodPatcher(control));
    ASSERT_TRUE(result.status.ok()) << result.status.error().ToString();
    EXPECT_EQ(result.claimed.size(), c.want_claimed ? 1u : 0u);
    const auto patches = control.Patches();
    switch (c.want_action) {
      case ClaimCase::kNone:
        EXPECT_TRUE(patches.empty());
        EXPECT_EQ(can_adopt_calls, 0);
        break;
      case ClaimCase::kAdopt:
        ASSERT_EQ(patches.size(), 1u);
        EXPECT_EQ(
            patches[0].body,
            api::AdoptOwnerPatch(
                api::ControllerOwnerReference("apps/v1", "ReplicaSet", ReplicaSetMeta()), "uid-p"));
        EXPECT_EQ(can_adopt_calls, 1);
        break;
      case ClaimCase::kRelease:
        ASSERT_EQ(patches.size(), 1u);
        EXPECT_EQ(patches[0].body, api::ReleaseOwnerPatch("rs-uid", "uid-p"));
        EXPECT_EQ(can_adopt_calls, 0);
        break;
    }
    for (const auto& p : patches) {
      EXPECT_EQ(p.ns, c.pod.pod.metadata.namespace_);
      EXPECT_EQ(p.name, "p");
    }
  }
}

// R13: the adopt patch carries our controller ownerReference and the pod's uid as precondition;
// the release patch deletes our entry by uid, with the same precondition.
TEST(ControllerRefManagerTest, PatchBodies) {
  FakePodControl control;
  ControllerRefManager m(ReplicaSetMeta(), "apps/v1", "ReplicaSet", AppFoo(), nullptr);
  auto result = m.ClaimObjects<api::Pod>(
      {PodBuilder("orphan").Label("app", "foo").Build(),
       PodBuilder("stale").Label("app", "bar").Owner(ControllerRefTo("rs-uid")).Build()},
      PodPatcher(control));
  ASSERT_TRUE(result.status.ok());
  const auto patches = control.Patches();
  ASSERT_EQ(patches.size(), 2u);
  auto adopt = api::json::Parse(patches[0].body);
  ASSERT_TRUE(adopt.ok());
  EXPECT_EQ(api::json::GetPath(*adopt, {"metadata", "uid"})->as_string(), "uid-orphan");
  const auto& refs = api::json::GetPath(*adopt, {"metadata", "ownerReferences"})->as_array();
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].Find("uid")->as_string(), "rs-uid");
  EXPECT_EQ(refs[0].Find("name")->as_string(), "rs");
  EXPECT_EQ(refs[0].Find("kind")->as_string(), "ReplicaSet");
  EXPECT_EQ(refs[0].Find("apiVersion")->as_string(), "apps/v1");
  EXPECT_TRUE(refs[0].Find("controller")->as_bool());
  EXPECT_TRUE(refs[0].Find("blockOwnerDeletion")->as_bool());

  auto release = api::json::Parse(patches[1].body);
  ASSERT_TRUE(release.ok());
  EXPECT_EQ(api::json::GetPath(*release, {"metadata", "uid"})->as_string(), "uid-stale");
  const auto& del = api::json::GetPath(*release, {"metadata", "ownerReferences"})->as_array();
  ASSERT_EQ(del.size(), 1u);
  EXPECT_EQ(del[0].Find("$patch")->as_string(), "delete");
  EXPECT_EQ(del[0].Find("uid")->as_string(), "rs-uid");
}

// R13: one canAdopt check per sync, before the first adoption, however many orphans.
TEST(ControllerRefManagerTest, CanAdoptRunsOnceBeforeFirstAdoption) {
  FakePodControl control;
  int calls = 0;
  ControllerRefManager m(ReplicaSetMeta(), "apps/v1", "ReplicaSet", AppFoo(), [&] {
    ++calls;
    EXPECT_TRUE(control.Patches().empty()) << "canAdopt must run before any adoption patch";
    return OkStatus();
  });
  auto result = m.ClaimObjects<api::Pod>(
      {PodBuilder("a").Label("app", "foo").Build(), PodBuilder("b").Label("app", "foo").Build(),
       PodBuilder("c").Label("app", "foo").Build()},
      PodPatcher(control));
  ASSERT_TRUE(result.status.ok());
  EXPECT_EQ(result.claimed.size(), 3u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(control.Patches().size(), 3u);
}

// R13: a failed canAdopt stops every adoption with an error; owned pods are still claimed.
TEST(ControllerRefManagerTest, CanAdoptFailureStopsAdoption) {
  FakePodControl control;
  int calls = 0;
  ControllerRefManager m(ReplicaSetMeta(), "apps/v1", "ReplicaSet", AppFoo(), [&]() -> Status {
    ++calls;
    return Error{404, "NotFound", "replicasets \"rs\" not found", {}};
  });
  auto result = m.ClaimObjects<api::Pod>(
      {PodBuilder("a").Label("app", "foo").Build(),
       PodBuilder("owned").Label("app", "foo").Owner(ControllerRefTo("rs-uid")).Build(),
       PodBuilder("b").Label("app", "foo").Build()},
      PodPatcher(control));
  ASSERT_FALSE(result.status.ok());
  EXPECT_NE(result.status.error().message.find("can't adopt Pod default/a (uid-a)"),
            std::string::npos)
      << result.status.error().message;
  EXPECT_NE(result.status.error().message.find("default/b"), std::string::npos);
  ASSERT_EQ(result.claimed.size(), 1u);
  EXPECT_EQ(result.claimed[0]->metadata.name, "owned");
  EXPECT_TRUE(control.Patches().empty());
  EXPECT_EQ(calls, 1);
}

Error ApiError(int code, const char* reason) {
  return Error{code, reason, std::string(reason) + " from the server", {}};
}

// R13: release ignores 404 (pod gone) and 422 (uid precondition: pod recreated); other errors
// are returned.
TEST(ControllerRefManagerTest, ReleaseIgnoresNotFoundAndInvalid) {
  for (auto [code, reason, want_ok] :
       {std::tuple{404, "NotFound", true}, std::tuple{422, "Invalid", true},
        std::tuple{409, "Conflict", false}, std::tuple{500, "InternalError", false}}) {
    SCOPED_TRACE(reason);
    FakePodControl control;
    control.SetError(ApiError(code, reason));
    ControllerRefManager m(ReplicaSetMeta(), "apps/v1", "ReplicaSet", AppFoo(), nullptr);
    auto result = m.ClaimObjects<api::Pod>(
        {PodBuilder("p").Label("app", "bar").Owner(ControllerRefTo("rs-uid")).Build()},
        PodPatcher(control));
    EXPECT_EQ(result.status.ok(), want_ok);
    EXPECT_TRUE(result.claimed.empty());
    EXPECT_EQ(control.Patches().size(), 1u);
  }
}

// R13: an adoption answered 404 means the pod is gone (not claimed, no error); any other failure
// (e.g. 422 because another controller won the race) is an error.
TEST(ControllerRefManagerTest, AdoptNotFoundIsNotAnError) {
  for (auto [code, reason, want_ok] :
       {std::tuple{404, "NotFound", true}, std::tuple{422, "Invalid", false}}) {
    SCOPED_TRACE(reason);
    FakePodControl control;
    control.SetError(ApiError(code, reason));
    ControllerRefManager m(ReplicaSetMeta(), "apps/v1", "ReplicaSet", AppFoo(), nullptr);
    auto result = m.ClaimObjects<api::Pod>({PodBuilder("p").Label("app", "foo").Build()},
                                           PodPatcher(control));
    EXPECT_EQ(result.status.ok(), want_ok);
    EXPECT_TRUE(result.claimed.empty());
  }
}

// R13: the canAdopt check the controllers build: an uncached GET, compared by UID and
// deletionTimestamp.
TEST(ControllerRefManagerTest, RecheckDeletionTimestamp) {
  api::ObjectMeta fresh = ReplicaSetMeta();
  EXPECT_TRUE(RecheckDeletionTimestamp([&] { return Result<api::ObjectMeta>(fresh); }, "ReplicaSet",
                                       "rs-uid")()
                  .ok());

  Status recreated = RecheckDeletionTimestamp([&] { return Result<api::ObjectMeta>(fresh); },
                                              "ReplicaSet", "older-uid")();
  ASSERT_FALSE(recreated.ok());
  EXPECT_NE(recreated.error().message.find("original ReplicaSet default/rs is gone"),
            std::string::npos);

  api::ObjectMeta deleting = ReplicaSetMeta(/*deleting=*/true);
  Status being_deleted = RecheckDeletionTimestamp([&] { return Result<api::ObjectMeta>(deleting); },
                                                  "ReplicaSet", "rs-uid")();
  ASSERT_FALSE(being_deleted.ok());
  EXPECT_NE(being_deleted.error().message.find("has just been deleted"), std::string::npos);

  Status get_failed = RecheckDeletionTimestamp(
      [] { return Result<api::ObjectMeta>(ApiError(404, "NotFound")); }, "ReplicaSet", "rs-uid")();
  ASSERT_FALSE(get_failed.ok());
  EXPECT_NE(get_failed.error().message.find("can't recheck DeletionTimestamp"), std::string::npos);
}

// A Deployment claims ReplicaSets by the same rules, patching them through ReplicaSetClient.
TEST(ControllerRefManagerTest, ClaimsReplicaSetsForDeployment) {
  api::ObjectMeta deployment;
  deployment.name = "web";
  deployment.namespace_ = "default";
  deployment.uid = "deploy-uid";
  auto orphan = std::make_shared<api::ReplicaSet>();
  orphan->metadata.name = "web-abc";
  orphan->metadata.namespace_ = "default";
  orphan->metadata.uid = "rs-1";
  orphan->metadata.labels = {{"app", "foo"}};
  auto foreign = std::make_shared<api::ReplicaSet>(*orphan);
  foreign->metadata.name = "other";
  foreign->metadata.owner_references = {ControllerRefTo("someone-else")};

  testing::FakeReplicaSetClient replicasets;
  ControllerRefManager m(deployment, "apps/v1", "Deployment", AppFoo(), nullptr);
  auto result = m.ClaimObjects<api::ReplicaSet>({orphan, foreign}, ReplicaSetPatcher(replicasets));
  ASSERT_TRUE(result.status.ok());
  ASSERT_EQ(result.claimed.size(), 1u);
  EXPECT_EQ(result.claimed[0]->metadata.name, "web-abc");
  std::vector<testing::Action> patches = replicasets.log().Of("patch", "replicasets");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].ns, "default");
  EXPECT_EQ(patches[0].name, "web-abc");
  EXPECT_EQ(patches[0].body,
            api::AdoptOwnerPatch(api::ControllerOwnerReference("apps/v1", "Deployment", deployment),
                                 "rs-1"));
}

}  // namespace
}  // namespace kcm::controller
