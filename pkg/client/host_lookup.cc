#include "pkg/client/host_lookup.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>

namespace kcm::client {
namespace {

void Announce(int event_fd) {
  const std::uint64_t one = 1;
  // An eventfd write of 1 cannot block or fail short of a counter overflow.
  [[maybe_unused]] const ssize_t n = ::write(event_fd, &one, sizeof one);
}

}  // namespace

HostLookup::State::~State() {
  if (result != nullptr) freeaddrinfo(result);
  if (event_fd >= 0) ::close(event_fd);
}

Result<HostLookup> HostLookup::Start(const std::string& host, const std::string& port) {
  auto state = std::make_shared<State>(host, port);
  state->event_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state->event_fd < 0) {
    return Error::Local("ResolveFailed", std::string("eventfd: ") + std::strerror(errno));
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;

  // A literal address: no resolver, no thread.
  addrinfo numeric = hints;
  numeric.ai_flags = AI_NUMERICHOST;
  if (::getaddrinfo(host.c_str(), port.c_str(), &numeric, &state->result) == 0) {
    state->done = true;
    Announce(state->event_fd);
    return HostLookup(std::move(state));
  }
  state->result = nullptr;

  try {
    std::thread([state, hints] {
      addrinfo* result = nullptr;
      const int rc = ::getaddrinfo(state->host.c_str(), state->port.c_str(), &hints, &result);
      std::lock_guard lock(state->mu);
      state->rc = rc;
      state->result = rc == 0 ? result : nullptr;
      state->done = true;
      Announce(state->event_fd);
    }).detach();
  } catch (const std::system_error& e) {
    return Error::Local("ResolveFailed", std::string("no thread for the lookup: ") + e.what());
  }
  return HostLookup(std::move(state));
}

int HostLookup::ready_fd() const {
  return state_->event_fd;
}

Result<AddrInfoList> HostLookup::Take() {
  std::lock_guard lock(state_->mu);
  if (!state_->done) {
    return Error::Local("ResolveFailed", "lookup of " + state_->host + " not finished");
  }
  if (state_->rc != 0 || state_->result == nullptr) {
    return Error::Local("ResolveFailed",
                        state_->rc != 0 ? gai_strerror(state_->rc) : "already taken");
  }
  AddrInfoList out(state_->result);
  state_->result = nullptr;
  return out;
}

}  // namespace kcm::client
