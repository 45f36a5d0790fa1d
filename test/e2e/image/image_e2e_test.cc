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
#include <memory>
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
    work_ = fs::path(testing::TempDir()) /
            ("kcm-image-e2e-" + std::to_string(::getpid()) + "-" +
             testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(work_);
  }
  void TearDown() override {
    if (!HasFailure()) {
      std::error_code ec;
      fs::remove_all(work_, ec);
    }
  }

  // A bound token (TokenRequest API) for a ServiceAccount.
  std::string CreateToken(const std::string& ns, const std::string& sa) {
    auto r = kEnv->Kubectl({"-n", ns, "create", "token", sa, "--duration=1h"});
    EXPECT_TRUE(r.ok()) << r.Describe();
    auto lines = Lines(r.out);
    return lines.empty() ? "" : lines[0];
  }

  // The "pod": the image's entrypoint with the manifest's args, in-cluster with `token` mounted
  // as the kubelet projects it. The manifest's --bind-address/--secure-port (0.0.0.0:10257 in the
  // pod's own network namespace) become loopback and `port`: the test shares the host's network.
  std::unique_ptr<testenv::DaemonProcess> StartPod(const Manifest& manifest,
                                                   const std::string& token, int port) {
    const testenv::TestbedInfo& tb = kEnv->info();
    const fs::path sa_dir = work_ / "serviceaccount";
    fs::create_directories(sa_dir);
    WriteFile(sa_dir / "token", token);
    fs::copy_file(tb.ca_file, sa_dir / "ca.crt", fs::copy_options::overwrite_existing);
    WriteFile(sa_dir / "namespace", kNamespace);
    // The projected volume is world-readable by default (mode 0644): the non-root user reads it.
    const auto r = fs::perms::others_read | fs::perms::group_read;
    const auto x = fs::perms::others_exec | fs::perms::group_exec;
    fs::permissions(work_, x, fs::perm_options::add);
    fs::permissions(sa_dir, r | x, fs::perm_options::add);
    for (const char* f : {"token", "ca.crt", "namespace"}) {
      fs::permissions(sa_dir / f, r, fs::perm_options::add);
    }
    std::vector<std::string> args;
    for (const auto& a : manifest.args) {
      if (a.rfind("--bind-address=", 0) == 0) {
        args.push_back("--bind-address=127.0.0.1");
      } else if (a.rfind("--secure-port=", 0) == 0) {
        args.push_back("--secure-port=" + std::to_string(port));
      } else {
        args.push_back(a);
      }
    }
    // The container's environment: the image's Env plus what the kubelet adds for the API server
    // Service (here the testbed's API server on loopback, whose certificate names 127.0.0.1).
    const std::string api_port = tb.server.substr(tb.server.rfind(':') + 1);
    std::vector<std::string> argv = {"/usr/bin/env", "-i"};
    argv.insert(argv.end(), config_.env.begin(), config_.env.end());
    argv.push_back(std::string("HOSTNAME=") + kPodHostname);
    argv.push_back("KUBERNETES_SERVICE_HOST=127.0.0.1");
    argv.push_back("KUBERNETES_SERVICE_PORT=" + api_port);
    argv.push_back(testenv::SourceDir() + "/test/e2e/image/run-rootfs.sh");
    argv.push_back(rootfs_.string());
    argv.push_back(sa_dir.string());
    argv.push_back(kPodHostname);
    argv.push_back(manifest.run_as);
    argv.insert(argv.end(), config_.entrypoint.begin(), config_.entrypoint.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<testenv::DaemonProcess>(
        argv, (work_ / "kube-controller-manager.log").string());
  }

  fs::path image_dir_;
  fs::path rootfs_;
  fs::path work_;
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
  // The manifest runs the pod as the image's user (runAsNonRoot needs a numeric non-root id),
  // in-cluster (no kubeconfig flag) and sets the serving port the test moves.
  KCM_REQUIRE_TESTBED();
  auto manifest = LoadManifest();
  ASSERT_TRUE(manifest.ok()) << manifest.error().ToString();
  EXPECT_EQ(manifest->run_as, config_.user);
  bool secure_port = false;
  for (const auto& a : manifest->args) {
    EXPECT_NE(a.rfind("--kubeconfig", 0), 0u) << a;
    EXPECT_NE(a.rfind("--master", 0), 0u) << a;
    secure_port = secure_port || a.rfind("--secure-port=", 0) == 0;
  }
  EXPECT_TRUE(secure_port);
}

// The daemon's identity is the mounted token's: a valid token of a ServiceAccount without the
// shipped RBAC gets 403 naming that ServiceAccount, and the daemon never becomes ready.
TEST_F(ImageE2E, TokenOfAnotherServiceAccountIsForbidden) {
  KCM_REQUIRE_TESTBED();
  auto manifest = LoadManifest();
  ASSERT_TRUE(manifest.ok()) << manifest.error().ToString();
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "image-e2e-nobody"}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"-n", "image-e2e-nobody", "create", "serviceaccount", "nobody"}).ok());
  const std::string token = CreateToken("image-e2e-nobody", "nobody");
  ASSERT_FALSE(token.empty());
  const int port = testenv::FreeLoopbackPort();
  auto pod = StartPod(*manifest, token, port);
  ASSERT_TRUE(pod->started());
  ASSERT_TRUE(Eventually(
      [&] {
        return pod->Log().find("User \"system:serviceaccount:image-e2e-nobody:nobody\"") !=
               std::string::npos;
      },
      60s))
      << pod->Log();
  EXPECT_NE(pod->Log().find("403 Forbidden"), std::string::npos) << pod->Log();
  EXPECT_EQ(testenv::HttpsGet(port, "/healthz").first, 200);  // Alive, serving,
  EXPECT_NE(testenv::HttpsGet(port, "/readyz").first, 200);   // but not leading.
  EXPECT_EQ(LeaseHolder(), "");
  EXPECT_NE(pod->StopWith(SIGTERM), -1) << pod->Log();
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
  const std::string sa_token = CreateToken(kNamespace, kServiceAccount);
  ASSERT_FALSE(sa_token.empty());
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

  const int port = testenv::FreeLoopbackPort();
  auto pod = StartPod(*manifest, sa_token, port);
  ASSERT_TRUE(pod->started());
  ASSERT_TRUE(Eventually([&] { return testenv::HttpsGet(port, "/readyz").first == 200; }, 90s))
      << pod->Log();
  // The process is the image's program, chrooted, as the manifest's user.
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pod->pid()) + "/root"), rootfs_);
  EXPECT_EQ(StatusField(pod->pid(), "Uid"), "65532");
  EXPECT_EQ(StatusField(pod->pid(), "Gid"), "65532");
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
  ASSERT_TRUE(status.ok()) << status.Describe() << pod->Log();
  ASSERT_TRUE(kEnv->Kubectl({"-n", "image-e2e", "set", "image", "deployment/web",
                             "pause=registry.k8s.io/pause:3.9"})
                  .ok());
  status = kEnv->Kubectl(
      {"-n", "image-e2e", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << pod->Log();
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

  EXPECT_EQ(pod->StopWith(SIGTERM), 0) << pod->Log();
  EXPECT_EQ(LeaseHolder(), "");  // Released on graceful shutdown.
}

}  // namespace
}  // namespace kcm::e2e
