// HostLookup: a host name resolved without holding the caller past its own limits. getaddrinfo
// blocks for as long as the system resolver retries (resolv.conf's timeout × attempts per server,
// more with search domains), which neither a connect timeout nor a stop request could cut short;
// net/http's dialer bounds the lookup by the dial's deadline and context. Here the lookup runs on
// a thread of its own and its answer is announced on a descriptor the transport polls with its
// other limits (Transport's Dial); a lookup given up is left to finish on that thread, which then
// frees it. Literal addresses need no lookup and are answered at once. (Not glibc's
// getaddrinfo_a: its threads are started where ThreadSanitizer cannot see them, and they crash
// under it.) Lookups are rare: one per new connection to the API server.
#pragma once

#include <netdb.h>

#include <memory>
#include <mutex>
#include <string>

#include "pkg/util/result.h"

namespace kcm::client {

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

class HostLookup {
 public:
  // Starts resolving host:port (SOCK_STREAM). An IP literal is resolved before this returns.
  static Result<HostLookup> Start(const std::string& host, const std::string& port);
  HostLookup(HostLookup&&) = default;
  HostLookup& operator=(HostLookup&&) = default;

  // Readable once the answer is in (poll for POLLIN); stays readable.
  int ready_fd() const;
  // The addresses, or the resolver's error (an Error whose message is gai_strerror's). Only once
  // ready_fd is readable; once.
  Result<AddrInfoList> Take();

  // What the lookup's thread and its caller share; the last of them to let go frees it.
  struct State {
    State(std::string h, std::string p) : host(std::move(h)), port(std::move(p)) {}
    ~State();
    const std::string host;
    const std::string port;
    int event_fd = -1;
    std::mutex mu;
    bool done = false;
    int rc = 0;  // getaddrinfo's
    addrinfo* result = nullptr;
  };

 private:
  explicit HostLookup(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace kcm::client
