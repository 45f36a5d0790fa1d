#include "pkg/api/object_builders.h"

#include <gtest/gtest.h>

#include "pkg/api/hash.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

using json::GetPath;
using json::Value;

std::shared_ptr<const ReplicaSet> LoadRs() {
  Decoder d;
  return *DecodeReplicaSet(d, testing::ApiTestdata("replicaset.json"));
}
std::shared_ptr<const Deployment> LoadDeploy() {
  Decoder d;
  return *DecodeDeployment(d, testing::ApiTestdata("deployment.json"));
}

// Decision 1 (lossless): decode → change one field → encode; every other field, including ones
// we do not model, is equal in canonical form.
TEST(ObjectBuildersTest, ScaleIsLossless) {
  auto rs = LoadRs();
  auto body = EncodeReplicaSetScale(*rs, 7, {{"deployment.kubernetes.io/desired-replicas", "7"}});
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  Value got = *json::Parse(*body);
  Value want = *json::Parse(testing::ApiTestdata("replicaset.json"));
  ASSERT_TRUE(json::SetPath(want, {"spec", "replicas"}, Value::Int(7)).ok());
  ASSERT_TRUE(
      json::SetPath(want, {"metadata", "annotations", "deployment.kubernetes.io/desired-replicas"},
                    Value::String("7"))
          .ok());
  // The cached raw JSON has no managedFields (internal/strip_managed_fields.h); a body without
  // them keeps the stored ones (the API server's decodeLiveOrNew).
  ASSERT_TRUE(json::ErasePath(want, {"metadata", "managedFields"}));
  EXPECT_EQ(json::CanonicalString(got), json::CanonicalString(want));
  // Unmodelled fields survive byte for byte (numbers keep their spelling).
  EXPECT_NE(body->find(R"("futureMetaField":{"x":[1,2.50,{"y":null}]})"), std::string::npos);
}

TEST(ObjectBuildersTest, StatusUpdateKeepsUnmodelledStatusFields) {
  auto rs = LoadRs();
  ReplicaSetStatus st = rs->status;
  st.ready_replicas = 3;
  st.conditions.clear();
  st.terminating_replicas.reset();
  auto body = EncodeReplicaSetStatus(*rs, st);
  ASSERT_TRUE(body.ok());
  Value got = *json::Parse(*body);
  EXPECT_EQ(GetPath(got, {"status", "readyReplicas"})->as_int64(), 3);
  EXPECT_EQ(GetPath(got, {"status", "conditions"}), nullptr);
  EXPECT_EQ(GetPath(got, {"status", "terminatingReplicas"}), nullptr);
  EXPECT_EQ(GetPath(got, {"status", "futureStatusField"})->as_int64(), 7);
  EXPECT_EQ(GetPath(got, {"spec", "futureSpecField"})->as_string(), "été 🚀 tab\there");

  auto dep = LoadDeploy();
  DeploymentStatus ds = dep->status;
  ds.collision_count = 3;
  auto dbody = EncodeDeploymentStatus(*dep, ds);
  ASSERT_TRUE(dbody.ok());
  Value dv = *json::Parse(*dbody);
  EXPECT_EQ(GetPath(dv, {"status", "collisionCount"})->as_int64(), 3);
  EXPECT_TRUE(GetPath(dv, {"status", "futureStatus"})->as_bool());
  EXPECT_EQ(GetPath(dv, {"status", "conditions"})->as_array().size(), 2u);
  // Conditions round-trip unchanged.
  Value orig = *json::Parse(dep->raw_json);
  EXPECT_TRUE(json::SemanticEqual(*GetPath(dv, {"status", "conditions"}),
                                  *GetPath(orig, {"status", "conditions"})));
}

TEST(ObjectBuildersTest, ReplicasMergePatch) {
  EXPECT_EQ(ReplicasMergePatch("42", 3),
            R"({"metadata":{"resourceVersion":"42"},"spec":{"replicas":3}})");
  EXPECT_EQ(ReplicasMergePatch("", 0), R"({"spec":{"replicas":0}})");
}

// D4: new RS name, hash label on labels/selector/template, owner reference, template verbatim.
TEST(ObjectBuildersTest, NewReplicaSetFromDeployment) {
  auto dep = LoadDeploy();
  auto tmpl = dep->spec.pod_template.ToJson();
  std::string hash = ComputePodTemplateHash(*tmpl, dep->status.collision_count);
  auto body =
      NewReplicaSetFromDeployment(*dep, {hash, 2, {{"deployment.kubernetes.io/revision", "3"}}});
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  Value rs = *json::Parse(*body);
  EXPECT_EQ(GetPath(rs, {"metadata", "name"})->as_string(), "web-" + hash);
  EXPECT_EQ(GetPath(rs, {"metadata", "namespace"})->as_string(), "prod");
  EXPECT_EQ(GetPath(rs, {"metadata", "labels", "pod-template-hash"})->as_string(), hash);
  EXPECT_EQ(GetPath(rs, {"metadata", "labels", "app"})->as_string(), "web");
  EXPECT_EQ(
      GetPath(rs, {"metadata", "annotations", "deployment.kubernetes.io/revision"})->as_string(),
      "3");
  const Value& owner = GetPath(rs, {"metadata", "ownerReferences"})->as_array().at(0);
  EXPECT_EQ(GetPath(owner, {"kind"})->as_string(), "Deployment");
  EXPECT_EQ(GetPath(owner, {"uid"})->as_string(), "d-uid-1");
  EXPECT_TRUE(GetPath(owner, {"controller"})->as_bool());
  EXPECT_TRUE(GetPath(owner, {"blockOwnerDeletion"})->as_bool());
  EXPECT_EQ(GetPath(rs, {"spec", "replicas"})->as_int64(), 2);
  EXPECT_EQ(GetPath(rs, {"spec", "minReadySeconds"})->as_int64(), 10);
  EXPECT_EQ(GetPath(rs, {"spec", "selector", "matchLabels", "pod-template-hash"})->as_string(),
            hash);
  EXPECT_EQ(
      GetPath(rs, {"spec", "template", "metadata", "labels", "pod-template-hash"})->as_string(),
      hash);
  // The template equals the deployment's ignoring the hash label (D3).
  Decoder d;
  auto decoded = DecodeReplicaSet(d, *body);
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(*EqualIgnoreHash(decoded.value()->spec.pod_template, dep->spec.pod_template));
}

// R11: a pod from the RS template.
TEST(ObjectBuildersTest, NewPodFromReplicaSet) {
  auto rs = LoadRs();
  auto body = NewPodFromReplicaSet(*rs);
  ASSERT_TRUE(body.ok()) << body.error().ToString();
  Value pod = *json::Parse(*body);
  EXPECT_EQ(GetPath(pod, {"kind"})->as_string(), "Pod");
  EXPECT_EQ(GetPath(pod, {"metadata", "generateName"})->as_string(), "web-7d9f8b6c5d-");
  EXPECT_EQ(GetPath(pod, {"metadata", "namespace"})->as_string(), "prod");
  EXPECT_EQ(GetPath(pod, {"metadata", "labels", "pod-template-hash"})->as_string(), "7d9f8b6c5d");
  EXPECT_EQ(GetPath(pod, {"metadata", "annotations", "prometheus.io/scrape"})->as_string(), "true");
  const Value& owner = GetPath(pod, {"metadata", "ownerReferences"})->as_array().at(0);
  EXPECT_EQ(
      json::Serialize(owner),
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9f8b6c5d","uid":"8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d","controller":true,"blockOwnerDeletion":true})");
  Value tmpl = *json::Parse(rs->spec.pod_template.raw_json);
  EXPECT_EQ(json::Serialize(*GetPath(pod, {"spec"})), json::Serialize(*GetPath(tmpl, {"spec"})));

  ReplicaSet no_labels = *rs;
  no_labels.spec.pod_template.labels = {};
  auto refused = NewPodFromReplicaSet(no_labels);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().reason, "InvalidArgument");
}

// R13: adopt and release patches carry the object's uid as a precondition.
TEST(ObjectBuildersTest, AdoptAndReleasePatches) {
  OwnerReference ref{"apps/v1", "ReplicaSet", "rs", "rs-uid", true, true};
  EXPECT_EQ(
      AdoptOwnerPatch(ref, "pod-uid"),
      R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}],"uid":"pod-uid"}})");
  EXPECT_EQ(
      ReleaseOwnerPatch("rs-uid", "pod-uid"),
      R"({"metadata":{"ownerReferences":[{"$patch":"delete","uid":"rs-uid"}],"uid":"pod-uid"}})");
}

}  // namespace
}  // namespace kcm::api
