// ResourceVersion: a canonical decimal resourceVersion (the API server's) is held as its number
// and any other text as itself; either way the text reads back exactly and equality is the text's.
#include "pkg/api/resource_version.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/decoder.h"
#include "pkg/api/pod.h"

namespace kcm::api {
namespace {

TEST(ResourceVersionTest, DecimalTextIsHeldAsANumberAndReadsBack) {
  for (const std::string& text :
       std::vector<std::string>{"0", "1", "123456789", "9223372036854775807"}) {  // ≤ 2^63 - 1
    ResourceVersion rv(text);
    EXPECT_TRUE(rv.IsNumber()) << text;
    EXPECT_FALSE(rv.empty());
    EXPECT_EQ(rv.str(), text);
    EXPECT_EQ(rv, text);
    EXPECT_EQ(rv, ResourceVersion(text));
    std::string appended = "rv=";
    rv.AppendTo(&appended);
    EXPECT_EQ(appended, "rv=" + text);
    std::ostringstream os;
    os << rv;
    EXPECT_EQ(os.str(), text);
  }
  EXPECT_EQ(sizeof(ResourceVersion), 8u);
}

TEST(ResourceVersionTest, OtherTextIsKeptAsIs) {
  for (const std::string& text :
       std::vector<std::string>{"0123", "00", "-1", "+1", " 1", "1 ", "12a", "abc", "1.5",
                                "9223372036854775808",   // 2^63: above what the tagged number holds
                                "18446744073709551616",  // 20 digits
                                std::string("1\0002", 3)}) {
    ResourceVersion rv(text);
    EXPECT_FALSE(rv.IsNumber()) << text;
    EXPECT_EQ(rv.str(), text);
    EXPECT_EQ(rv, text);
    EXPECT_EQ(rv, ResourceVersion(text));
  }
}

// Upstream compares resourceVersions as opaque strings (ReplicaSetController.updatePod and
// DeploymentController.updateReplicaSet return early when old and new are the same string): the
// number form must not make "0123" equal "123".
TEST(ResourceVersionTest, EqualityIsTheTexts) {
  EXPECT_NE(ResourceVersion("123"), ResourceVersion("0123"));
  EXPECT_NE(ResourceVersion("123"), "0123");
  EXPECT_NE(ResourceVersion("0123"), "123");
  EXPECT_NE(ResourceVersion("123"), "124");
  EXPECT_NE(ResourceVersion("123"), ResourceVersion("124"));
  EXPECT_NE(ResourceVersion("a"), ResourceVersion("b"));
  EXPECT_NE(ResourceVersion("0"), "");
  EXPECT_NE(ResourceVersion(""), "0");
  EXPECT_EQ(ResourceVersion(""), "");
  EXPECT_EQ(ResourceVersion(""), ResourceVersion());
  EXPECT_TRUE(ResourceVersion("").empty());
  EXPECT_EQ(ResourceVersion("").str(), "");
}

TEST(ResourceVersionTest, CopiesAndMovesKeepTheText) {
  for (const char* text : {"42", "not-a-number"}) {
    ResourceVersion a(text);
    ResourceVersion b = a;
    EXPECT_EQ(b, text);
    EXPECT_EQ(a, text);
    ResourceVersion c = std::move(a);
    EXPECT_EQ(c, text);
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    a = c;
    EXPECT_EQ(a, text);
    a = a;  // self-assignment keeps the value
    EXPECT_EQ(a, text);
    c = ResourceVersion("7");
    EXPECT_EQ(c, "7");
    c.clear();
    EXPECT_TRUE(c.empty());
    EXPECT_EQ(std::string(b) + "/x", std::string(text) + "/x");
    EXPECT_EQ("x/" + b, "x/" + std::string(text));
  }
}

// The decoders keep what the API server sent, number or not, JSON and protobuf alike (the
// protobuf path is covered in pod_protobuf_test's metadata round trip).
TEST(ResourceVersionTest, DecodedPodKeepsItsResourceVersionText) {
  Decoder d;
  for (const char* text : {"123", "0123", "x7"}) {
    auto pod = DecodePod(
        d, std::string(R"({"metadata":{"name":"p","resourceVersion":")") + text + R"("}})");
    ASSERT_TRUE(pod.ok()) << pod.error().ToString();
    EXPECT_EQ((*pod)->metadata.resource_version, text);
    EXPECT_EQ((*pod)->metadata.resource_version.str(), text);
  }
}

}  // namespace
}  // namespace kcm::api
