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
  Value orig = *json::Parse(dep->raw_json.str());
  EXPECT_TRUE(json::SemanticEqual(*GetPath(dv, {"status", "conditions"}),
                                  *GetPath(orig, {"status", "conditions"})));
}

// The status encoders splice the new status into the raw text; the object must be the one the
// document model gives (decode, erase the modelled members, append the fresh ones), for objects
// with and without a status, a null status, unknown status members, other spacing, and text the
// splice declines (escaped or repeated keys), where the document model is used.
TEST(ObjectBuildersTest, SplicedStatusEqualsTheDocumentModel) {
  const std::string rs_json(testing::ApiTestdata("replicaset.json"));
  const std::string spec = R"("spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}}})";
  const std::vector<std::string> inputs = {
      rs_json,
      R"({"metadata":{"name":"r","namespace":"n","resourceVersion":"5"},)" + spec + "}",
      R"({"metadata":{"name":"r","namespace":"n"},)" + spec + R"(,"status":null})",
      R"({"metadata":{"name":"r"},)" + spec +
          R"(,"status":{"x":{"y":[1,"}"]},"replicas":9,"conditions":[],"z":"\u003c"}})",
      "{ \"metadata\" : { \"name\" : \"r\" } ,\n \"status\" : { \"readyReplicas\" : 1 , "
      "\"future\" : 2 } }",
      R"({"metadata":{"name":"r"},"status":{"st\u0061te":1,"replicas":2}})",
      R"({"metadata":{"name":"r"},"status":{"future":1,"future":2,"replicas":2}})",
  };
  ReplicaSetStatus st;
  st.replicas = 4;
  st.ready_replicas = 3;
  st.observed_generation = 8;
  st.conditions.push_back(
      Condition{"ReplicaFailure", "True", "R", "m", std::nullopt, std::nullopt});
  for (const std::string& in : inputs) {
    SCOPED_TRACE(in);
    ReplicaSet rs;
    rs.raw_json = in;
    auto body = EncodeReplicaSetStatus(rs, st);
    ASSERT_TRUE(body.ok()) << body.error().ToString();
    Value want = *json::Parse(in);
    Value* old = want.Find("status");
    if (old == nullptr || !old->is_object()) {
      want.Set("status", st.ToJson());
    } else {
      for (std::string_view k :
           {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
            "terminatingReplicas", "observedGeneration", "conditions"}) {
        old->Erase(k);
      }
      const Value fresh = st.ToJson();
      for (const auto& [k, v] : fresh.as_object()) old->Set(k, v);
    }
    auto got = json::Parse(*body);
    ASSERT_TRUE(got.ok()) << *body;
    EXPECT_EQ(json::Serialize(*got), json::Serialize(want));
  }
  // The splice keeps the text outside the status as the server wrote it (the document model
  // would have written the escaped "<" and "é" unescaped).
  ReplicaSet rs;
  rs.raw_json = inputs[3];
  EXPECT_NE(EncodeReplicaSetStatus(rs, st)->find(R"("z":"\u003c")"), std::string::npos);
  rs.raw_json = rs_json;
  EXPECT_NE(EncodeReplicaSetStatus(rs, st)->find(R"("futureSpecField":"\u00e9t\u00e9)"),
            std::string::npos);
}

TEST(ObjectBuildersTest, ReplaceAnnotations) {
  const std::map<std::string, std::string> annotations = {{"b", "2"}, {"a", "1\""}};
  EXPECT_EQ(*ReplaceAnnotations(R"({"metadata":{"name":"d","annotations":{"x":"y"}},"spec":{}})",
                                annotations),
            R"({"metadata":{"name":"d","annotations":{"a":"1\"","b":"2"}},"spec":{}})");
  EXPECT_EQ(*ReplaceAnnotations(R"({"metadata":{"name":"d"},"spec":{}})", annotations),
            R"({"metadata":{"name":"d","annotations":{"a":"1\"","b":"2"}},"spec":{}})");
  EXPECT_EQ(*ReplaceAnnotations(R"({"metadata":{"annotations":{"x":"y"},"name":"d"}})", {}),
            R"({"metadata":{"name":"d"}})");
  EXPECT_EQ(*ReplaceAnnotations(R"({"metadata":{"name":"d"}})", {}),
            R"({"metadata":{"name":"d"}})");
  // A null metadata is the document model's case (it becomes an object).
  EXPECT_EQ(*ReplaceAnnotations(R"({"metadata":null})", annotations),
            R"({"metadata":{"annotations":{"a":"1\"","b":"2"}}})");
}

// Found by fuzz/raw_json: a body that is JSON but not an object (here the number 1, and an
// array) made EncodeDeploymentStatus throw std::bad_variant_access out of Value::Set; now every
// encoder that falls back to the document model answers a DecodeError.
TEST(ObjectBuildersTest, NonObjectBodiesAreDecodeErrors) {
  for (const char* body : {"1", "[1]", "\"x\"", "null", "true"}) {
    auto status = EncodeDeploymentStatus(body, DeploymentStatus{});
    ASSERT_FALSE(status.ok()) << body;
    EXPECT_EQ(status.error().reason, "DecodeError") << body;
    auto annotations = ReplaceAnnotations(body, {{"a", "b"}});
    ASSERT_FALSE(annotations.ok()) << body;
    EXPECT_EQ(annotations.error().reason, "DecodeError") << body;
    auto mutated = MutateRawJson(body, [](Value& obj) -> Status {
      obj.Set("a", Value::Int(1));
      return OkStatus();
    });
    ASSERT_FALSE(mutated.ok()) << body;
    EXPECT_EQ(mutated.error().reason, "DecodeError") << body;
  }
}

TEST(ObjectBuildersTest, ScaleCreatesMissingAnnotations) {
  ReplicaSet rs;
  rs.raw_json = R"({"metadata":{"name":"r"},"spec":{"replicas":1}})";
  EXPECT_EQ(*EncodeReplicaSetScale(rs, 5, {{"k", "v"}, {"a", "b"}}),
            R"({"metadata":{"name":"r","annotations":{"a":"b","k":"v"}},"spec":{"replicas":5}})");
}

// Pods from the template: built as text, the same object as the document model's version.
TEST(ObjectBuildersTest, PodBodyFromTemplateText) {
  auto rs = LoadRs();
  auto body = NewPodFromReplicaSet(*rs);
  ASSERT_TRUE(body.ok());
  Value pod = *json::Parse(*body);
  Value tmpl = *json::Parse(rs->spec.pod_template.raw_json.str());
  EXPECT_EQ(json::Serialize(*GetPath(pod, {"metadata", "labels"})),
            json::Serialize(*GetPath(tmpl, {"metadata", "labels"})));
  EXPECT_EQ(GetPath(pod, {"metadata", "finalizers"}), nullptr);
  EXPECT_EQ(GetPath(pod, {"metadata", "creationTimestamp"}), nullptr);

  ReplicaSet other = *rs;
  other.spec.pod_template.raw_json =
      R"({"metadata":{"labels":{"a":"b"},"annotations":null,"finalizers":["f"]}})";
  Value p2 = *json::Parse(*NewPodFromReplicaSet(other));
  EXPECT_EQ(GetPath(p2, {"metadata", "annotations"}), nullptr);
  EXPECT_EQ(json::Serialize(*GetPath(p2, {"metadata", "finalizers"})), R"(["f"])");
  EXPECT_EQ(json::Serialize(*GetPath(p2, {"spec"})), "{}");
  // Escaped keys: the document model decides (and decodes the key).
  other.spec.pod_template.raw_json = R"({"metadata":{"l\u0061bels":{"a":"b"}},"spec":{"x":1}})";
  Value p3 = *json::Parse(*NewPodFromReplicaSet(other));
  EXPECT_EQ(GetPath(p3, {"metadata", "labels", "a"})->as_string(), "b");
  EXPECT_EQ(GetPath(p3, {"spec", "x"})->as_int64(), 1);
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

// Decision 1 with packed raw JSON: a decoder holds every ReplicaSet and Deployment after the first
// of its kind deflated against that first one (shared_text.h, TextPacker). Every write body built
// from such an object is byte for byte the one built from the same object held plain, and the
// kept text is the server's text without managedFields, unknown fields and number spellings
// included.
TEST(ObjectBuildersTest, PackedRawJsonGivesTheSameBodies) {
  const std::string rs_text = testing::ApiTestdata("replicaset.json");
  const std::string dep_text = testing::ApiTestdata("deployment.json");
  auto plain_rs = LoadRs();
  auto plain_dep = LoadDeploy();
  ASSERT_FALSE(plain_rs->raw_json.packed());
  ASSERT_FALSE(plain_dep->raw_json.packed());

  Decoder warm;
  // A sibling of each kind first: it becomes that kind's dictionary.
  auto renamed = [](std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    return text;
  };
  ASSERT_TRUE(DecodeReplicaSet(warm, renamed(rs_text, "web", "api")).ok());
  ASSERT_TRUE(DecodeDeployment(warm, renamed(dep_text, "web", "api")).ok());
  auto rs = *DecodeReplicaSet(warm, rs_text);
  auto dep = *DecodeDeployment(warm, dep_text);
  ASSERT_TRUE(rs->raw_json.packed());
  ASSERT_TRUE(dep->raw_json.packed());
  EXPECT_LT(rs->raw_json.stored_size() * 2, rs->raw_json.size());
  EXPECT_LT(dep->raw_json.stored_size() * 2, dep->raw_json.size());
  EXPECT_EQ(rs->raw_json, plain_rs->raw_json);
  EXPECT_EQ(dep->raw_json, plain_dep->raw_json);
  EXPECT_NE(rs->raw_json.str().find(R"("futureMetaField":{"x":[1,2.50,{"y":null}]})"),
            std::string::npos);
  EXPECT_TRUE(rs->spec.pod_template.raw_json.packed());
  EXPECT_EQ(rs->spec.pod_template.raw_json, plain_rs->spec.pod_template.raw_json);
  EXPECT_EQ(dep->spec.pod_template.raw_json, plain_dep->spec.pod_template.raw_json);

  const std::map<std::string, std::string> annotations = {
      {"deployment.kubernetes.io/desired-replicas", "7"}};
  EXPECT_EQ(*EncodeReplicaSetScale(*rs, 7, annotations),
            *EncodeReplicaSetScale(*plain_rs, 7, annotations));
  ReplicaSetStatus rs_status = rs->status;
  rs_status.ready_replicas = 2;
  EXPECT_EQ(*EncodeReplicaSetStatus(*rs, rs_status), *EncodeReplicaSetStatus(*plain_rs, rs_status));
  EXPECT_EQ(*NewPodFromReplicaSet(*rs), *NewPodFromReplicaSet(*plain_rs));
  DeploymentStatus dep_status = dep->status;
  dep_status.updated_replicas = 1;
  EXPECT_EQ(*EncodeDeploymentStatus(*dep, dep_status),
            *EncodeDeploymentStatus(*plain_dep, dep_status));
  EXPECT_EQ(*ReplaceAnnotations(dep->raw_json.str(), {{"a", "b"}}),
            *ReplaceAnnotations(plain_dep->raw_json.str(), {{"a", "b"}}));
  const NewReplicaSetOptions opts{"12345", 2, {{"deployment.kubernetes.io/revision", "3"}}};
  EXPECT_EQ(*NewReplicaSetFromDeployment(*dep, opts),
            *NewReplicaSetFromDeployment(*plain_dep, opts));
  EXPECT_EQ(*dep->spec.pod_template.ToJson(), *plain_dep->spec.pod_template.ToJson());
  // Templates compare the same whichever way they are held.
  EXPECT_EQ(*EqualIgnoreHash(rs->spec.pod_template, dep->spec.pod_template),
            *EqualIgnoreHash(plain_rs->spec.pod_template, plain_dep->spec.pod_template));
  EXPECT_TRUE(*EqualIgnoreHash(dep->spec.pod_template, plain_dep->spec.pod_template));
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
  Value tmpl = *json::Parse(rs->spec.pod_template.raw_json.str());
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
