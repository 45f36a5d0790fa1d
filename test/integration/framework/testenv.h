// kcm_testenv: gives integration tests a running control plane (etcd, kube-apiserver,
// kube-scheduler, KWOK nodes, optionally the upstream kube-controller-manager) from hack/testbed,
// and exposes the facts a test needs to talk to it. It only starts things and reports facts; it
// does not depend on the project's REST client.
//
// Where the testbed comes from (decided once per test process, in TestbedEnvironment::SetUp):
//  1. KCM_TESTBED_DIR_EXISTING=<state dir> names a running testbed (`hack/testbed up` with
//     KCM_TESTBED_DIR=<state dir>): it is used if it fits the options (enough nodes, and the
//     upstream KCM running exactly when the options ask for it). ctest sets this for tests
//     attached with kcm_use_shared_testbed() (see testbed.cmake), so one testbed serves a run.
//  2. Otherwise the environment runs `hack/testbed up` into a fresh temp dir and `down` at the
//     end. A watchdog in the testbed stops it if this process dies without TearDown.
// KCM_TESTBED_KEEP=1 keeps a private testbed running after the tests (its dir is printed);
// a private testbed's dir (logs) is also kept, stopped, when a test failed.
//
// Thread-safety: after SetUp the facts are immutable; RunCommand and Kubectl may be called from
// any thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kcm::testenv {

// Everything hack/testbed writes into <state dir>/testbed.env, typed.
struct TestbedInfo {
  std::string dir;               // state dir (logs/<component>.log are there)
  std::string server;            // https://127.0.0.1:<port>
  std::string ca_file;           // CA that signed the API server's serving certificate
  std::string admin_token;       // user "admin", group system:masters
  std::string kcm_token;         // user kcm_user, rights from RBAC only
  std::string kcm_user;          // "system:kcm-test"
  std::string admin_kubeconfig;  // kubeconfig for admin
  std::string kcm_kubeconfig;    // kubeconfig for the controller-manager user
  std::string etcd_endpoint;     // http://127.0.0.1:<port> (plain HTTP, loopback only)
  std::string etcdctl;           // path of the matching etcdctl binary
  std::string kubectl;           // path of the matching kubectl binary
  std::string bin_dir;           // dir with all control-plane binaries
  int nodes = 0;                 // number of KWOK nodes
  bool upstream_kcm = false;     // upstream kube-controller-manager running
};

// Parses <dir>/testbed.env. Returns false and sets *error if it is missing or incomplete.
bool LoadTestbedInfo(const std::string& dir, TestbedInfo* info, std::string* error);

struct CommandResult {
  int exit_code = -1;  // the exit status; 128+signal if killed; -1 if it could not start
  bool timed_out = false;
  std::string out;  // stdout
  std::string err;  // stderr
  bool ok() const { return exit_code == 0 && !timed_out; }
  std::string Describe() const;  // one line for failure messages: code, stderr tail
};

// Runs argv (no shell) with extra environment variables, feeding `input` on stdin, and captures
// stdout and stderr. The child runs in its own process group, which is killed at the timeout.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::seconds timeout = std::chrono::seconds(60),
                         const std::string& input = "",
                         const std::map<std::string, std::string>& env = {});

// The repository root (compiled in; KCM_SOURCE_DIR overrides it at run time).
std::string SourceDir();

struct TestbedOptions {
  int nodes = 3;
  bool upstream_kcm = false;  // also run upstream kube-controller-manager (deployment,replicaset)
  std::chrono::seconds up_timeout{1800};  // covers a first-time control-plane build
};

class TestbedEnvironment : public ::testing::Environment {
 public:
  explicit TestbedEnvironment(TestbedOptions options) : options_(options) {}

  void SetUp() override;
  void TearDown() override;

  // True once SetUp found or started a healthy testbed.
  bool ready() const { return ready_; }
  // Why SetUp failed (empty when ready).
  const std::string& setup_error() const { return setup_error_; }
  const TestbedInfo& info() const { return info_; }
  // True if this process started the testbed (it will stop it in TearDown).
  bool owned() const { return owned_; }

  // kubectl with the admin kubeconfig: Kubectl({"get", "nodes", "-o", "name"}).
  CommandResult Kubectl(const std::vector<std::string>& args,
                        std::chrono::seconds timeout = std::chrono::seconds(60),
                        const std::string& input = "") const;
  // etcdctl against the testbed's etcd: Etcdctl({"compact", "123"}).
  CommandResult Etcdctl(const std::vector<std::string>& args,
                        std::chrono::seconds timeout = std::chrono::seconds(60)) const;

 private:
  bool Fits(const TestbedInfo& info) const;

  TestbedOptions options_;
  TestbedInfo info_;
  bool ready_ = false;
  bool owned_ = false;
  std::string setup_error_;
};

// Registers the process-wide environment with GoogleTest (call once, e.g. from a namespace-scope
// initializer: `static auto* const kEnv = kcm::testenv::RegisterTestbed({.upstream_kcm = true});`).
TestbedEnvironment* RegisterTestbed(TestbedOptions options = {});
// The registered environment; aborts if RegisterTestbed was not called.
TestbedEnvironment& Testbed();

}  // namespace kcm::testenv

// In a test body: stop the test with a clear message if the testbed is not up.
#define KCM_REQUIRE_TESTBED()                    \
  ASSERT_TRUE(::kcm::testenv::Testbed().ready()) \
      << "control plane not available: " << ::kcm::testenv::Testbed().setup_error()
