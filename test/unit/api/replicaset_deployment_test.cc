#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/deployment.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/api/shared_text.h"
#include "pkg/api/time.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

ObjectPtr MakePodForPackTest() {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = "p";
  return pod;
}

// Template labels are an interned set like metadata.labels: the ReplicaSets the Deployment
// controller creates carry the template's labels as their own, so both point at one set.
TEST(ReplicaSetTest, TemplateLabelsShareTheSetOfEqualMetadataLabels) {
  Decoder d;
  const std::string raw =
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-1","namespace":"ns",)"
      R"("labels":{"app":"web","pod-template-hash":"1"}},"spec":{"replicas":1,"selector":)"
      R"({"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"pod-template-hash":"1",)"
      R"("app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})";
  auto rs = DecodeReplicaSet(d, raw);
  ASSERT_TRUE(rs.ok()) << rs.error().ToString();
  const PodTemplate& t = (*rs)->spec.pod_template;
  EXPECT_EQ(t.labels, (Labels{{"app", "web"}, {"pod-template-hash", "1"}}));
  EXPECT_TRUE(t.labels.SharesStorageWith((*rs)->metadata.labels));
  // Labels without a value, and a template without labels.
  auto other = DecodeReplicaSet(
      d, R"({"metadata":{"name":"x"},"spec":{"template":{"metadata":{"labels":{"a":null}}}}})");
  ASSERT_TRUE(other.ok()) << other.error().ToString();
  EXPECT_EQ((*other)->spec.pod_template.labels, (Labels{{"a", ""}}));
  auto bare = DecodeReplicaSet(d, R"({"metadata":{"name":"y"},"spec":{"template":{}}})");
  ASSERT_TRUE(bare.ok()) << bare.error().ToString();
  EXPECT_TRUE((*bare)->spec.pod_template.labels.empty());
}

// A decoder keeps the raw JSON of every ReplicaSet and Deployment after the first of its kind
// packed against that first one (shared_text.h); one with packing off — the write clients'
// decoders of answers — keeps every text plain. Both read back the same text.
TEST(ReplicaSetTest, DecoderPacksRawJsonUnlessTurnedOff) {
  const std::string raw = testing::ApiTestdata("replicaset.json");
  Decoder packing;
  Decoder plain;
  plain.set_pack_raw_json(false);
  for (int i = 0; i < 3; ++i) {
    auto a = DecodeReplicaSet(packing, raw);
    auto b = DecodeReplicaSet(plain, raw);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)->raw_json.packed(), i > 0) << i;
    EXPECT_FALSE((*b)->raw_json.packed()) << i;
    EXPECT_EQ((*a)->raw_json, (*b)->raw_json);
    EXPECT_EQ((*a)->spec.pod_template.raw_json, (*b)->spec.pod_template.raw_json);
  }
}

// Codec::pack_kept_text, as an informer compacts a watched object decoded plain: the copy holds
// the same text packed, its template a view of that packed buffer, every decoded field as before;
// a packed object or another kind gets none.
template <typename T>
void ExpectPackedCopyLosesNothing(const Codec& codec, const std::string& raw,
                                  Result<std::shared_ptr<const T>> (*decode)(Decoder&, JsonInput)) {
  Decoder plain;
  plain.set_pack_raw_json(false);
  TextPacker packer;
  auto first = decode(plain, raw);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  // The packer's first text of a kind (up to 2 KiB) becomes its dictionary, kept plain: no copy.
  if ((*first)->raw_json.size() <= TextPacker::kMaxDictionary) {
    EXPECT_EQ(codec.pack_kept_text(**first, packer), nullptr);
  }
  auto second = decode(plain, raw);
  ASSERT_TRUE(second.ok());
  const T& before = **second;
  ASSERT_FALSE(before.raw_json.packed());
  EXPECT_TRUE(codec.kept_text_plain(before));
  ObjectPtr copy = codec.pack_kept_text(before, packer);
  ASSERT_NE(copy, nullptr);
  const auto& after = dynamic_cast<const T&>(*copy);
  EXPECT_TRUE(after.raw_json.packed());
  EXPECT_LT(after.raw_json.stored_size(), before.raw_json.size());
  EXPECT_EQ(after.raw_json.str(), before.raw_json.str());
  EXPECT_EQ(after.spec.pod_template.raw_json.str(), before.spec.pod_template.raw_json.str());
  EXPECT_TRUE(after.spec.pod_template.raw_json.SharesBufferWith(after.raw_json));
  EXPECT_EQ(after.spec.pod_template.labels, before.spec.pod_template.labels);
  EXPECT_EQ(after.metadata.name, before.metadata.name);
  EXPECT_EQ(after.metadata.resource_version, before.metadata.resource_version);
  EXPECT_EQ(after.status, before.status);
  EXPECT_EQ(codec.pack_kept_text(after, packer), nullptr) << "already packed";
  EXPECT_FALSE(codec.kept_text_plain(after));
  EXPECT_FALSE(codec.kept_text_plain(*MakePodForPackTest()));
  EXPECT_EQ(codec.pack_kept_text(*MakePodForPackTest(), packer), nullptr) << "not this kind";
}

TEST(ReplicaSetTest, PackedCopyOfAPlainObjectLosesNothing) {
  ExpectPackedCopyLosesNothing<ReplicaSet>(
      ReplicaSetCodec(), testing::ApiTestdata("replicaset.json"), &DecodeReplicaSet);
}

TEST(DeploymentTest, PackedCopyOfAPlainObjectLosesNothing) {
  ExpectPackedCopyLosesNothing<Deployment>(
      DeploymentCodec(), testing::ApiTestdata("deployment.json"), &DecodeDeployment);
}

TEST(ReplicaSetTest, DecodesModelledFieldsAndKeepsRaw) {
  Decoder d;
  std::string raw = testing::ApiTestdata("replicaset.json");
  auto rs = DecodeReplicaSet(d, raw);
  ASSERT_TRUE(rs.ok()) << rs.error().ToString();
  const ReplicaSet& r = **rs;
  EXPECT_EQ(r.metadata.name, "web-7d9f8b6c5d");
  EXPECT_EQ(r.metadata.generation, 3);
  EXPECT_EQ(r.metadata.annotations.at("deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(r.spec.replicas, 3);
  EXPECT_EQ(r.spec.min_ready_seconds, 5);
  ASSERT_TRUE(r.spec.selector.has_value());
  EXPECT_EQ(r.spec.selector->match_labels.at("app"), "web");
  ASSERT_EQ(r.spec.selector->match_expressions.size(), 1u);
  EXPECT_EQ(r.spec.selector->match_expressions[0].op, "NotIn");
  EXPECT_EQ(r.spec.pod_template.labels.at("pod-template-hash"), "7d9f8b6c5d");
  auto tmpl = json::Parse(r.spec.pod_template.raw_json.str());
  ASSERT_TRUE(tmpl.ok());
  EXPECT_TRUE(json::GetPath(*tmpl, {"spec", "futurePodField", "enabled"})->as_bool());
  EXPECT_EQ(r.status.replicas, 3);
  EXPECT_EQ(r.status.fully_labeled_replicas, 3);
  EXPECT_EQ(r.status.ready_replicas, 2);
  EXPECT_EQ(r.status.available_replicas, 2);
  EXPECT_EQ(r.status.terminating_replicas, 1);
  EXPECT_EQ(r.status.observed_generation, 3);
  ASSERT_EQ(r.status.conditions.size(), 1u);
  EXPECT_EQ(r.status.conditions[0].reason, "FailedCreate");
  // The raw JSON is the input without metadata.managedFields (internal/strip_managed_fields.h).
  auto input = json::Parse(raw);
  ASSERT_TRUE(input.ok());
  ASSERT_NE(json::GetPath(*input, {"metadata", "managedFields"}), nullptr);
  ASSERT_TRUE(json::ErasePath(*input, {"metadata", "managedFields"}));
  EXPECT_TRUE(json::SemanticEqual(*json::Parse(r.raw_json.str()), *input));
}

TEST(ReplicaSetTest, DefaultsWhenAbsent) {
  Decoder d;
  auto rs = DecodeReplicaSet(d, R"({"metadata":{"name":"r"},"spec":{"selector":null}})");
  ASSERT_TRUE(rs.ok()) << rs.error().ToString();
  EXPECT_EQ((*rs)->spec.replicas, 1);
  EXPECT_FALSE((*rs)->spec.selector.has_value());
  EXPECT_EQ((*rs)->status.terminating_replicas, std::nullopt);
  EXPECT_TRUE((*rs)->spec.pod_template.raw_json.empty());
}

TEST(DeploymentTest, DecodesModelledFields) {
  Decoder d;
  auto dep = DecodeDeployment(d, testing::ApiTestdata("deployment.json"));
  ASSERT_TRUE(dep.ok()) << dep.error().ToString();
  const Deployment& x = **dep;
  EXPECT_EQ(x.Kind(), "Deployment");
  EXPECT_EQ(x.spec.replicas, 3);
  EXPECT_EQ(x.spec.strategy.type, "RollingUpdate");
  ASSERT_TRUE(x.spec.strategy.rolling_update.has_value());
  EXPECT_EQ(x.spec.strategy.rolling_update->max_unavailable, IntOrString::FromString("25%"));
  EXPECT_EQ(x.spec.strategy.rolling_update->max_surge, IntOrString::FromInt(1));
  EXPECT_EQ(x.spec.min_ready_seconds, 10);
  EXPECT_EQ(x.spec.revision_history_limit, 5);
  EXPECT_TRUE(x.spec.paused);
  EXPECT_EQ(x.spec.progress_deadline_seconds, 600);
  EXPECT_EQ(x.spec.pod_template.labels.at("app"), "web");
  EXPECT_EQ(x.status.observed_generation, 4);
  EXPECT_EQ(x.status.updated_replicas, 3);
  EXPECT_EQ(x.status.collision_count, 2);
  ASSERT_EQ(x.status.conditions.size(), 2u);
  EXPECT_EQ(x.status.conditions[1].type, "Progressing");
  EXPECT_EQ(x.status.conditions[1].last_update_time, *ParseRFC3339("2026-11-29T08:06:00Z"));
  EXPECT_EQ(x.status.conditions[1].message,
            "ReplicaSet \"web-7d9f8b6c5d\" has successfully progressed.");
}

TEST(DeploymentTest, OptionalFieldsAbsent) {
  Decoder d;
  auto dep =
      DecodeDeployment(d, R"({"metadata":{"name":"d"},"spec":{"strategy":{"type":"Recreate"}}})");
  ASSERT_TRUE(dep.ok());
  EXPECT_EQ((*dep)->spec.strategy.type, "Recreate");
  EXPECT_FALSE((*dep)->spec.strategy.rolling_update.has_value());
  EXPECT_FALSE((*dep)->spec.revision_history_limit.has_value());
  EXPECT_FALSE((*dep)->spec.progress_deadline_seconds.has_value());
  EXPECT_FALSE((*dep)->status.collision_count.has_value());
}

// The status writes re-serialize the decoded conditions (ReplicaSetStatus / DeploymentStatus
// ToJson): with type, status and reason held as interned SharedStrings and the times as
// OptionalTimes, every condition field the server sent is written back unchanged.
TEST(DeploymentTest, ConditionsWriteBackAsReceived) {
  for (const char* file : {"deployment.json", "replicaset.json"}) {
    const std::string raw = testing::ApiTestdata(file);
    Decoder d;
    const bool is_rs = std::string(file) == "replicaset.json";
    json::Value written = is_rs ? (*DecodeReplicaSet(d, raw))->status.ToJson()
                                : (*DecodeDeployment(d, raw))->status.ToJson();
    auto input = json::Parse(raw);
    ASSERT_TRUE(input.ok());
    const json::Value* sent = json::GetPath(*input, {"status", "conditions"});
    ASSERT_NE(sent, nullptr) << file;
    ASSERT_NE(json::GetPath(written, {"conditions"}), nullptr) << file;
    EXPECT_TRUE(json::SemanticEqual(*json::GetPath(written, {"conditions"}), *sent))
        << file << ": " << json::Serialize(written);
  }
}

// Objects decoded through one table share one copy of equal annotations, of the conditions'
// type / status / reason texts and of the strategy's percentages; what they read is unchanged.
TEST(DeploymentTest, EqualAnnotationsAndConditionTextsShareOneCopy) {
  const std::string raw = testing::ApiTestdata("deployment.json");
  std::string other = raw;
  const std::string name = R"("name":"web")";
  ASSERT_NE(other.find(name), std::string::npos);
  other.replace(other.find(name), name.size(), R"("name":"web-2")");
  Decoder d;
  auto a = *DecodeDeployment(d, raw);
  auto b = *DecodeDeployment(d, other);
  EXPECT_EQ(b->metadata.name, "web-2");
  ASSERT_FALSE(a->metadata.annotations.empty());
  EXPECT_TRUE(a->metadata.annotations.SharesStorageWith(b->metadata.annotations));
  EXPECT_EQ(a->metadata.annotations.map(), b->metadata.annotations.map());
  ASSERT_EQ(a->status.conditions.size(), 2u);
  ASSERT_EQ(b->status.conditions.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Condition& x = a->status.conditions[i];
    const Condition& y = b->status.conditions[i];
    EXPECT_TRUE(x.type.SharesStorageWith(y.type));
    EXPECT_TRUE(x.status.SharesStorageWith(y.status));
    EXPECT_TRUE(x.reason.SharesStorageWith(y.reason));
    EXPECT_EQ(x, y);
  }
  EXPECT_EQ(a->status.conditions.capacity(), 2u);
  const auto& ru_a = a->spec.strategy.rolling_update;
  const auto& ru_b = b->spec.strategy.rolling_update;
  ASSERT_TRUE(ru_a && ru_b && ru_a->max_unavailable && ru_b->max_unavailable);
  EXPECT_EQ(ru_a->max_unavailable->str_val, "25%");
  EXPECT_TRUE(ru_a->max_unavailable->str_val.SharesStorageWith(ru_b->max_unavailable->str_val));
  // Different annotations: another map.
  std::string third = raw;
  const std::string rev = R"("deployment.kubernetes.io/revision":")";
  ASSERT_NE(third.find(rev), std::string::npos);
  third.insert(third.find(rev) + rev.size(), "9");
  auto c = *DecodeDeployment(d, third);
  EXPECT_FALSE(a->metadata.annotations.SharesStorageWith(c->metadata.annotations));
  EXPECT_NE(a->metadata.annotations, c->metadata.annotations);
}

// D3: the RS template equals the Deployment's ignoring pod-template-hash.
TEST(PodTemplateTest, EqualIgnoreHash) {
  PodTemplate a{
      R"({"metadata":{"labels":{"app":"web","pod-template-hash":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}})",
      {}};
  PodTemplate b{
      R"({"spec":{"containers":[{"image":"i","name":"c"}]},"metadata":{"creationTimestamp":null,"labels":{"app":"web"}}})",
      {}};
  PodTemplate c{
      R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"j"}]}})",
      {}};
  EXPECT_TRUE(*EqualIgnoreHash(a, b));
  EXPECT_FALSE(*EqualIgnoreHash(a, c));
}

// EqualIgnoreHash's cases, whichever way they are decided (text after the hash label is cut
// out, or the documents): only the template's own pod-template-hash label is ignored.
TEST(PodTemplateTest, EqualIgnoreHashEdgeCases) {
  auto eq = [](std::string a, std::string b) {
    return *EqualIgnoreHash(PodTemplate{std::move(a), {}}, PodTemplate{std::move(b), {}});
  };
  const std::string spec = R"("spec":{"containers":[{"name":"c","image":"i"}]})";
  // The label first, last, alone, or absent on one side; its value does not matter.
  EXPECT_TRUE(eq(R"({"metadata":{"labels":{"a":"1","pod-template-hash":"x"}},)" + spec + "}",
                 R"({"metadata":{"labels":{"a":"1"}},)" + spec + "}"));
  EXPECT_TRUE(eq(R"({"metadata":{"labels":{"pod-template-hash":"x","a":"1"}},)" + spec + "}",
                 R"({"metadata":{"labels":{"a":"1","pod-template-hash":"y"}},)" + spec + "}"));
  EXPECT_TRUE(eq(R"({"metadata":{"labels":{"pod-template-hash":"x"}},)" + spec + "}",
                 R"({"metadata":{},)" + spec + "}"));
  EXPECT_TRUE(
      eq(R"({"metadata":{"labels":{"pod-template-hash":"x"}},)" + spec + "}", "{" + spec + "}"));
  // The same key elsewhere is not ignored: in annotations, or in the pod spec.
  EXPECT_FALSE(eq(R"({"metadata":{"annotations":{"pod-template-hash":"x"}},)" + spec + "}",
                  R"({"metadata":{"annotations":{"pod-template-hash":"y"}},)" + spec + "}"));
  EXPECT_FALSE(
      eq(R"({"metadata":{"labels":{"a":"1"}},"spec":{"nodeSelector":{"pod-template-hash":"x"}}})",
         R"({"metadata":{"labels":{"a":"1"}},"spec":{"nodeSelector":{"pod-template-hash":"y"}}})"));
  // Other labels still count.
  EXPECT_FALSE(eq(R"({"metadata":{"labels":{"a":"1","pod-template-hash":"x"}},)" + spec + "}",
                  R"({"metadata":{"labels":{"a":"2","pod-template-hash":"x"}},)" + spec + "}"));
  // Equal documents written differently: member order, spacing, number spelling, null or empty
  // members, an escaped key.
  EXPECT_TRUE(eq(R"({"spec":{"x":1.0,"containers":[{"image":"i","name":"c"}]},"metadata":{}})",
                 "{ \"metadata\" : { \"labels\" : { \"pod-template-hash\" : \"x\" } } , "
                 "\"spec\" : {\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"env\":[]}],"
                 "\"x\":1} }"));
  EXPECT_TRUE(eq(R"({"metadata":{"labels":{"a":"1","pod-templ\u0061te-hash":"x"}},)" + spec + "}",
                 R"({"metadata":{"labels":{"a":"1"}},)" + spec + "}"));
  // Empty templates.
  EXPECT_TRUE(eq("", "{}"));
  EXPECT_TRUE(eq("", R"({"metadata":{"labels":{"pod-template-hash":"x"}}})"));
  EXPECT_FALSE(eq("", "{" + spec + "}"));
}

}  // namespace
}  // namespace kcm::api
