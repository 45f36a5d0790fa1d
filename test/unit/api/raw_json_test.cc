#include "pkg/api/internal/raw_json.h"

#include <gtest/gtest.h>

namespace kcm::api::internal {
namespace {

TEST(RawJsonTest, SetReplacesTheValueInPlace) {
  EXPECT_EQ(RawSetMember(R"({"a":1,"spec":{"replicas":3,"x":[1]}})", {"spec", "replicas"}, "7"),
            R"({"a":1,"spec":{"replicas":7,"x":[1]}})");
  // Whitespace and member order elsewhere are kept byte for byte.
  EXPECT_EQ(RawSetMember("{ \"b\" : {\"c\": \"}\" } ,\n \"a\":1 }", {"a"}, "[2]"),
            "{ \"b\" : {\"c\": \"}\" } ,\n \"a\":[2] }");
}

TEST(RawJsonTest, SetAppendsAMemberAndCreatesMissingObjects) {
  EXPECT_EQ(RawSetMember(R"({"metadata":{"name":"n"}})", {"metadata", "annotations", "k"}, "\"v\""),
            R"({"metadata":{"name":"n","annotations":{"k":"v"}}})");
  EXPECT_EQ(RawSetMember(R"({})", {"status"}, R"({"replicas":1})"), R"({"status":{"replicas":1}})");
  EXPECT_EQ(RawSetMember(R"({ })", {"a", "b", "c"}, "1"), R"({ "a":{"b":{"c":1}}})");
  // Keys are written escaped.
  EXPECT_EQ(RawSetMember(R"({"m":{}})", {"m", "a\"b"}, "1"), R"({"m":{"a\"b":1}})");
}

TEST(RawJsonTest, EraseTakesOneSeparatingComma) {
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1,"b":2,"c":3}})", {"m", "a"}), R"({"m":{"b":2,"c":3}})");
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1,"b":2,"c":3}})", {"m", "b"}), R"({"m":{"a":1,"c":3}})");
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1,"b":2,"c":3}})", {"m", "c"}), R"({"m":{"a":1,"b":2}})");
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":{"x":[1,"]"]}}})", {"m", "a"}), R"({"m":{}})");
  EXPECT_EQ(RawEraseMember("{\"a\" : 1 , \"b\" : 2}", {"b"}), "{\"a\" : 1}");
  // Absent: unchanged, including an absent intermediate.
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1}})", {"m", "z"}), R"({"m":{"a":1}})");
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1}})", {"q", "z"}), R"({"m":{"a":1}})");
}

TEST(RawJsonTest, FindValue) {
  size_t b = 0, e = 0;
  const std::string_view s = R"({"spec":{"template":{"k":"v"}},"status":null})";
  ASSERT_EQ(RawFindValue(s, {"spec", "template"}, &b, &e), true);
  EXPECT_EQ(s.substr(b, e - b), R"({"k":"v"})");
  ASSERT_EQ(RawFindValue(s, {"status"}, &b, &e), true);
  EXPECT_EQ(s.substr(b, e - b), "null");
  EXPECT_EQ(RawFindValue(s, {"spec", "nope"}, &b, &e), false);
}

// What the splice cannot be sure of is left to the document model: nullopt, never a guess.
TEST(RawJsonTest, UnsureAnswersAreNullopt) {
  // A key spelled with an escape might be the key asked for.
  EXPECT_EQ(RawSetMember(R"({"st\u0061tus":{}})", {"status"}, "1"), std::nullopt);
  EXPECT_EQ(RawEraseMember(R"({"m":{"l\u0061bels":{"h":"x"}}})", {"m", "labels", "h"}),
            std::nullopt);
  // Repeated keys.
  EXPECT_EQ(RawSetMember(R"({"a":1,"a":2})", {"a"}, "3"), std::nullopt);
  EXPECT_EQ(RawEraseMember(R"({"m":{"a":1},"m":{"a":2}})", {"m", "a"}), std::nullopt);
  // An intermediate that is not an object (json::SetPath turns null into an object).
  EXPECT_EQ(RawSetMember(R"({"metadata":null})", {"metadata", "annotations"}, "{}"), std::nullopt);
  EXPECT_EQ(RawSetMember(R"({"spec":[1]})", {"spec", "replicas"}, "1"), std::nullopt);
  // Not an object, empty, or cut short.
  EXPECT_EQ(RawSetMember("", {"a"}, "1"), std::nullopt);
  EXPECT_EQ(RawSetMember("[1]", {"a"}, "1"), std::nullopt);
  EXPECT_EQ(RawSetMember(R"({"a":{"b":1})", {"a", "b"}, "2"), std::nullopt);
  EXPECT_EQ(RawEraseMember(R"({"a":1,})", {"a"}), std::nullopt);
  EXPECT_EQ(RawEraseMember(R"({"a" 1})", {"a"}), std::nullopt);
}

}  // namespace
}  // namespace kcm::api::internal
