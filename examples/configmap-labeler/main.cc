// configmap-labeler: the example controller as a program.
//   configmap-labeler --kubeconfig=$KUBECONFIG --ns=demo --label=team=payments
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>

#include <iostream>
#include <thread>

#include "configmap_labeler.h"
#include "pkg/client/kubeconfig.h"

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

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::stop_source stop;
  std::thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stop.request_stop();
  }).detach();

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
  factory.Start(stop.get_token());
  kcm::Status s = (*controller)->Start(stop.get_token());
  factory.Shutdown();
  if (!s.ok()) {
    LOG(ERROR) << s.error().ToString();
    return 1;
  }
  return 0;
}
