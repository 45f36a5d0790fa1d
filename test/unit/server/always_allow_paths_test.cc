// AlwaysAllowPaths: upstream's --authorization-always-allow-paths matching
// (k8s.io/apiserver pkg/authorization/path NewAuthorizer).
#include "pkg/server/always_allow_paths.h"

#include <gtest/gtest.h>

namespace kcm::server {
namespace {

AlwaysAllowPaths MustParse(const std::vector<std::string>& entries) {
  auto p = AlwaysAllowPaths::Parse(entries);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? std::move(*p) : AlwaysAllowPaths();
}

TEST(AlwaysAllowPathsTest, ExactEntryMatchesThatPathOnly) {
  AlwaysAllowPaths p = MustParse({"/metrics"});
  EXPECT_TRUE(p.Matches("/metrics"));
  EXPECT_TRUE(p.Matches("metrics"));  // Upstream trims one leading '/' on both sides.
  for (const char* other : {"/", "", "/metrics/", "/metricsx", "//metrics", "/healthz"}) {
    EXPECT_FALSE(p.Matches(other)) << other;
  }
}

TEST(AlwaysAllowPathsTest, LeadingSlashOfAnEntryIsOptional) {
  AlwaysAllowPaths p = MustParse({"metrics"});
  EXPECT_TRUE(p.Matches("/metrics"));
  EXPECT_FALSE(p.Matches("/metrics/x"));
}

TEST(AlwaysAllowPathsTest, TrailingStarIsAPrefix) {
  AlwaysAllowPaths sub = MustParse({"/debug/*"});
  EXPECT_TRUE(sub.Matches("/debug/"));
  EXPECT_TRUE(sub.Matches("/debug/pprof/heap"));
  for (const char* other : {"/debug", "/debugger", "/", "/metrics"}) {
    EXPECT_FALSE(sub.Matches(other)) << other;
  }
  AlwaysAllowPaths stem = MustParse({"/live*"});
  EXPECT_TRUE(stem.Matches("/live"));
  EXPECT_TRUE(stem.Matches("/livez"));
  EXPECT_TRUE(stem.Matches("/livez/ping"));
  EXPECT_FALSE(stem.Matches("/liv"));
}

TEST(AlwaysAllowPathsTest, StarAloneMatchesEveryPath) {
  for (const char* entry : {"*", "/*"}) {
    AlwaysAllowPaths p = MustParse({entry});
    for (const char* path : {"/", "", "/metrics", "/healthz/ping"}) {
      EXPECT_TRUE(p.Matches(path)) << entry << " " << path;
    }
  }
}

TEST(AlwaysAllowPathsTest, SlashIsTheRootPathOnly) {
  AlwaysAllowPaths p = MustParse({"/"});
  EXPECT_TRUE(p.Matches("/"));
  EXPECT_FALSE(p.Matches("/metrics"));
  EXPECT_FALSE(p.Matches("//"));
}

TEST(AlwaysAllowPathsTest, EmptyListMatchesNothing) {
  AlwaysAllowPaths p = MustParse({});
  EXPECT_FALSE(p.Matches("/"));
  EXPECT_FALSE(p.Matches("/healthz"));
}

TEST(AlwaysAllowPathsTest, StarBeforeTheEndIsAnError) {
  for (const auto& [entry, shown] : std::vector<std::pair<std::string, std::string>>{
           {"/debug*/pprof", "debug*/pprof"}, {"/metrics**", "metrics**"}, {"**", "**"}}) {
    auto p = AlwaysAllowPaths::Parse({"/healthz", entry});
    ASSERT_FALSE(p.ok()) << entry;
    EXPECT_EQ(p.error().message, "only trailing * allowed in \"" + shown + "\"");
  }
}

}  // namespace
}  // namespace kcm::server
