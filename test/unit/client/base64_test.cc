// Base64Encode/Base64Decode: padding handled both ways, whitespace skipped, bad input refused.
#include "pkg/client/base64.h"

#include <gtest/gtest.h>

namespace kcm::client {
namespace {

TEST(Base64Test, EncodesWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("k"), "aw==");
  EXPECT_EQ(Base64Encode("ke"), "a2U=");
  EXPECT_EQ(Base64Encode("key"), "a2V5");
  EXPECT_EQ(Base64Encode("user:pass"), "dXNlcjpwYXNz");
}

TEST(Base64Test, DecodesPaddedAndUnpadded) {
  for (const std::string plain : {"", "k", "ke", "key", "cert", "-----BEGIN CA-----\n"}) {
    const std::string encoded = Base64Encode(plain);
    auto padded = Base64Decode(encoded);
    ASSERT_TRUE(padded.ok()) << encoded;
    EXPECT_EQ(*padded, plain);
    const std::string unpadded = encoded.substr(0, encoded.find('='));
    auto bare = Base64Decode(unpadded);
    ASSERT_TRUE(bare.ok()) << unpadded;
    EXPECT_EQ(*bare, plain);
  }
}

TEST(Base64Test, SkipsWhitespace) {
  auto out = Base64Decode(" Y2Vy\n dA==\r\n");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "cert");
}

TEST(Base64Test, RefusesBadInput) {
  for (const char* bad : {"%%%", "a2V5=a", "a===", "Y2VydA=x", "a", "a2V5a"}) {
    auto out = Base64Decode(bad);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.error().reason, "InvalidBase64") << bad;
  }
}

}  // namespace
}  // namespace kcm::client
