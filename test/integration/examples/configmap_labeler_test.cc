// The example controller (examples/configmap-labeler) against a real kube-apiserver: every
// ConfigMap of its namespace gets the label, and keeps it when a user removes it (the user guide
// docs/writing-a-controller.md walks through this example).
#include "examples/configmap-labeler/configmap_labeler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::examples {
namespace {

using namespace std::chrono_literals;

auto* const kEnv = testenv::RegisterTestbed({});

std::shared_ptr<client::RestClient> AdminClient() {
  client::RestConfig config{.host = kEnv->info().server,
                            .ca_file = kEnv->info().ca_file,
                            .bearer_token = kEnv->info().admin_token,
                            .qps = -1};
  auto c = client::RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

// The value of label `key` on ConfigMap ns/name, via kubectl ("" when absent).
std::string LabelOf(const std::string& ns, const std::string& name, const std::string& key) {
  std::string escaped = key;
  for (size_t i = 0; (i = escaped.find('.', i)) != std::string::npos; i += 2) {
    escaped.insert(i, "\\");
  }
  auto r = kEnv->Kubectl(
      {"-n", ns, "get", "configmap", name, "-o", "jsonpath={.metadata.labels." + escaped + "}"});
  return r.ok() ? r.out : "";
}

bool Eventually(const std::function<bool()>& done) {
  return testenv::Eventually(done, std::chrono::seconds(30));
}

TEST(ConfigMapLabelerTest, LabelsEveryConfigMapAndRestoresRemovedLabels) {
  KCM_REQUIRE_TESTBED();
  const std::string ns = "labeler-" + std::to_string(::getpid());
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(
      kEnv->Kubectl({"-n", ns, "create", "configmap", "before", "--from-literal=a=b"}).ok());

  auto client = AdminClient();
  ASSERT_NE(client, nullptr);
  informers::SharedInformerFactoryOptions fo;
  fo.namespace_ = ns;
  informers::SharedInformerFactory factory(client, 10h, fo);
  ConfigMapLabelerOptions options;
  options.label_key = "example.kcm.io/team";
  options.label_value = "payments";
  auto controller = NewConfigMapLabeler(options, factory, client);
  ASSERT_TRUE(controller.ok()) << controller.error().ToString();
  std::stop_source stop;
  factory.Start(stop.get_token());
  Status result;
  std::thread runner([&] { result = (*controller)->Start(stop.get_token()); });

  // A ConfigMap that existed before the controller started, and one created after.
  EXPECT_TRUE(Eventually([&] { return LabelOf(ns, "before", options.label_key) == "payments"; }));
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "create", "configmap", "after", "--from-literal=c=d"}).ok());
  EXPECT_TRUE(Eventually([&] { return LabelOf(ns, "after", options.label_key) == "payments"; }));

  // A user removes the label; the controller puts it back. Other labels are left alone.
  ASSERT_TRUE(
      kEnv->Kubectl({"-n", ns, "label", "configmap", "after", options.label_key + "-", "x=y"})
          .ok());
  EXPECT_TRUE(Eventually([&] { return LabelOf(ns, "after", options.label_key) == "payments"; }));
  EXPECT_EQ(LabelOf(ns, "after", "x"), "y");

  stop.request_stop();
  runner.join();
  factory.Shutdown();
  EXPECT_TRUE(result.ok()) << result.error().ToString();
  (void)kEnv->Kubectl({"delete", "namespace", ns, "--wait=false"});
}

}  // namespace
}  // namespace kcm::examples
