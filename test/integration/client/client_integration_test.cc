// pkg/client against a real kube-apiserver: CRUD, optimistic-concurrency conflicts, NotFound,
// 410 on a too-old watch, pagination over 2,000 objects, and the admin kubeconfig.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/pager.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/client/resource_client.h"
#include "pkg/informers/resource_lister_watcher.h"
#include "test/integration/framework/testenv.h"

namespace kcm::client {
namespace {

auto* const kEnv = testenv::RegisterTestbed({});

const GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const GroupVersionResource kNamespaces{"", "v1", "namespaces"};

std::shared_ptr<RestClient> AdminClient() {
  RestConfig config{.host = kEnv->info().server,
                    .ca_file = kEnv->info().ca_file,
                    .bearer_token = kEnv->info().admin_token,
                    .qps = -1};
  auto c = RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

// A namespace per test so tests can share the API server.
std::string CreateNamespace(const std::shared_ptr<RestClient>& client, const std::string& prefix) {
  const std::string ns = prefix + "-" + std::to_string(::getpid());
  ResourceClient namespaces(client, kNamespaces, false);
  auto r = namespaces.Create(
      "", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  EXPECT_TRUE(r.ok() || errors::IsAlreadyExists(r.error())) << r.error().ToString();
  return ns;
}

std::string ConfigMap(const std::string& name, const std::string& value,
                      const std::string& rv = "") {
  std::string meta = R"("name":")" + name + "\"";
  if (!rv.empty()) meta += R"(,"resourceVersion":")" + rv + "\"";
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)" + meta + R"(},"data":{"k":")" +
         value + "\"}}";
}

// The value of the first "<field>":"..." in a JSON text (enough for metadata fields here).
std::string Field(const std::string& json, const std::string& field) {
  const std::string key = "\"" + field + "\":\"";
  const auto at = json.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return json.substr(start, json.find('"', start) - start);
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ClientIntegration, CrudConflictAndNotFound) {
  KCM_REQUIRE_TESTBED();
  auto client = AdminClient();
  const std::string ns = CreateNamespace(client, "client-crud");
  ResourceClient cms(client, kConfigMaps, true);

  auto created = cms.Create(ns, ConfigMap("cm", "v1"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  const std::string rv1 = Field(*created, "resourceVersion");
  ASSERT_FALSE(rv1.empty());

  auto dup = cms.Create(ns, ConfigMap("cm", "v1"));
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(errors::IsAlreadyExists(dup.error())) << dup.error().ToString();

  auto got = cms.Get(ns, "cm");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(Field(*got, "k"), "v1");

  auto updated = cms.Update(ns, "cm", ConfigMap("cm", "v2", rv1));
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_NE(Field(*updated, "resourceVersion"), rv1);

  // Optimistic concurrency: the stale resourceVersion is refused with 409 Conflict.
  auto stale = cms.Update(ns, "cm", ConfigMap("cm", "v3", rv1));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, 409);
  EXPECT_TRUE(errors::IsConflict(stale.error())) << stale.error().ToString();

  auto patched = cms.Patch(ns, "cm", PatchType::kMergePatch, R"({"data":{"k":"v4"}})");
  ASSERT_TRUE(patched.ok()) << patched.error().ToString();
  EXPECT_EQ(Field(*patched, "k"), "v4");

  auto wrong_uid = cms.Delete(ns, "cm", {.precondition_uid = "not-the-uid"});
  ASSERT_FALSE(wrong_uid.ok());
  EXPECT_TRUE(errors::IsConflict(wrong_uid.error())) << wrong_uid.error().ToString();

  ASSERT_TRUE(cms.Delete(ns, "cm", {.propagation_policy = PropagationPolicy::kBackground}).ok());
  auto gone = cms.Get(ns, "cm");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, 404);
  EXPECT_TRUE(errors::IsNotFound(gone.error()));
}

TEST(ClientIntegration, WatchSeesEventsAndTooOldVersionIsExpired) {
  KCM_REQUIRE_TESTBED();
  auto client = AdminClient();
  const std::string ns = CreateNamespace(client, "client-watch");
  ResourceClient cms(client, kConfigMaps, true);

  auto list = cms.List(ns, {});
  ASSERT_TRUE(list.ok());
  auto w = cms.Watch(ns, {.resource_version = Field(*list, "resourceVersion"),
                          .allow_watch_bookmarks = true,
                          .timeout_seconds = 30});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_TRUE(cms.Create(ns, ConfigMap("watched", "x")).ok());
  auto frame = (*w)->Next();
  ASSERT_TRUE(frame.ok()) << frame.error().ToString();
  ASSERT_TRUE(frame->has_value());
  EXPECT_EQ(Field(**frame, "type"), "ADDED");
  EXPECT_EQ(Field(**frame, "name"), "watched");
  (*w)->Stop();

  // Compact etcd up to now (the API server does this every 5 minutes anyway), so resourceVersion
  // 1 is gone. Events are watched from etcd directly (their watch cache is off by default; the
  // ConfigMap cache of a fresh server would still hold revision 1). The server answers with an
  // ERROR event (or a 410 on the request itself); either way it is Expired.
  auto now = cms.List(ns, {});
  ASSERT_TRUE(now.ok());
  auto compact = kEnv->Etcdctl({"compact", Field(*now, "resourceVersion")});
  ASSERT_TRUE(compact.ok() || compact.err.find("compacted") != std::string::npos)
      << compact.Describe();
  ResourceClient events(client, {"", "v1", "events"}, true);
  auto old = events.Watch(ns, {.resource_version = "1"});
  ASSERT_TRUE(old.ok());
  auto first = (*old)->Next();
  if (first.ok()) {
    ASSERT_TRUE(first->has_value());
    const std::string& f = **first;
    EXPECT_EQ(Field(f, "type"), "ERROR");
    const auto obj = f.find("\"object\":");
    ASSERT_NE(obj, std::string::npos);
    auto status = DecodeStatus(f.substr(obj + 9, f.rfind('}') - obj - 9));
    ASSERT_TRUE(status.has_value()) << f;
    EXPECT_EQ(status->code, 410);
    EXPECT_TRUE(errors::IsResourceExpired(*status) || errors::IsGone(*status)) << f;
  } else {
    EXPECT_EQ(first.error().code, 410);
  }
}

TEST(ClientIntegration, PaginatesOverTwoThousandObjects) {
  KCM_REQUIRE_TESTBED();
  auto client = AdminClient();
  const std::string ns = CreateNamespace(client, "client-pages");
  ResourceClient cms(client, kConfigMaps, true);
  constexpr int kObjects = 2000;
  constexpr int kWorkers = 4;
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      for (int i = w; i < kObjects; i += kWorkers) {
        auto r = cms.Create(ns, ConfigMap("cm-" + std::to_string(i), "v"));
        if (!r.ok() && !errors::IsAlreadyExists(r.error())) ++failures;
      }
    });
  }
  for (auto& t : workers) t.join();
  ASSERT_EQ(failures.load(), 0);

  // The one pager (cache::ListAllPages) over the production ListerWatcher: 4 pages of 500.
  informers::ResourceListerWatcher lw(std::make_shared<ResourceClient>(client, kConfigMaps, true),
                                      ns, api::GenericCodec());
  auto all = cache::ListAllPages(lw, {}, cache::kDefaultPageSize, {});
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  EXPECT_TRUE(all->paginated);
  EXPECT_EQ(all->items.size(), static_cast<std::size_t>(kObjects));

  auto one = cms.List(ns, {.limit = 7});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Count(*one, "\"uid\":"), 7u);
  EXPECT_FALSE(Field(*one, "continue").empty());
}

TEST(ClientIntegration, AdminKubeconfigLoads) {
  KCM_REQUIRE_TESTBED();
  auto config = BuildConfigFromFlags("", kEnv->info().admin_kubeconfig);
  ASSERT_TRUE(config.ok()) << config.error().ToString();
  EXPECT_EQ(config->host, kEnv->info().server);
  auto client = RestClient::Create(*config);
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  ResourceClient namespaces(*client, kNamespaces, false);
  auto r = namespaces.Get("", "default");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(Field(*r, "name"), "default");
}

}  // namespace
}  // namespace kcm::client
