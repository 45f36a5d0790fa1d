// Name lookups inside the transport: libcurl resolves on a thread of its own (its threaded
// resolver), so a resolver that never answers cannot hold a request past its connect timeout or a
// stop request.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stop_token>
#include <string>
#include <thread>

#include "pkg/client/transport.h"

namespace kcm::client {
namespace {

// A name server that never answers, seen only by a child process (its own mount namespace, a
// resolv.conf naming a silent UDP socket, the resolver told to wait 30 s twice): the request ends
// by its 1 s connect timeout with cause kTimedOut, and a stop request ends one with no timeout,
// instead of both waiting out the resolver's retries (a minute), as Go's net.Dialer.DialContext
// resolves within the dial's deadline and context. Needs root for the namespace.
TEST(NameLookupTest, SilentNameServerDoesNotOutlastTheConnectTimeoutOrAStop) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Exit codes: 0 passed, 2 no namespace (skip), 3.. a failed step.
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      ::_exit(2);
    }
    // glibc's resolv.conf takes no port: the silent socket is on 53 of a loopback address.
    const int silent = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in dns{};
    dns.sin_family = AF_INET;
    dns.sin_port = htons(53);
    dns.sin_addr.s_addr = htonl(0x7f000000 | 0x2a0035);  // 127.42.0.53
    if (silent < 0 || ::bind(silent, reinterpret_cast<sockaddr*>(&dns), sizeof dns) != 0)
      ::_exit(2);
    char conf[] = "/tmp/kcm-resolv-XXXXXX";
    const int fd = ::mkstemp(conf);
    const std::string text = "nameserver 127.42.0.53\noptions timeout:30 attempts:2\n";
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::mount(conf, "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
      ::_exit(2);
    }
    ::close(fd);
    ::unlink(conf);

    auto transport = Transport::Create(RestConfig{});
    if (!transport.ok()) ::_exit(4);
    HttpRequest request;
    request.url = "https://kcm-silent-dns.test:6443/api";
    request.connect_timeout = std::chrono::milliseconds(1000);
    const auto t0 = std::chrono::steady_clock::now();
    Result<HttpResponse> timed_out = (*transport)->RoundTrip(request);
    const auto took = std::chrono::steady_clock::now() - t0;
    if (timed_out.ok() || timed_out.error().transport != TransportCause::kTimedOut) ::_exit(5);
    // Well under the resolver's 30 s per try; not a timing claim beyond "not the resolver's".
    if (took > std::chrono::seconds(20)) ::_exit(6);

    request.connect_timeout = std::chrono::milliseconds(0);
    std::stop_source stop;
    std::thread stopper([&stop] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      stop.request_stop();
    });
    const auto t1 = std::chrono::steady_clock::now();
    Result<HttpResponse> stopped = (*transport)->RoundTrip(request, stop.get_token());
    const auto took_stop = std::chrono::steady_clock::now() - t1;
    stopper.join();
    if (stopped.ok()) ::_exit(7);
    if (took_stop > std::chrono::seconds(20)) ::_exit(8);
    ::_exit(0);
  }
  int status = 0;
  // The child's own bounds are 20 s each; past a minute it hangs in the resolver.
  for (int i = 0; i < 600 && ::waitpid(child, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (::waitpid(child, &status, WNOHANG) == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "the request waited out the silent name server";
  }
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "no private mount namespace (needs root)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "failed step (see the child's exit codes)";
}

}  // namespace
}  // namespace kcm::client
