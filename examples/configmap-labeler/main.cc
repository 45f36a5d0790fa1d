// configmap-labeler: the example controller as a program.
//   configmap-labeler --kubeconfig=$KUBECONFIG --ns=demo --label=team=payments
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <iostream>

#include "configmap_labeler.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/util/signals.h"

DEFINE_string(kubeconfig, "", "Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config).");
DEFINE_string(ns, "default", "Namespace whose ConfigMaps are labelled.");
DEFINE_string(label, "example.kcm.io/managed=true", "The label to keep, key=value.");

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  size_t eq = FLAGS_label.find('=');
  if (eq == std::string::npos || eq == 0) {
    std::cerr << "error: --label must be key=value\n";
    return 1;
  }
  auto config = kcm::client::BuildConfigFromFlags("", FLAGS_kubeconfig);
  if (!config.ok()) {
    std::cerr << "error: " << config.error().ToString() << "\n";
    return 1;
  }
  auto client = kcm::client::RestClient::Create(*config);
  if (!client.ok()) {
    std::cerr << "error: " << client.error().ToString() << "\n";
    return 1;
  }

  const std::stop_token stop = kcm::SetupSignalHandler();

  kcm::informers::SharedInformerFactoryOptions fo;
  fo.namespace_ = FLAGS_ns;
  kcm::informers::SharedInformerFactory factory(*client, std::chrono::hours(10), fo);
  kcm::examples::ConfigMapLabelerOptions options;
  options.label_key = FLAGS_label.substr(0, eq);
  options.label_value = FLAGS_label.substr(eq + 1);
  auto controller = kcm::examples::NewConfigMapLabeler(options, factory, *client);
  if (!controller.ok()) {
    std::cerr << "error: " << controller.error().ToString() << "\n";
    return 1;
  }
  factory.Start(stop);
  kcm::Status s = (*controller)->Start(stop);
  factory.Shutdown();
  if (!s.ok()) {
    LOG(ERROR) << s.error().ToString();
    return 1;
  }
  return 0;
}
