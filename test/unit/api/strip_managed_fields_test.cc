// StripManagedFields: the cached raw JSON of ReplicaSets and Deployments drops
// metadata.managedFields and keeps every other byte.
#include "pkg/api/internal/strip_managed_fields.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/decoder.h"
#include "pkg/api/deployment.h"
#include "pkg/api/internal/raw_json.h"
#include "pkg/api/json.h"
#include "pkg/api/replicaset.h"
#include "test/unit/api/testdata.h"

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

// The cut is found on simdjson's structural index; raw_json.h's byte scanner (RawEraseMember)
// finds the same member by reading every byte. Both must cut exactly the same text, wherever the
// member stands, however the text is spaced, and both must keep ambiguous text whole.
TEST(StripManagedFieldsTest, CutsWhatTheByteScannerCuts) {
  const std::vector<std::string> metadata_members = {
      R"("name":"a")", R"("labels":{"managedFields":"x"})", R"("managedFields":)" + kManaged,
      R"("annotations":{"k":""managedFields":[]"})"};
  std::vector<std::string> texts = {testing::ApiTestdata("replicaset.json"),
                                    testing::ApiTestdata("deployment.json"),
                                    testing::ApiTestdata("replicaset-server.json"),
                                    testing::ApiTestdata("deployment-server.json")};
  for (const char* space : {"", " ", "\n  "}) {
    // managedFields first, in the middle, last, and alone; metadata first and last.
    for (size_t at = 0; at < metadata_members.size(); ++at) {
      std::string meta = "{";
      for (size_t i = 0; i < metadata_members.size(); ++i) {
        const std::string& m = i == 0    ? metadata_members[at]
                               : i == at ? metadata_members[0]
                                         : metadata_members[i];
        meta += (i ? std::string(",") + space : std::string(space)) + m;
      }
      meta += std::string(space) + "}";
      texts.push_back(R"({"kind":"ReplicaSet",)" + std::string(space) + R"("metadata":)" + meta +
                      R"(,"spec":{"managedFields":[1]},"status":{}})");
      texts.push_back(R"({"spec":{"x":[1,{"y":"}"}]}, "metadata":)" + meta + space + "}");
    }
    texts.push_back(std::string("{") + space + R"("metadata":{"managedFields":[]})" + space + "}");
  }
  texts.push_back(R"({"metadata":{"managedFields":[1]},"metadata":{"name":"a"}})");
  texts.push_back(R"({"metadata":{"managedFields":[1]},"metadata":{"managedFields":[2]}})");
  texts.push_back(R"({"metadata":{"a\"b":1,"managedFields":[1]}})");
  texts.push_back(R"({"metadata":{"managedFields":null,"name":"a"}})");
  texts.push_back(R"({"metadata":[{"managedFields":1}]})");
  int cut = 0;
  for (const std::string& text : texts) {
    const std::string scanned =
        internal::RawEraseMember(text, {"metadata", "managedFields"}).value_or(text);
    EXPECT_EQ(StripManagedFields(text), scanned) << text;
    if (scanned != text) ++cut;
  }
  // replicaset.json and the two server objects, 3 spacings x 4 places x 2 metadata places, 3
  // alone, and the null value; the ambiguous and misplaced ones are kept whole.
  EXPECT_EQ(cut, 3 + 24 + 3 + 1);
}

// Text simdjson does not accept is never cut (and never crashes the walk): every prefix of a
// ReplicaSet with managedFields comes back whole, and its decode is an error.
TEST(StripManagedFieldsTest, TruncatedTextIsKeptWholeAndDoesNotDecode) {
  std::string rs = testing::ApiTestdata("replicaset.json");
  while (!rs.empty() && rs.back() == '\n') rs.pop_back();
  Decoder decoder;
  for (size_t n = 0; n < rs.size(); n += 3) {
    const std::string prefix = rs.substr(0, n);
    EXPECT_EQ(StripManagedFields(prefix), prefix) << n;
    EXPECT_FALSE(DecodeReplicaSet(decoder, prefix).ok()) << n;
  }
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
