#include "pkg/sharding/shard_work.h"

#include <gtest/gtest.h>

namespace kcm::sharding {
namespace {

TEST(ShardWorkTest, WeighsOnePlusObjectsAndRoundTrips) {
  const ShardWork work = ShardWorkOf({{"a", 40}, {"b", 0}, {"c", 3}});
  EXPECT_EQ(work.namespaces, (std::map<std::string, int64_t>{{"a", 41}, {"b", 1}, {"c", 4}}));
  EXPECT_EQ(work.rest, 0);
  const std::string text = EncodeShardWork(work);
  EXPECT_EQ(text, R"({"namespaces":{"a":41,"b":1,"c":4},"rest":0})");
  EXPECT_EQ(ParseShardWork(text), work);
}

// Only the heaviest kShardWorkTopNamespaces are listed; the others are summed into "rest", so the
// annotation stays far below kShardWorkMaxBytes whatever the cluster holds.
TEST(ShardWorkTest, ListsTheTopNamespacesAndSumsTheRest) {
  std::map<std::string, int64_t> objects;
  for (int i = 0; i < 1000; ++i) objects["namespace-with-a-long-name-" + std::to_string(i)] = i;
  const ShardWork work = ShardWorkOf(objects);
  ASSERT_EQ(work.namespaces.size(), kShardWorkTopNamespaces);
  EXPECT_EQ(work.namespaces.at("namespace-with-a-long-name-999"), 1000);
  EXPECT_FALSE(work.namespaces.contains("namespace-with-a-long-name-899"));
  int64_t rest = 0;
  for (int i = 0; i < 900; ++i) rest += 1 + i;
  EXPECT_EQ(work.rest, rest);
  const std::string text = EncodeShardWork(work);
  EXPECT_LT(text.size(), kShardWorkMaxBytes);
  EXPECT_EQ(ParseShardWork(text), work);
}

TEST(ShardWorkTest, HostileValuesAreIgnored) {
  std::string huge = R"({"namespaces":{"a":1},"rest":0,"pad":")";
  huge.append(kShardWorkMaxBytes, 'x');
  huge += "\"}";
  for (const std::string& bad : {
           std::string("not json"),
           std::string("[]"),
           std::string(R"({"rest":0})"),
           std::string(R"({"namespaces":[],"rest":0})"),
           std::string(R"({"namespaces":{"a":0},"rest":0})"),
           std::string(R"({"namespaces":{"a":-5},"rest":0})"),
           std::string(R"({"namespaces":{"a":"41"},"rest":0})"),
           std::string(R"({"namespaces":{"a":1.5},"rest":0})"),
           std::string(R"({"namespaces":{"a":1},"rest":-1})"),
           std::string(R"({"namespaces":{"a":99999999999999},"rest":0})"),
           std::string(R"({"namespaces":{"a":1}})"),
           huge,
       }) {
    EXPECT_FALSE(ParseShardWork(bad).has_value()) << bad.substr(0, 80);
  }
  std::string many = R"({"namespaces":{)";
  for (size_t i = 0; i <= kShardWorkTopNamespaces; ++i) {
    many += (i > 0 ? "," : "") + ("\"n" + std::to_string(i) + "\":1");
  }
  many += R"(},"rest":0})";
  EXPECT_FALSE(ParseShardWork(many).has_value());
}

}  // namespace
}  // namespace kcm::sharding
