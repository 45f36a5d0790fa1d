// HostLookup: literal addresses answered at once, names through glibc's resolver threads with the
// answer announced on a descriptor, and lookups given up before their answer freeing themselves
// (the sanitizer jobs run this too: a leak, race or use after free of the shared state shows
// there).
#include "pkg/client/host_lookup.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "pkg/client/transport.h"

namespace kcm::client {
namespace {

// Whether fd becomes readable within timeout_ms.
bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

TEST(HostLookupTest, LiteralAddressIsAnsweredAtOnce) {
  auto lookup = HostLookup::Start("127.0.0.1", "6443");
  ASSERT_TRUE(lookup.ok()) << lookup.error().ToString();
  EXPECT_TRUE(Readable(lookup->ready_fd(), 0));
  Result<AddrInfoList> addrs = lookup->Take();
  ASSERT_TRUE(addrs.ok()) << addrs.error().ToString();
  ASSERT_EQ((*addrs)->ai_family, AF_INET);
  const auto* in = reinterpret_cast<const sockaddr_in*>((*addrs)->ai_addr);
  EXPECT_EQ(ntohs(in->sin_port), 6443);
  EXPECT_EQ(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);

  auto v6 = HostLookup::Start("::1", "443");
  ASSERT_TRUE(v6.ok());
  EXPECT_TRUE(Readable(v6->ready_fd(), 0));
  Result<AddrInfoList> v6_addrs = v6->Take();
  ASSERT_TRUE(v6_addrs.ok());
  EXPECT_EQ((*v6_addrs)->ai_family, AF_INET6);
}

TEST(HostLookupTest, NameIsResolvedAndAnnounced) {
  auto lookup = HostLookup::Start("localhost", "80");
  ASSERT_TRUE(lookup.ok()) << lookup.error().ToString();
  ASSERT_TRUE(Readable(lookup->ready_fd(), 10'000));
  Result<AddrInfoList> addrs = lookup->Take();
  ASSERT_TRUE(addrs.ok()) << addrs.error().ToString();
  EXPECT_NE(addrs->get(), nullptr);
  // Taken once.
  EXPECT_FALSE(lookup->Take().ok());
}

TEST(HostLookupTest, UnknownNameIsAnError) {
  // .invalid never resolves (RFC 6761); the bound covers a resolver that retries before it says so.
  auto lookup = HostLookup::Start("no-such-host.invalid", "443");
  ASSERT_TRUE(lookup.ok()) << lookup.error().ToString();
  ASSERT_TRUE(Readable(lookup->ready_fd(), 60'000));
  Result<AddrInfoList> addrs = lookup->Take();
  ASSERT_FALSE(addrs.ok());
  EXPECT_FALSE(addrs.error().message.empty());
}

TEST(HostLookupTest, LookupsGivenUpFreeThemselves) {
  // Given up at every stage: before its thread ran, while it resolves, after it answered.
  for (int i = 0; i < 200; ++i) {
    auto lookup = HostLookup::Start("localhost", std::to_string(1000 + i));
    ASSERT_TRUE(lookup.ok()) << lookup.error().ToString();
  }
  auto after = HostLookup::Start("localhost", "80");
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(Readable(after->ready_fd(), 10'000));
  EXPECT_TRUE(after->Take().ok());
}

// A name server that never answers, seen only by a child process (its own mount namespace, a
// resolv.conf naming a silent UDP socket, the resolver told to wait 30 s twice): the request ends
// by its 1 s connect timeout with cause kTimedOut, and a stop request ends one with no timeout,
// instead of both waiting out the resolver's retries (a minute), as Go's net.Dialer.DialContext
// resolves within the dial's deadline and context. Needs root for the namespace.
TEST(HostLookupTest, SilentNameServerDoesNotOutlastTheConnectTimeoutOrAStop) {
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
