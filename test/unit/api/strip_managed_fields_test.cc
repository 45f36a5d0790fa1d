// StripManagedFields: the cached raw JSON of ReplicaSets and Deployments drops
// metadata.managedFields and keeps every other byte.
#include "pkg/api/internal/strip_managed_fields.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/decoder.h"
#include "pkg/api/deployment.h"
#include "pkg/api/json.h"
#include "pkg/api/replicaset.h"

namespace kcm::api {
namespace {

using internal::StripManagedFields;

const std::string kManaged =
    R"([{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1",)"
    R"("fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{},"f:x":{".":{}}}}}])";

TEST(StripManagedFieldsTest, RemovesTheMemberFirstMiddleLastOrAlone) {
  EXPECT_EQ(StripManagedFields(R"({"metadata":{"managedFields":)" + kManaged +
                               R"(,"name":"a","uid":"u"},"spec":{}})"),
            R"({"metadata":{"name":"a","uid":"u"},"spec":{}})");
  EXPECT_EQ(StripManagedFields(R"({"metadata":{"name":"a","managedFields":)" + kManaged +
                               R"(,"uid":"u"},"spec":{}})"),
            R"({"metadata":{"name":"a","uid":"u"},"spec":{}})");
  EXPECT_EQ(StripManagedFields(R"({"kind":"ReplicaSet","metadata":{"name":"a","managedFields":)" +
                               kManaged + R"(}})"),
            R"({"kind":"ReplicaSet","metadata":{"name":"a"}})");
  EXPECT_EQ(StripManagedFields(R"({"metadata":{"managedFields":)" + kManaged + "}}"),
            R"({"metadata":{}})");
  // Pretty-printed, as kubectl sends it.
  EXPECT_EQ(StripManagedFields("{\n  \"metadata\": {\n    \"name\": \"a\",\n    "
                               "\"managedFields\": [ {\"manager\": \"m\"} ]\n  }\n}"),
            "{\n  \"metadata\": {\n    \"name\": \"a\"\n  }\n}");
}

TEST(StripManagedFieldsTest, KeepsLookAlikesElsewhere) {
  // A managedFields key outside metadata, the text inside strings (escaped quotes included), and
  // a metadata that is not the top-level one are all kept as they are.
  const std::string json =
      R"({"spec":{"managedFields":[1]},"metadata":{"name":"a \"managedFields\":[]",)"
      R"("annotations":{"managedFields":"x","k":"{\"metadata\":{\"managedFields\":1}}"}},)"
      R"("status":{"metadata":{"managedFields":[]}}})";
  EXPECT_EQ(StripManagedFields(json), json);
  EXPECT_EQ(StripManagedFields(R"({"metadata":null})"), R"({"metadata":null})");
  EXPECT_EQ(StripManagedFields("{}"), "{}");
}

// A key on the path written twice or with escapes (legal JSON the API server does not send): the
// scanner cannot tell which member the server would read, so the text is kept whole rather than
// cut at a guess.
TEST(StripManagedFieldsTest, AmbiguousKeysKeepTheTextWhole) {
  const std::string repeated =
      R"({"metadata":{"managedFields":[1],"name":"a","managedFields":[2]}})";
  EXPECT_EQ(StripManagedFields(repeated), repeated);
  const std::string escaped = R"({"metadata":{"name":"a","manag\u0065dFields":[1]}})";
  EXPECT_EQ(StripManagedFields(escaped), escaped);
}

TEST(StripManagedFieldsTest, DecodedReplicaSetsAndDeploymentsKeepEverythingElse) {
  const std::string meta = R"("metadata":{"name":"web","namespace":"ns","resourceVersion":"7",)"
                           R"("labels":{"app":"web"},"managedFields":)" +
                           kManaged + R"(,"annotations":{"a":"b"}})";
  const std::string spec =
      R"("spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"futureField":{"x":[1,2]},)"
      R"("template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[]}}})";
  Decoder decoder;
  for (const std::string kind : {"ReplicaSet", "Deployment"}) {
    const std::string raw = R"({"apiVersion":"apps/v1","kind":")" + kind + R"(",)" + meta + "," +
                            spec + R"(,"status":{"replicas":2}})";
    std::string kept;
    if (kind == "ReplicaSet") {
      auto rs = DecodeReplicaSet(decoder, raw);
      ASSERT_TRUE(rs.ok()) << rs.error().ToString();
      kept = (*rs)->raw_json.str();
      EXPECT_EQ((*rs)->metadata.annotations.at("a"), "b");
    } else {
      auto d = DecodeDeployment(decoder, raw);
      ASSERT_TRUE(d.ok()) << d.error().ToString();
      kept = (*d)->raw_json.str();
    }
    auto got = json::Parse(kept);
    ASSERT_TRUE(got.ok()) << kept;
    EXPECT_EQ(json::GetPath(*got, {"metadata", "managedFields"}), nullptr) << kind;
    // Everything else, unknown fields included, is what the server sent.
    EXPECT_NE(json::GetPath(*got, {"spec", "futureField"}), nullptr) << kind;
    EXPECT_EQ(kept.size() + std::string(R"("managedFields":,)").size() + kManaged.size(),
              raw.size())
        << kind;
  }
}

// The template of a decoded ReplicaSet or Deployment is a view into the object's own kept JSON,
// not a second copy, and is the exact template text — with managedFields cut before it (the
// server's order), after it (spec first), or absent.
TEST(StripManagedFieldsTest, TemplateIsAViewIntoTheKeptJson) {
  const std::string tmpl =
      R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  const std::string meta_with = R"("metadata":{"name":"a","managedFields":)" + kManaged + "}";
  const std::string meta_without = R"("metadata":{"name":"a"})";
  const std::string spec = R"("spec":{"replicas":1,"template":)" + tmpl + "}";
  Decoder decoder;
  for (const std::string kind : {"ReplicaSet", "Deployment"}) {
    for (const std::string& raw :
         {"{" + meta_with + "," + spec + "}", "{" + spec + "," + meta_with + "}",
          "{" + meta_without + "," + spec + "}"}) {
      const SharedText* kept = nullptr;
      const PodTemplate* got = nullptr;
      std::shared_ptr<const Object> hold;
      if (kind == "ReplicaSet") {
        auto rs = DecodeReplicaSet(decoder, raw);
        ASSERT_TRUE(rs.ok()) << rs.error().ToString();
        hold = *rs;
        kept = &(*rs)->raw_json;
        got = &(*rs)->spec.pod_template;
      } else {
        auto d = DecodeDeployment(decoder, raw);
        ASSERT_TRUE(d.ok()) << d.error().ToString();
        hold = *d;
        kept = &(*d)->raw_json;
        got = &(*d)->spec.pod_template;
      }
      EXPECT_EQ(got->raw_json, tmpl) << kind << " " << raw;
      EXPECT_TRUE(got->raw_json.SharesBufferWith(*kept)) << kind << " " << raw;
      EXPECT_EQ(kept->str().find("managedFields"), std::string::npos);
      EXPECT_EQ(got->labels.at("app"), "web");
      // A copy of the template outlives the object: it shares ownership of the bytes.
      PodTemplate copy = *got;
      hold.reset();
      EXPECT_EQ(copy.raw_json, tmpl);
    }
    auto none = DecodeReplicaSet(decoder, R"({"metadata":{"name":"a"},"spec":{"template":null}})");
    ASSERT_TRUE(none.ok()) << none.error().ToString();
    EXPECT_TRUE((*none)->spec.pod_template.raw_json.empty());
  }
}

}  // namespace
}  // namespace kcm::api
