// The container image (Dockerfile, built by hack/build-image.sh) run as the shipped manifests run
// it, on a private testbed, in in-cluster mode: no kubeconfig, only a service-account token from
// the TokenRequest API for the ServiceAccount that deploy/rbac.yaml binds, mounted at the standard
// path, and KUBERNETES_SERVICE_HOST/PORT. There is no container runtime on the test machines, so
// the image's exported root filesystem runs through run-rootfs.sh (mount namespace, read-only
// root, chroot, the manifest's non-root user). KCM_IMAGE_DIR names the export (ctest's image_build
// fixture makes it): rootfs/ and image.json (`buildah inspect`; the OCI config is .OCIv1.config).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pkg/api/json.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using testenv::Eventually;
namespace fs = std::filesystem;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 2});

constexpr char kServiceAccount[] = "kube-controller-manager-cpp";
constexpr char kNamespace[] = "kube-system";
constexpr char kPodHostname[] = "kube-controller-manager-cpp-image-e2e";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// What the test needs from the OCI image config.
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> env;  // KEY=value
  std::string user;
};

Result<ImageConfig> LoadImageConfig(const fs::path& file) {
  auto doc = api::json::Parse(ReadFile(file));
  if (!doc.ok()) return doc.error();
  const api::json::Value* oci = doc->Find("OCIv1");
  const api::json::Value* config = oci != nullptr ? oci->Find("config") : nullptr;
  if (config == nullptr) return Error::Local("NoConfig", file.string() + " has no .OCIv1.config");
  ImageConfig c;
  auto strings = [&](const char* key, std::vector<std::string>* out) {
    if (const auto* v = config->Find(key); v != nullptr && v->is_array()) {
      for (const auto& s : v->as_array()) {
        if (s.is_string()) out->push_back(s.as_string());
      }
    }
  };
  strings("Entrypoint", &c.entrypoint);
  strings("Env", &c.env);
  if (const auto* u = config->Find("User"); u != nullptr && u->is_string()) {
    c.user = u->as_string();
  }
  return c;
}

// The Deployment's container args and pod securityContext from deploy/kube-controller-manager.yaml
// (read with kubectl, so the test sees what a cluster would).
struct Manifest {
  std::vector<std::string> args;
  std::string run_as;  // "<runAsUser>:<runAsGroup>"
};

Result<Manifest> LoadManifest() {
  const std::string file = testenv::SourceDir() + "/deploy/kube-controller-manager.yaml";
  auto r =
      kEnv->Kubectl({"create", "--dry-run=client", "-f", file, "-o",
                     // kubectl applies the template to each object of the file in turn.
                     "go-template={{if eq .kind \"Deployment\"}}{{with .spec.template.spec}}"
                     "{{.securityContext.runAsUser}}:{{.securityContext.runAsGroup}}{{\"\\n\"}}"
                     "{{range (index .containers 0).args}}{{.}}{{\"\\n\"}}{{end}}{{end}}{{end}}"});
  if (!r.ok()) return Error::Local("Kubectl", "kubectl: " + r.Describe());
  auto lines = Lines(r.out);
  if (lines.empty()) return Error::Local("NoDeployment", "no Deployment in " + file);
  Manifest m;
  m.run_as = lines[0];
  m.args.assign(lines.begin() + 1, lines.end());
  return m;
}

std::string LeaseHolder() {
  auto r = kEnv->Kubectl({"-n", kNamespace, "get", "lease", "kube-controller-manager-cpp", "-o",
                          "jsonpath={.spec.holderIdentity}"});
  return r.ok() ? r.out : "";
}

// "Uid:\t65532\t65532..." → the real uid (first field) of a /proc/<pid>/status line.
std::string StatusField(pid_t pid, const std::string& key) {
  std::istringstream in(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream fields(line.substr(key.size() + 1));
      std::string first;
      fields >> first;
      return first;
    }
  }
  return "";
}

class ImageE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("KCM_IMAGE_DIR");
    ASSERT_NE(dir, nullptr) << "KCM_IMAGE_DIR is not set (run through ctest -L image, whose "
                               "image_build fixture runs hack/build-image.sh --export-rootfs)";
    image_dir_ = dir;
    rootfs_ = image_dir_ / "rootfs";
    ASSERT_TRUE(fs::is_directory(rootfs_)) << rootfs_;
    auto config = LoadImageConfig(image_dir_ / "image.json");
    ASSERT_TRUE(config.ok()) << config.error().ToString();
    config_ = *config;
    ASSERT_EQ(::geteuid(), 0u) << "run-rootfs.sh needs root (mount namespaces, chroot)";
  }

  fs::path image_dir_;
  fs::path rootfs_;
  ImageConfig config_;
};

// The image is the runtime only: the entrypoint, its shared libraries, a non-root user, and no
// build toolchain or headers from the build stage.
TEST_F(ImageE2E, ImageIsMinimalAndNonRoot) {
  ASSERT_EQ(config_.entrypoint.size(), 1u);
  EXPECT_EQ(config_.entrypoint[0], "/usr/local/bin/kube-controller-manager");
  EXPECT_TRUE(fs::exists(rootfs_ / config_.entrypoint[0].substr(1)));
  EXPECT_EQ(config_.user, "65532:65532");
  for (const char* absent :
       {"usr/bin/g++", "usr/bin/cc", "usr/bin/cmake", "usr/include/curl", "usr/include/simdjson.h",
        "src", "usr/share/doc/libcurl4/changelog.gz", "var/lib/apt/lists/lock"}) {
    EXPECT_FALSE(fs::exists(rootfs_ / absent)) << absent << " is in the image";
  }
  // The manifest runs the pod as the image's user (runAsNonRoot needs a numeric non-root id).
  KCM_REQUIRE_TESTBED();
  auto manifest = LoadManifest();
  ASSERT_TRUE(manifest.ok()) << manifest.error().ToString();
  EXPECT_EQ(manifest->run_as, config_.user);
}

// In-cluster mode end to end: the shipped RBAC's service account, a bound token, the manifest's
// args; the daemon leads, rolls a Deployment out and updates it, serves /metrics behind delegated
// authentication, and stops gracefully on SIGTERM (releasing its Lease).
TEST_F(ImageE2E, InClusterWithServiceAccountTokenRollsOutADeployment) {
  KCM_REQUIRE_TESTBED();
  const testenv::TestbedInfo& tb = kEnv->info();
  auto manifest = LoadManifest();
  ASSERT_TRUE(manifest.ok()) << manifest.error().ToString();

  // A bound token for the ServiceAccount deploy/rbac.yaml creates and binds (hack/testbed applied
  // it); the API server signs it with --service-account-signing-key-file.
  auto token =
      kEnv->Kubectl({"-n", kNamespace, "create", "token", kServiceAccount, "--duration=1h"});
  ASSERT_TRUE(token.ok()) << token.Describe();
  const std::string sa_token = Lines(token.out).at(0);
  // The token is the service account, limited to the shipped RBAC.
  auto can_i = [&](const std::vector<std::string>& what) {
    std::vector<std::string> argv = {tb.kubectl,
                                     "--kubeconfig=/dev/null",
                                     "--server=" + tb.server,
                                     "--certificate-authority=" + tb.ca_file,
                                     "--token=" + sa_token,
                                     "auth",
                                     "can-i"};
    argv.insert(argv.end(), what.begin(), what.end());
    return testenv::RunCommand(argv, 30s).out.rfind("yes", 0) == 0;
  };
  EXPECT_TRUE(can_i({"create", "replicasets.apps", "--all-namespaces"}));
  EXPECT_TRUE(can_i({"update", "deployments.apps/status", "--all-namespaces"}));
  EXPECT_FALSE(can_i({"create", "deployments.apps", "--all-namespaces"}));
  EXPECT_FALSE(can_i({"get", "secrets", "--all-namespaces"}));

  // /var/run/secrets/kubernetes.io/serviceaccount as the kubelet projects it.
  const fs::path work =
      fs::path(testing::TempDir()) / ("kcm-image-e2e-" + std::to_string(::getpid()));
  const fs::path sa_dir = work / "serviceaccount";
  fs::create_directories(sa_dir);
  WriteFile(sa_dir / "token", sa_token);
  fs::copy_file(tb.ca_file, sa_dir / "ca.crt", fs::copy_options::overwrite_existing);
  WriteFile(sa_dir / "namespace", kNamespace);
  // The projected volume is world-readable by default (mode 0644): the non-root user reads it.
  fs::permissions(work, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  fs::permissions(sa_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);

  // The manifest's args, except where the pod's own network namespace would be needed: the test
  // shares the host's, so it serves on loopback and on a free port instead of 0.0.0.0:10257.
  const int port = testenv::FreeLoopbackPort();
  std::vector<std::string> args;
  bool saw_secure_port = false;
  for (const auto& a : manifest->args) {
    ASSERT_EQ(a.rfind("--kubeconfig", 0), std::string::npos) << "the manifest runs in-cluster";
    if (a.rfind("--bind-address=", 0) == 0) {
      args.push_back("--bind-address=127.0.0.1");
    } else if (a.rfind("--secure-port=", 0) == 0) {
      args.push_back("--secure-port=" + std::to_string(port));
      saw_secure_port = true;
    } else {
      args.push_back(a);
    }
  }
  ASSERT_TRUE(saw_secure_port) << "the manifest no longer sets --secure-port";

  // The container's environment: the image's Env plus what the kubelet adds for the API server
  // Service (here the testbed's API server on loopback, whose certificate names 127.0.0.1).
  const std::string host_port = tb.server.substr(tb.server.rfind(':') + 1);
  std::vector<std::string> argv = {"/usr/bin/env", "-i"};
  argv.insert(argv.end(), config_.env.begin(), config_.env.end());
  argv.push_back(std::string("HOSTNAME=") + kPodHostname);
  argv.push_back("KUBERNETES_SERVICE_HOST=127.0.0.1");
  argv.push_back("KUBERNETES_SERVICE_PORT=" + host_port);
  argv.push_back(testenv::SourceDir() + "/test/e2e/image/run-rootfs.sh");
  argv.push_back(rootfs_.string());
  argv.push_back(sa_dir.string());
  argv.push_back(kPodHostname);
  argv.push_back(manifest->run_as);
  argv.insert(argv.end(), config_.entrypoint.begin(), config_.entrypoint.end());
  argv.insert(argv.end(), args.begin(), args.end());
  testenv::DaemonProcess pod(argv, (work / "kube-controller-manager.log").string());
  ASSERT_TRUE(pod.started());

  ASSERT_TRUE(Eventually([&] { return testenv::HttpsGet(port, "/readyz").first == 200; }, 90s))
      << pod.Log();
  // The process is the image's program, as the manifest's user.
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pod.pid()) + "/root"), rootfs_);
  EXPECT_EQ(StatusField(pod.pid(), "Uid"), "65532");
  EXPECT_EQ(StatusField(pod.pid(), "Gid"), "65532");
  // It leads under the manifest's Lease, as this "pod" (identity = hostname_uuid).
  EXPECT_TRUE(
      Eventually([&] { return LeaseHolder().rfind(std::string(kPodHostname) + "_", 0) == 0; }, 30s))
      << LeaseHolder();

  // /metrics: delegated authentication and authorization (TokenReview, SubjectAccessReview) with
  // the service account's own rights.
  EXPECT_EQ(testenv::HttpsGet(port, "/metrics").first, 401);
  EXPECT_EQ(testenv::HttpsGet(port, "/metrics", tb.admin_token).first, 200);

  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "image-e2e"}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"-n", "image-e2e", "create", "deployment", "web",
                             "--image=registry.k8s.io/pause:3.10", "--replicas=3"})
                  .ok());
  auto status = kEnv->Kubectl(
      {"-n", "image-e2e", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << pod.Log();
  ASSERT_TRUE(kEnv->Kubectl({"-n", "image-e2e", "set", "image", "deployment/web",
                             "pause=registry.k8s.io/pause:3.9"})
                  .ok());
  status = kEnv->Kubectl(
      {"-n", "image-e2e", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << pod.Log();
  // Two ReplicaSets: the new one holds all three ready pods, the old one none.
  auto rs = kEnv->Kubectl({"-n", "image-e2e", "get", "replicasets", "-o",
                           "go-template={{range .items}}{{(index .spec.template.spec.containers "
                           "0).image}}={{.status.readyReplicas}}/{{.spec.replicas}}{{\"\\n\"}}"
                           "{{end}}"});
  ASSERT_TRUE(rs.ok()) << rs.Describe();
  auto rs_lines = Lines(rs.out);
  std::sort(rs_lines.begin(), rs_lines.end());
  EXPECT_EQ(rs_lines, (std::vector<std::string>{"registry.k8s.io/pause:3.10=<no value>/0",
                                                "registry.k8s.io/pause:3.9=3/3"}))
      << rs.out;

  EXPECT_EQ(pod.StopWith(SIGTERM), 0) << pod.Log();
  EXPECT_EQ(LeaseHolder(), "");  // Released on graceful shutdown.
  std::error_code ec;
  fs::remove_all(work, ec);
}

}  // namespace
}  // namespace kcm::e2e
