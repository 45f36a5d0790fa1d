#include "pkg/api/json.h"

#include <gtest/gtest.h>

#include "pkg/api/json_find.h"

namespace kcm::api::json {
namespace {

TEST(JsonTest, ParseSerializeRoundTripKeepsOrderAndNumberText) {
  const std::string in = R"({"b":1.50,"a":[true,false,null,-0,1e3],"c":{"z":"x","y":{}}})";
  auto v = Parse(in);
  ASSERT_TRUE(v.ok()) << v.error().ToString();
  EXPECT_EQ(Serialize(*v), in);
  EXPECT_EQ(GetPath(*v, {"b"})->number_text(), "1.50");
}

TEST(JsonTest, ParseAcceptsWhitespaceAndScalarsAtRoot) {
  EXPECT_EQ(Serialize(*Parse(" { \"a\" : [ 1 , 2 ] } \n")), R"({"a":[1,2]})");
  EXPECT_EQ(Serialize(*Parse("\"s\"")), "\"s\"");
  EXPECT_EQ(Serialize(*Parse("42")), "42");
  EXPECT_TRUE(Parse("null")->is_null());
}

TEST(JsonTest, ParseErrorsAreDecodeErrors) {
  for (const char* bad : {"", "{", "{\"a\":}", "[1,2", "{\"a\":1}}", "nul", "01", "1.", "\"\\x\"",
                          "{\"a\" 1}", "tru"}) {
    auto v = Parse(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.error().reason, "DecodeError") << bad;
  }
}

// Found by fuzz/raw_json: 3,000 nested arrays overflowed the stack in Parse's recursive descent
// (the on-demand parser does not enforce its max_depth while iterating). Parse now refuses more
// than 1,024 nested containers with a DecodeError.
TEST(JsonTest, ParseRefusesNestingDeeperThan1024) {
  auto nested = [](size_t depth, char open, const std::string& inner, char close) {
    return std::string(depth, open) + inner + std::string(depth, close);
  };
  auto ok = Parse(nested(1024, '[', "", ']'));
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  std::string objects;
  for (size_t i = 0; i < 1024; ++i) objects += "{\"a\":";
  objects += "1" + std::string(1024, '}');
  EXPECT_TRUE(Parse(objects).ok());
  for (const std::string& deep : {nested(1025, '[', "", ']'), nested(100000, '[', "", ']'),
                                  nested(3000, '[', "", ' '), "{\"a\":" + objects + "}"}) {
    auto v = Parse(deep);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().reason, "DecodeError");
  }
}

TEST(JsonTest, SerializeEscapesQuotesBackslashAndControlCharsAndPassesUtf8) {
  std::string s = "q\"b\\n\nt\tc\x01\x1f del\x7f é🚀";
  EXPECT_EQ(Serialize(Value::String(s)), "\"q\\\"b\\\\n\\nt\\tc\\u0001\\u001f del\x7f é🚀\"");
  // Round trip through the parser restores the same bytes.
  EXPECT_EQ(Parse(Serialize(Value::String(s)))->as_string(), s);
}

// A string holding bytes that are not UTF-8 (a peer's error text passed on into a condition or an
// event) is written as JSON that parses: each such byte becomes U+FFFD, as Go's encoding/json
// writes it; well-formed sequences, up to four bytes, pass unchanged.
TEST(JsonTest, SerializeReplacesBytesThatAreNotUtf8) {
  const std::string s = "a\xff b\xc0\xaf c\xed\xa0\x80 d\xe2\x82 \xc3\xa9\xf0\x9f\x9a\x80";
  const std::string r = "\xef\xbf\xbd";
  EXPECT_EQ(Serialize(Value::String(s)), "\"a" + r + " b" + r + r + " c" + r + r + r + " d" + r +
                                             r + " \xc3\xa9\xf0\x9f\x9a\x80\"");
  EXPECT_TRUE(Parse(Serialize(Value::String(s))).ok());
}

TEST(JsonTest, ParseUnescapesUnicodeEscapes) {
  auto v = Parse(R"("\u00e9\ud83d\ude80\n")");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->as_string(), "é🚀\n");
}

TEST(JsonTest, DuplicateKeysLastWins) {
  EXPECT_EQ(Serialize(*Parse(R"({"a":1,"a":2})")), R"({"a":2})");
}

TEST(JsonTest, CanonicalSortsKeysRecursivelyAndNormalizesNumbers) {
  auto v = Parse(R"({"b":{"y":1.0,"x":-0},"a":[{"d":1e2,"c":0.5}],"n":12345678901234567890})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(CanonicalString(*v),
            R"({"a":[{"c":0.5,"d":100}],"b":{"x":0,"y":1},"n":12345678901234567168})");
}

TEST(JsonTest, SemanticEqualIgnoresOrderEmptyAndNull) {
  auto a = Parse(R"({"metadata":{"labels":{"a":"1"},"annotations":{}},"spec":{"x":null,"y":[]}})");
  auto b = Parse(R"({"spec":{},"metadata":{"labels":{"a":"1"}}})");
  EXPECT_TRUE(SemanticEqual(*a, *b));
  auto c = Parse(R"({"metadata":{"labels":{"a":"2"}}})");
  EXPECT_FALSE(SemanticEqual(*a, *c));
  // Array order is meaningful.
  EXPECT_FALSE(SemanticEqual(*Parse("[1,2]"), *Parse("[2,1]")));
}

TEST(JsonTest, PathGetSetErase) {
  Value v;
  ASSERT_TRUE(SetPath(v, {"spec", "replicas"}, Value::Int(3)).ok());
  ASSERT_TRUE(
      SetPath(v, {"metadata", "labels", "app.kubernetes.io/name"}, Value::String("x")).ok());
  EXPECT_EQ(Serialize(v),
            R"({"spec":{"replicas":3},"metadata":{"labels":{"app.kubernetes.io/name":"x"}}})");
  EXPECT_EQ(GetPath(v, {"spec", "replicas"})->as_int64(), 3);
  EXPECT_EQ(GetPath(v, {"spec", "missing"}), nullptr);
  // Overwrite keeps the member's position.
  ASSERT_TRUE(SetPath(v, {"spec", "replicas"}, Value::Int(5)).ok());
  EXPECT_EQ(Serialize(v),
            R"({"spec":{"replicas":5},"metadata":{"labels":{"app.kubernetes.io/name":"x"}}})");
  EXPECT_TRUE(ErasePath(v, {"metadata", "labels", "app.kubernetes.io/name"}));
  EXPECT_FALSE(ErasePath(v, {"metadata", "labels", "nope"}));
  EXPECT_FALSE(ErasePath(v, {"nope", "x"}));
  // An intermediate that is not an object is an error, not a silent overwrite.
  auto s = SetPath(v, {"spec", "replicas", "x"}, Value::Int(1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().reason, "InvalidPath");
}

TEST(JsonTest, AsInt64OnlyForIntegerLiteralsInRange) {
  EXPECT_EQ(Parse("12")->as_int64(), 12);
  EXPECT_EQ(Parse("1.5")->as_int64(), std::nullopt);
  EXPECT_EQ(Parse("99999999999999999999")->as_int64(), std::nullopt);
}

TEST(JsonTest, FindPlainString) {
  const std::string_view pod =
      R"({"kind":"Pod","metadata":{"name":"web-x7","resourceVersion":"42","labels":{"a":"b"}},)"
      R"("spec":{"containers":[{"name":"c"}]},"status":{"phase":"Pending"}})";
  EXPECT_EQ(FindPlainString(pod, {"metadata", "name"}), "web-x7");
  EXPECT_EQ(FindPlainString(pod, {"metadata", "resourceVersion"}), "42");
  EXPECT_EQ(FindPlainString(pod, {"status", "phase"}), "Pending");
  EXPECT_EQ(FindPlainString(pod, {"metadata", "uid"}), std::nullopt);       // absent
  EXPECT_EQ(FindPlainString(pod, {"metadata", "labels"}), std::nullopt);    // not a string
  EXPECT_EQ(FindPlainString(R"({"a":"x\"y"})", {"a"}), std::nullopt);       // escapes
  EXPECT_EQ(FindPlainString(R"({"a":"1","a":"2"})", {"a"}), std::nullopt);  // repeated
  EXPECT_EQ(FindPlainString("not json", {"a"}), std::nullopt);
}

}  // namespace
}  // namespace kcm::api::json
