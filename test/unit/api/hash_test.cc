#include "pkg/api/hash.h"

#include <gtest/gtest.h>

namespace kcm::api {
namespace {

TEST(HashTest, Fnv32aKnownVectors) {
  // Reference values of FNV-1a 32 (offset basis for "", published test vectors).
  EXPECT_EQ(Fnv32a(""), 0x811c9dc5u);
  EXPECT_EQ(Fnv32a("a"), 0xe40c292cu);
  EXPECT_EQ(Fnv32a("foobar"), 0xbf9cf968u);
  EXPECT_EQ(Fnv32a("bar", Fnv32a("foo")), Fnv32a("foobar"));
}

TEST(HashTest, SafeEncodeStringMapsBytesModAlphabet) {
  // '0' is 48 → 48 % 27 = 21 → '4'; '9' is 57 → 3 → 'f'.
  EXPECT_EQ(SafeEncodeString("09"), "4f");
  for (char c : SafeEncodeString("1234567890")) {
    EXPECT_NE(kSafeEncodeAlphabet.find(c), std::string_view::npos);
  }
}

// D4: stable, depends on the template's meaning only, and changes with collisionCount.
TEST(HashTest, PodTemplateHashIsStableAndIgnoresHashLabelAndSpelling) {
  auto a = json::Parse(
      R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  auto b = json::Parse(
      R"({"spec":{"containers":[{"image":"i","name":"c"}]},"metadata":{"labels":{"pod-template-hash":"x","app":"web"},"annotations":{}}})");
  auto c = json::Parse(
      R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"j"}]}})");
  std::string ha = ComputePodTemplateHash(*a, std::nullopt);
  EXPECT_EQ(ha, ComputePodTemplateHash(*a, std::nullopt));
  EXPECT_EQ(ha, ComputePodTemplateHash(*b, std::nullopt));
  EXPECT_NE(ha, ComputePodTemplateHash(*c, std::nullopt));
  EXPECT_NE(ha, ComputePodTemplateHash(*a, 1));
  EXPECT_NE(ComputePodTemplateHash(*a, 1), ComputePodTemplateHash(*a, 2));
  for (char ch : ha) EXPECT_NE(kSafeEncodeAlphabet.find(ch), std::string_view::npos);
}

}  // namespace
}  // namespace kcm::api
