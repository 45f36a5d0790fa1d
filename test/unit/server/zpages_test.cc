// The z-pages' handlers (/statusz, /flagz, /configz, /debug/flags/v) and their content
// negotiation, called directly with Request values; the server's routing of them is in
// secure_server_handlers_test.cc.
#include <gtest/gtest.h>

#include "pkg/api/json.h"
#include "pkg/server/configz.h"
#include "pkg/server/debug_flags.h"
#include "pkg/server/flagz.h"
#include "pkg/server/statusz.h"
#include "pkg/server/zpage_encoding.h"
#include "pkg/server/zpage_negotiation.h"

namespace kcm::server {
namespace {

namespace json = api::json;

constexpr const char* kWarning =
    "Warning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only.\n";

Request Get(std::string accept = "", std::string query = "") {
  Request r;
  r.method = "GET";
  r.path = "/statusz";
  r.accept = std::move(accept);
  r.query = std::move(query);
  return r;
}

ZpageFormat::Type Negotiated(const std::string& accept, std::string_view kind = "Statusz") {
  auto n = NegotiateZpage(Get(accept), kind);
  EXPECT_TRUE(std::holds_alternative<ZpageFormat>(n)) << accept;
  return std::holds_alternative<ZpageFormat>(n) ? std::get<ZpageFormat>(n).type
                                                : ZpageFormat::Type::kText;
}

int NegotiationError(const std::string& accept, std::string_view kind = "Statusz") {
  auto n = NegotiateZpage(Get(accept), kind);
  return std::holds_alternative<Response>(n) ? std::get<Response>(n).code : 0;
}

TEST(ZpageNegotiationTest, TextUnlessAKindIsAskedFor) {
  EXPECT_EQ(Negotiated(""), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("   "), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("text/plain"), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("text/plain; charset=utf-8"), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("*/*"), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("text/*"), ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("application/json;g=config.k8s.io;v=v1beta1;as=Statusz"),
            ZpageFormat::Type::kJson);
  EXPECT_EQ(Negotiated("application/yaml;g=config.k8s.io;v=v1beta1;as=Statusz"),
            ZpageFormat::Type::kYaml);
  EXPECT_EQ(Negotiated("application/json;as=Flagz;v=v1beta1;g=config.k8s.io", "Flagz"),
            ZpageFormat::Type::kJson);
  // A higher q wins over the order of the clauses; a wildcard after a concrete type.
  EXPECT_EQ(Negotiated("application/json;g=config.k8s.io;v=v1beta1;as=Statusz;q=0.5, "
                       "text/plain"),
            ZpageFormat::Type::kText);
  EXPECT_EQ(Negotiated("*/*, application/json;g=config.k8s.io;v=v1beta1;as=Statusz"),
            ZpageFormat::Type::kJson);
}

TEST(ZpageNegotiationTest, V1alpha1IsServedDeprecated) {
  auto n = NegotiateZpage(Get("application/json;g=config.k8s.io;v=v1alpha1;as=Statusz"), "Statusz");
  ASSERT_TRUE(std::holds_alternative<ZpageFormat>(n));
  EXPECT_TRUE(std::get<ZpageFormat>(n).deprecated);
  EXPECT_EQ(std::get<ZpageFormat>(n).version, "v1alpha1");
}

TEST(ZpageNegotiationTest, UnservableAcceptIs406WithUpstreamsStatus) {
  for (const char* accept :
       {"application/json", "application/yaml", "text/html", "application/vnd.kubernetes.protobuf",
        "application/json;g=config.k8s.io;v=v1beta1;as=Flagz",  // the other page's kind
        "application/json;v=v1beta1;as=Statusz",                // no group
        "application/json;g=config.k8s.io;v=v2;as=Statusz", "text/plain;as=Statusz",
        "application/json;g=config.k8s.io;v=v1beta1;as=Statusz;stream=watch", "garbage", ",,,"}) {
    EXPECT_EQ(NegotiationError(accept), 406) << accept;
  }
  // As upstream v1.37.2 answers: a plain JSON or YAML clause gets the Status in that form, any
  // other Accept gets it as indented JSON.
  auto yaml = std::get<Response>(NegotiateZpage(Get("application/yaml"), "Statusz"));
  EXPECT_EQ(yaml.content_type, "application/yaml");
  EXPECT_EQ(yaml.body.rfind("apiVersion: v1\ncode: 406\nkind: Status\n", 0), 0u) << yaml.body;
  auto html = std::get<Response>(NegotiateZpage(Get("text/html"), "Statusz"));
  EXPECT_EQ(html.content_type, "application/json");
  EXPECT_EQ(html.body.rfind("{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n", 0), 0u)
      << html.body;
  auto n = NegotiateZpage(Get("application/json"), "Statusz");
  ASSERT_TRUE(std::holds_alternative<Response>(n));
  const Response& r = std::get<Response>(n);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body,
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
            "\"message\":\"only the following media types are accepted: application/json, "
            "application/yaml, text/plain\",\"reason\":\"NotAcceptable\",\"code\":406}\n");
  auto status = json::Parse(r.body);
  ASSERT_TRUE(status.ok()) << r.body;
  EXPECT_EQ(json::GetPath(*status, {"kind"})->as_string(), "Status");
  EXPECT_EQ(json::GetPath(*status, {"reason"})->as_string(), "NotAcceptable");
  EXPECT_EQ(json::GetPath(*status, {"code"})->as_int64(), 406);
  EXPECT_EQ(json::GetPath(*status, {"message"})->as_string(),
            "only the following media types are accepted: application/json, application/yaml, "
            "text/plain");
}

TEST(ZpageNegotiationTest, PrettyByParameterQueryOrCurl) {
  const std::string json_accept = "application/json;g=config.k8s.io;v=v1beta1;as=Statusz";
  EXPECT_FALSE(std::get<ZpageFormat>(NegotiateZpage(Get(json_accept), "Statusz")).pretty);
  EXPECT_TRUE(
      std::get<ZpageFormat>(NegotiateZpage(Get(json_accept + ";pretty=1"), "Statusz")).pretty);
  EXPECT_TRUE(
      std::get<ZpageFormat>(NegotiateZpage(Get(json_accept, "pretty=true"), "Statusz")).pretty);
  Request curl = Get(json_accept);
  curl.user_agent = "curl/8.5.0";
  EXPECT_TRUE(std::get<ZpageFormat>(NegotiateZpage(curl, "Statusz")).pretty);
}

StatuszInfo Info() {
  StatuszInfo info;
  info.component = "kube-controller-manager";
  info.start_time_seconds = 1700000000;  // Tue Nov 14 22:13:20 UTC 2023
  info.binary_version = "1.37.2+cpp.0.1.0";
  info.emulation_version = "1.37";
  info.paths = {"/metrics/slis", "/healthz", "/configz", "/metrics", "/flagz", "/healthz/ping"};
  return info;
}

TEST(StatuszTest, TextPageHasUpstreamsLinesAndAggregatedPaths) {
  Response r = NewStatuszHandler(Info())(Get());
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(r.body.rfind(std::string("\nkube-controller-manager statusz\n") + kWarning, 0), 0u)
      << r.body;
  for (const char* label :
       {"Started", "Up", "Go version", "Binary version", "Emulation version", "Paths"}) {
    EXPECT_NE(r.body.find("\n" + std::string(label)), std::string::npos) << label << r.body;
  }
  EXPECT_NE(r.body.find(" 1.37.2+cpp.0.1.0\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(" /configz /flagz /healthz /metrics\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(" 2023\n"), std::string::npos) << r.body;  // Go's UnixDate ends in the year
}

TEST(StatuszTest, JsonIsConfigK8sIoV1beta1Statusz) {
  Response r =
      NewStatuszHandler(Info())(Get("application/json;g=config.k8s.io;v=v1beta1;as=Statusz"));
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, "application/json;g=config.k8s.io;v=v1beta1;as=Statusz");
  auto o = json::Parse(r.body);
  ASSERT_TRUE(o.ok()) << r.body;
  EXPECT_EQ(json::GetPath(*o, {"kind"})->as_string(), "Statusz");
  EXPECT_EQ(json::GetPath(*o, {"apiVersion"})->as_string(), "config.k8s.io/v1beta1");
  EXPECT_EQ(json::GetPath(*o, {"metadata", "name"})->as_string(), "kube-controller-manager");
  EXPECT_EQ(json::GetPath(*o, {"startTime"})->as_string(), "2023-11-14T22:13:20Z");
  EXPECT_GT(*json::GetPath(*o, {"uptimeSeconds"})->as_int64(), 0);
  EXPECT_EQ(json::GetPath(*o, {"binaryVersion"})->as_string(), "1.37.2+cpp.0.1.0");
  EXPECT_EQ(json::GetPath(*o, {"emulationVersion"})->as_string(), "1.37");
  ASSERT_TRUE(json::GetPath(*o, {"paths"})->is_array());
  EXPECT_EQ(json::GetPath(*o, {"paths"})->as_array().size(), 4u);
  EXPECT_TRUE(r.headers.empty());
  Response old =
      NewStatuszHandler(Info())(Get("application/json;g=config.k8s.io;v=v1alpha1;as=Statusz"));
  ASSERT_EQ(old.headers.size(), 1u);
  EXPECT_EQ(old.headers[0].first, "Warning");
  EXPECT_NE(old.headers[0].second.find("statusz endpoint is deprecated"), std::string::npos);
  EXPECT_NE(old.body.find("\"apiVersion\":\"config.k8s.io/v1alpha1\""), std::string::npos);
}

TEST(FlagzTest, TextListsFlagsSortedWithOneSeparatorKept) {
  std::map<std::string, std::string> flags = {
      {"v", "2"}, {"controllers", "[*]"}, {"kubeconfig", "/k"}};
  Handler h = NewFlagzHandler("kube-controller-manager", [&flags] { return flags; });
  Response first = h(Get());
  EXPECT_EQ(first.code, 200);
  const std::string header = std::string("\nkube-controller-manager flagz\n") + kWarning;
  ASSERT_EQ(first.body.rfind(header, 0), 0u) << first.body;
  const std::string lines = first.body.substr(header.size());
  const size_t c = lines.find("controllers"), k = lines.find("kubeconfig"), v = lines.find("\nv");
  EXPECT_TRUE(c == 0 && c < k && k < v) << lines;
  // The separator is the text between "controllers" and "[*]".
  const std::string separator = lines.substr(11, lines.find("[*]") - 11);
  EXPECT_TRUE(separator == ":" || separator == ": " || separator == "=" || separator == " ")
      << separator;
  EXPECT_NE(lines.find("kubeconfig" + separator + "/k\n"), std::string::npos) << lines;
  flags["v"] = "4";  // the text is upstream's cached first answer; the JSON is read afresh
  for (int i = 0; i < 20; ++i) EXPECT_EQ(h(Get()).body, first.body);
  EXPECT_NE(h(Get("application/json;g=config.k8s.io;v=v1beta1;as=Flagz")).body.find("\"v\":\"4\""),
            std::string::npos);
}

TEST(FlagzTest, JsonAndYamlCarryTheFlags) {
  Handler h = NewFlagzHandler("kube-controller-manager", [] {
    return std::map<std::string, std::string>{{"leader-elect", "true"}, {"controllers", "[*]"}};
  });
  Response r = h(Get("application/json;g=config.k8s.io;v=v1beta1;as=Flagz"));
  EXPECT_EQ(r.body,
            "{\"kind\":\"Flagz\",\"apiVersion\":\"config.k8s.io/v1beta1\",\"metadata\":{\"name\":"
            "\"kube-controller-manager\"},\"flags\":{\"controllers\":\"[*]\",\"leader-elect\":"
            "\"true\"}}\n");
  EXPECT_EQ(r.content_type, "application/json;g=config.k8s.io;v=v1beta1;as=Flagz");
  Response y = h(Get("application/yaml;as=Flagz;v=v1beta1;g=config.k8s.io"));
  EXPECT_EQ(y.content_type, "application/yaml;g=config.k8s.io;v=v1beta1;as=Flagz");
  EXPECT_EQ(y.body,
            "apiVersion: config.k8s.io/v1beta1\nflags:\n  controllers: '[*]'\n  leader-elect: "
            "\"true\"\nkind: Flagz\nmetadata:\n  name: kube-controller-manager\n");
  EXPECT_EQ(h(Get("application/json;g=config.k8s.io;v=v1beta1;as=Statusz")).code, 406);
}

TEST(ZpageEncodingTest, YamlQuotesOnlyWhatPlainYamlWouldMisread) {
  json::Value v = json::Value::MakeObject({
      {"b", json::Value::MakeArray({json::Value::String("/configz"), json::Value::String("1.37"),
                                    json::Value::String("")})},
      {"a", json::Value::Int(3)},
      {"c", json::Value::MakeObject()},
      {"d", json::Value::String("it's: x")},
      {"e", json::Value::String("*")},
      {"f", json::Value::String("15s")},
      {"g", json::Value::String("null")},
      {"h", json::Value::String("2026-12-06T03:57:19Z")},
  });
  EXPECT_EQ(Yaml(v),
            "a: 3\nb:\n- /configz\n- \"1.37\"\n- \"\"\nc: {}\nd: 'it''s: x'\ne: '*'\nf: 15s\n"
            "g: \"null\"\nh: \"2026-12-06T03:57:19Z\"\n");
  EXPECT_EQ(
      IndentedJson(json::Value::MakeObject({{"a", json::Value::MakeArray({json::Value::Int(1)})},
                                            {"b", json::Value::MakeObject()}})),
      "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
}

TEST(ConfigzTest, ServesTheConfigurationUnderItsName) {
  json::Value config = json::Value::MakeObject({{"kind", json::Value::String("K")}});
  Response r = NewConfigzHandler("x.config.k8s.io", config)(Get());
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, "{\"x.config.k8s.io\":{\"kind\":\"K\"}}");
}

TEST(DebugFlagsTest, PutSetsOtherMethodsAre406ErrorsAre400) {
  std::string applied;
  Handler h = NewDebugFlagHandler([&](const std::string& v) -> Result<std::string> {
    if (v != "3") return Error::Local("InvalidValue", "no: " + v);
    applied = v;
    return std::string("set to 3");
  });
  Request put = Get();
  put.method = "PUT";
  put.body = "3";
  Response ok = h(put);
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.body, "set to 3\n");
  EXPECT_EQ(applied, "3");
  put.body = "x";
  Response bad = h(put);
  EXPECT_EQ(bad.code, 400);
  EXPECT_EQ(bad.body, "no: x\n");
  EXPECT_EQ(h(Get()).code, 406);
  EXPECT_EQ(h(Get()).body, "unsupported http method\n");
  Response index = NewDebugFlagsIndexHandler({"v"})(Get());
  EXPECT_NE(index.body.find("<tr>v<br>"), std::string::npos) << index.body;
}

}  // namespace
}  // namespace kcm::server
