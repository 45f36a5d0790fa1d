#include "pkg/client/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using testing::WriteFileOrDie;

constexpr char kFileA[] = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
    certificate-authority: certs/ca.crt
- name: only-a
  cluster:
    server: https://only-a.example
contexts:
- name: a
  context: {cluster: shared, user: alice, namespace: team-a}
users:
- name: alice
  user:
    token: token-a
)";

constexpr char kFileB[] = R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
    insecure-skip-tls-verify: true
- name: only-b
  cluster:
    server: https://only-b.example
contexts:
- name: b
  context: {cluster: only-b, user: alice}
users:
- name: alice
  user:
    tokenFile: /var/token-b
    client-certificate: b.crt
)";

class KubeconfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    std::filesystem::create_directories(dir_ + "/a");
    std::filesystem::create_directories(dir_ + "/b");
    a_ = dir_ + "/a/config";
    b_ = dir_ + "/b/config";
    WriteFileOrDie(a_, kFileA);
    WriteFileOrDie(b_, kFileB);
  }
  TempDir tmp_;
  std::string dir_, a_, b_;
};

// 1.1 an explicit path loads only that file.
TEST_F(KubeconfigTest, ExplicitPathLoadsOnlyThatFile) {
  KubeconfigLoadingRules rules{.explicit_path = b_, .precedence = {a_}};
  auto cfg = LoadKubeconfig(rules);
  ASSERT_TRUE(cfg.ok()) << cfg.error().ToString();
  EXPECT_EQ(cfg->files, std::vector<std::string>{b_});
  EXPECT_EQ(cfg->clusters.count("only-a"), 0u);
  EXPECT_EQ(cfg->current_context, "b");
}

// 1.1 a missing explicit file is an error naming it.
TEST_F(KubeconfigTest, ExplicitMissingFileIsError) {
  auto cfg = LoadKubeconfig({.explicit_path = dir_ + "/nope"});
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr(dir_ + "/nope"));
}

// 1.1 the precedence list: first file to set a value or map key wins, named entries whole.
TEST_F(KubeconfigTest, MergeFirstWinsEntriesWhole) {
  auto cfg = LoadKubeconfig({.precedence = {a_, b_}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().ToString();
  EXPECT_EQ(cfg->current_context, "a");
  EXPECT_EQ(cfg->clusters.at("shared").server, "https://a.example:6443");
  EXPECT_FALSE(cfg->clusters.at("shared").insecure_skip_tls_verify);  // not merged field-wise
  EXPECT_EQ(cfg->clusters.count("only-b"), 1u);
  EXPECT_EQ(cfg->contexts.count("b"), 1u);
  EXPECT_EQ(cfg->users.at("alice").token, "token-a");
  EXPECT_EQ(cfg->users.at("alice").token_file, "");  // alice from b is not mixed in
}

// 1.1 duplicates removed, missing files ignored.
TEST_F(KubeconfigTest, DuplicatesRemovedMissingIgnored) {
  auto cfg = LoadKubeconfig({.precedence = {b_, dir_ + "/missing", dir_ + "/b/../b/config", a_}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().ToString();
  EXPECT_EQ(cfg->files, (std::vector<std::string>{b_, a_}));
  EXPECT_EQ(cfg->current_context, "b");
}

// 1.1 relative paths resolve against the file that holds them.
TEST_F(KubeconfigTest, RelativePathsResolveAgainstTheirFile) {
  auto cfg = LoadKubeconfig({.precedence = {a_, b_}});
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->clusters.at("shared").certificate_authority, dir_ + "/a/certs/ca.crt");
  auto only_b = LoadKubeconfigFile(b_);
  ASSERT_TRUE(only_b.ok());
  EXPECT_EQ(only_b->users.at("alice").client_certificate, dir_ + "/b/b.crt");
  EXPECT_EQ(only_b->users.at("alice").token_file, "/var/token-b");  // absolute stays
}

// 1.1 KUBECONFIG list, else ~/.kube/config.
TEST_F(KubeconfigTest, RulesFromEnvironment) {
  ::setenv("KUBECONFIG", (a_ + "::" + b_).c_str(), 1);
  auto rules = KubeconfigLoadingRules::FromEnvironment();
  EXPECT_EQ(rules.precedence, (std::vector<std::string>{a_, b_}));
  ::unsetenv("KUBECONFIG");
  ::setenv("HOME", dir_.c_str(), 1);
  rules = KubeconfigLoadingRules::FromEnvironment("/explicit");
  EXPECT_EQ(rules.explicit_path, "/explicit");
  EXPECT_EQ(rules.precedence, std::vector<std::string>{dir_ + "/.kube/config"});
}

// 1.1 / 1.2 current-context selects cluster and user; context and master overrides.
TEST_F(KubeconfigTest, ContextResolutionAndOverrides) {
  auto cfg = LoadKubeconfig({.precedence = {a_, b_}});
  ASSERT_TRUE(cfg.ok());
  auto rc = RestConfigFromKubeconfig(*cfg);
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  EXPECT_EQ(rc->host, "https://a.example:6443");
  EXPECT_EQ(rc->bearer_token, "token-a");
  EXPECT_EQ(rc->ca_file, dir_ + "/a/certs/ca.crt");
  EXPECT_EQ(rc->default_namespace, "team-a");

  rc = RestConfigFromKubeconfig(*cfg, {.context = "b"});
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->host, "https://only-b.example");

  rc = RestConfigFromKubeconfig(*cfg, {.master = "https://override:443"});
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->host, "https://override:443");
  EXPECT_EQ(rc->bearer_token, "token-a");

  rc = RestConfigFromKubeconfig(*cfg, {.context = "nope"});
  ASSERT_FALSE(rc.ok());
  EXPECT_THAT(rc.error().message, HasSubstr("contexts[nope]"));
}

// 1.2 inline *-data fields are base64-decoded; bad base64 names file and field.
TEST_F(KubeconfigTest, InlineDataDecodedAndValidated) {
  const std::string path = dir_ + "/inline";
  WriteFileOrDie(path, R"(current-context: c
clusters:
- name: c
  cluster:
    server: https://c
    certificate-authority-data: LS0tLS1CRUdJTiBDQS0tLS0tCg==
contexts:
- name: c
  context: {cluster: c, user: u}
users:
- name: u
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
)");
  auto rc = RestConfigFromKubeconfig(*LoadKubeconfigFile(path));
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  EXPECT_EQ(rc->ca_data, "-----BEGIN CA-----\n");
  EXPECT_EQ(rc->cert_data, "cert");
  EXPECT_EQ(rc->key_data, "key");

  WriteFileOrDie(path, "users:\n- name: u\n  user:\n    client-key-data: '%%%'\n");
  auto bad = LoadKubeconfigFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr(path));
  EXPECT_THAT(bad.error().message, HasSubstr("users[u].client-key-data"));
}

// A cluster's disable-compression reaches RestConfig::disable_compression, as clientcmd's
// ClientConfig copies Cluster.DisableCompression into rest.Config; anything but true or false is
// refused with the file and field named.
TEST_F(KubeconfigTest, DisableCompressionFromTheCluster) {
  const std::string path = dir_ + "/compression";
  WriteFileOrDie(path, R"(current-context: c
clusters:
- name: c
  cluster:
    server: https://c
    disable-compression: true
contexts:
- name: c
  context: {cluster: c}
)");
  auto rc = RestConfigFromKubeconfig(*LoadKubeconfigFile(path));
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  EXPECT_TRUE(rc->disable_compression);

  auto plain = RestConfigFromKubeconfig(*LoadKubeconfig({.precedence = {a_}}));
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  EXPECT_FALSE(plain->disable_compression);

  WriteFileOrDie(path, "clusters:\n- name: c\n  cluster:\n    disable-compression: maybe\n");
  auto bad = LoadKubeconfigFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr(path));
  EXPECT_THAT(bad.error().message, HasSubstr("clusters[c].disable-compression"));
}

// 1.1 with no kubeconfig anywhere and no master, in-cluster config is used.
TEST_F(KubeconfigTest, NoKubeconfigFallsBackToInCluster) {
  ::unsetenv("KUBECONFIG");
  ::setenv("HOME", dir_.c_str(), 1);  // no .kube/config there
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto rc = BuildConfigFromFlags("", "");
  ASSERT_FALSE(rc.ok());
  EXPECT_THAT(rc.error().message, HasSubstr("KUBERNETES_SERVICE_HOST"));
  rc = BuildConfigFromFlags("https://m:6443", "");
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->host, "https://m:6443");
}

// Found by fuzz/kubeconfig: a byte that is not UTF-8 (here 0xC1 inside a token) was passed into
// the config as is, so the token could not be written back (a YAML writer makes it U+FFFD);
// clientcmd refuses such a file, and so do we, naming it.
TEST(KubeconfigParseTest, TextThatIsNotUtf8IsRefused) {
  for (const std::string& bad :
       {std::string("users:\n- name: u\n  user: {token: ab\xC1z}\n"),
        std::string("current-context: \xE2\x82\n"), std::string("current-context: \xED\xA0\x80\n"),
        std::string("current-context: \xC0\xAF\n"),
        std::string("current-context: \xF4\x90\x80\x80\n")}) {
    auto config = ParseKubeconfig(bad, "/etc/kubernetes/bad.conf");
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().reason, "InvalidKubeconfig");
    EXPECT_THAT(config.error().message, HasSubstr("/etc/kubernetes/bad.conf"));
    EXPECT_THAT(config.error().message, HasSubstr("not valid UTF-8"));
  }
  // Text in any script is fine.
  auto config = ParseKubeconfig("current-context: \xE6\x97\xA5\xF0\x9F\x98\x80\n", "/k.conf");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->current_context, "\xE6\x97\xA5\xF0\x9F\x98\x80");
}

// Found by fuzz/kubeconfig: a NUL in a plain scalar ("current-context: \0_x") came out of yaml-cpp
// as a stray byte that is not UTF-8, and other control characters went into the strings as they
// were. YAML allows neither outside a quoted escape; clientcmd refuses the file, and so do we.
TEST(KubeconfigParseTest, ControlCharactersAreRefused) {
  for (const std::string& bad :
       {std::string("current-context: \0_x\n", 21),
        std::string("current-context: a\x01"
                    "b\n"),
        std::string("users:\n- name: u\x16v\n  user: {token: t}\n"),
        std::string("current-context: a\x7F\n"), std::string("current-context: \xEF\xBF\xBE\n")}) {
    auto config = ParseKubeconfig(bad, "/etc/kubernetes/bad.conf");
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_EQ(config.error().reason, "InvalidKubeconfig");
    EXPECT_THAT(config.error().message, HasSubstr("control character U+"));
  }
  // The same characters spelled as escapes in a double-quoted string are YAML, and kept.
  auto config = ParseKubeconfig("current-context: \"a\\x01\\0b\"\n", "/k.conf");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->current_context, std::string("a\x01\0b", 4));
  // Half of a surrogate pair is no character, spelled as an escape or in a UTF-16 file.
  config = ParseKubeconfig("current-context: \"\\uD800\"\n", "/k.conf");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().reason, "InvalidKubeconfig");
  std::string utf16 = "\xFF\xFE";
  for (char c : std::string("current-context: ")) utf16 += {c, '\0'};
  utf16 += std::string("\x00\xD8\n\x00", 4);
  config = ParseKubeconfig(utf16, "/k.conf");
  ASSERT_FALSE(config.ok()) << config->current_context.size();
  EXPECT_EQ(config.error().reason, "InvalidKubeconfig");
  EXPECT_THAT(config.error().message, HasSubstr("not valid UTF-16"));
}

// UTF-16 text (either byte order, a byte order mark first), as Windows tools write kubeconfigs,
// is read like UTF-8 text and checked the same way: a NUL in it is refused as in UTF-8 (yaml-cpp,
// decoding UTF-16 itself, had turned "a\0b" into "a\x08 ").
TEST(KubeconfigParseTest, Utf16TextIsReadAndCheckedLikeUtf8) {
  auto utf16 = [](const std::u16string& text, bool big_endian) {
    std::string out = big_endian ? "\xFE\xFF" : "\xFF\xFE";
    for (char16_t u : text) {
      const char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
      out += big_endian ? std::string{hi, lo} : std::string{lo, hi};
    }
    return out;
  };
  for (bool big_endian : {false, true}) {
    // U+65E5 and U+1F600 (a surrogate pair in UTF-16).
    auto config =
        ParseKubeconfig(utf16(u"current-context: \u65E5\U0001F600\n", big_endian), "/k.conf");
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->current_context, "\xE6\x97\xA5\xF0\x9F\x98\x80");
    config = ParseKubeconfig(utf16(std::u16string(u"current-context: a\0b\n", 21), big_endian),
                             "/k.conf");
    ASSERT_FALSE(config.ok());
    EXPECT_THAT(config.error().message, HasSubstr("control character U+0000"));
  }
  auto odd = ParseKubeconfig(std::string("\xFF\xFEk\0:", 5), "/k.conf");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(odd.error().message, HasSubstr("not valid UTF-16"));
}

}  // namespace
}  // namespace kcm::client
