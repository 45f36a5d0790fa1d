#include "pkg/client/internal/event_loop.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>

#include "pkg/metrics/process.h"

namespace kcm::client::internal {
namespace {

constexpr std::uint32_t kIdleEvents = EPOLLIN | EPOLLRDHUP;
constexpr char kThreadName[] = "kcm-curl-loop";

}  // namespace

std::shared_ptr<EventLoop> EventLoop::Acquire() {
  // The one loop per process the design asks for (docs/design/client-transport.md, "Loop count
  // and ownership"): only a weak reference is kept here, so the loop lives while a Transport does.
  static std::mutex mu;
  static std::weak_ptr<EventLoop> current;
  std::lock_guard lock(mu);
  if (auto loop = current.lock()) return loop;
  auto loop = std::make_shared<EventLoop>(Private{});
  if (loop->epoll_fd_ < 0 || loop->wake_fd_ < 0) return nullptr;
  current = loop;
  return loop;
}

EventLoop::EventLoop(Private)
    : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (epoll_fd_ < 0 || wake_fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { Run(); });
  pthread_setname_np(thread_.native_handle(), kThreadName);
}

EventLoop::~EventLoop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void EventLoop::Post(std::function<void()> op) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    ops_.push_back(std::move(op));
    wake = asleep_;
    asleep_ = false;  // one write wakes it; later posts before it runs need none
  }
  if (wake) {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }
}

void EventLoop::Run() {
  // The loop's busy time, for /metrics: kcm_thread_cpu_seconds_total{thread="kcm-curl-loop"}
  // (read from /proc at each scrape, nothing counted here).
  metrics::ThreadCpu busy(kThreadName);
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  while (true) {
    int timeout = NextTimeoutMs();
    {
      std::lock_guard lock(mu_);
      if (stopping_) break;
      // Flagged asleep under the lock, after this last look at the queue: a post from now on
      // writes the eventfd.
      if (!ops_.empty()) {
        timeout = 0;
      } else {
        asleep_ = true;
      }
    }
    const int n = ::epoll_wait(epoll_fd_, events, kMaxEvents, timeout);
    {
      std::lock_guard lock(mu_);
      asleep_ = false;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        std::uint64_t count = 0;
        [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
      } else {
        OnEvent(events[i].data.fd, events[i].events);
      }
    }
    const auto now = std::chrono::steady_clock::now();
    for (RequestMulti* m : multis_) m->RunTimerIfDue(now);
    // Ops last: an idle connection that turned readable was retired above, before any transfer
    // this iteration starts could be given it.
    RunOps();
  }
}

void EventLoop::RunOps() {
  std::vector<std::function<void()>> ops;
  {
    std::lock_guard lock(mu_);
    ops.swap(ops_);
  }
  for (auto& op : ops) op();
}

int EventLoop::NextTimeoutMs() const {
  std::optional<std::chrono::steady_clock::time_point> next;
  for (const RequestMulti* m : multis_) {
    if (auto d = m->deadline(); d && (!next || *d < *next)) next = d;
  }
  if (!next) return -1;
  const auto wait =
      std::chrono::ceil<std::chrono::milliseconds>(*next - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(wait.count(), 0, INT_MAX));
}

void EventLoop::OnEvent(int fd, std::uint32_t events) {
  auto it = sockets_.find(fd);
  if (it == sockets_.end()) {
    // Not a socket libcurl asked for (any more): never handed to it.
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    return;
  }
  Socket& s = it->second;
  if (s.idle) {
    // An idle connection turned readable: an unasked answer or its close. It must not carry the
    // next request (RetireConnection in curl_handle.h says why); libcurl's liveness check then
    // sees it closed and connects anew.
    RetireConnection(fd);
    s.retired = true;
    Watch(fd, s, 0);
    return;
  }
  int flags = 0;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) flags |= CURL_CSELECT_IN;
  if (events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
  if (events & EPOLLERR) flags |= CURL_CSELECT_ERR;
  s.multi->SocketAction(fd, flags);  // may change sockets_: `s` is not used after it
}

void EventLoop::Watch(int fd, Socket& s, std::uint32_t events) {
  if (events == s.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (events == 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  } else if (s.events == 0) {
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0 && errno == EEXIST) {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
    }
  } else if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  }
  s.events = events;
}

void EventLoop::SocketOpened(int fd, RequestMulti* multi) {
  // A number reused from a socket closed behind our back: the kernel dropped it from epoll.
  sockets_[fd] = Socket{.multi = multi, .opened = true};
}

void EventLoop::SocketClosed(int fd) {
  auto it = sockets_.find(fd);
  if (it == sockets_.end()) return;
  Watch(fd, it->second, 0);
  sockets_.erase(it);
}

void EventLoop::WantSocket(int fd, int what, RequestMulti* multi, bool paused) {
  Socket& s = sockets_[fd];
  s.multi = multi;
  switch (what) {
    case CURL_POLL_IN:
    case CURL_POLL_OUT:
    case CURL_POLL_INOUT:
      s.idle = false;
      // Reading is watched with the idle mask (EPOLLRDHUP as well): a connection going from its
      // answer to idle and back to the next request's answer then keeps one epoll mask, and
      // costs no epoll_ctl per request (two before, measured with strace -c).
      Watch(fd, s,
            (what == CURL_POLL_OUT ? 0u : kIdleEvents) |
                (what == CURL_POLL_IN ? 0u : std::uint32_t{EPOLLOUT}));
      return;
    case CURL_POLL_REMOVE:
      if (paused) {
        // Paused by its reader (libcurl drops the socket from its set meanwhile): the server's
        // next bytes wait in the socket, where TCP flow control holds the rest.
        s.idle = false;
        Watch(fd, s, 0);
      } else if (s.opened) {
        // A connection of ours left libcurl's set while open: gone idle in the connection cache.
        s.idle = true;
        Watch(fd, s, s.retired ? 0 : kIdleEvents);
      } else {
        Watch(fd, s, 0);
        sockets_.erase(fd);
      }
      return;
    default:
      return;
  }
}

void EventLoop::AddMulti(RequestMulti* multi) {
  multis_.push_back(multi);
}

void EventLoop::RemoveMulti(RequestMulti* multi) {
  std::erase(multis_, multi);
  for (auto it = sockets_.begin(); it != sockets_.end();) {
    if (it->second.multi == multi) {
      Watch(it->first, it->second, 0);
      it = sockets_.erase(it);
    } else {
      ++it;
    }
  }
}

std::unique_ptr<RequestMulti> RequestMulti::Create(NewEasyFn new_easy, std::size_t max_transfers) {
  MultiPtr multi(curl_multi_init());
  if (!multi) return nullptr;
  auto loop = EventLoop::Acquire();
  if (!loop) return nullptr;
  auto m = std::make_unique<RequestMulti>(Private{}, std::move(new_easy), std::move(loop),
                                          std::move(multi), max_transfers);
  CURLM* h = m->multi_.get();
  curl_multi_setopt(h, CURLMOPT_SOCKETFUNCTION, &RequestMulti::OnSocket);
  curl_multi_setopt(h, CURLMOPT_SOCKETDATA, m.get());
  curl_multi_setopt(h, CURLMOPT_TIMERFUNCTION, &RequestMulti::OnTimer);
  curl_multi_setopt(h, CURLMOPT_TIMERDATA, m.get());
  // Idle connections kept: as many as transfers may run at once.
  curl_multi_setopt(h, CURLMOPT_MAXCONNECTS, static_cast<long>(kMaxRequests));
  RequestMulti* p = m.get();
  m->loop_->Post([p] { p->loop_->AddMulti(p); });
  return m;
}

RequestMulti::RequestMulti(Private, NewEasyFn new_easy, std::shared_ptr<EventLoop> loop,
                           MultiPtr multi, std::size_t max_transfers)
    : new_easy_(std::move(new_easy)),
      loop_(std::move(loop)),
      multi_(std::move(multi)),
      max_transfers_(max_transfers) {}

RequestMulti::~RequestMulti() {
  loop_->Post([this] { Close(); });
  closed_.Wait();
  // The pool's handles are in no multi: freed here, before the share they use goes.
  pool_.clear();
}

void RequestMulti::Close() {
  for (auto& [easy, t] : running_) {
    curl_multi_remove_handle(multi_.get(), easy);
    t->canceled = true;
    Finish(t);
  }
  running_.clear();
  for (auto& t : waiting_) {
    t->canceled = true;
    Finish(t);
  }
  waiting_.clear();
  multi_.reset();  // closes the cached connections, through CloseSocket
  loop_->RemoveMulti(this);
  closed_.Set();
}

std::unique_ptr<PooledEasy> RequestMulti::TakeHandle() {
  {
    std::lock_guard lock(pool_mu_);
    if (!pool_.empty()) {
      auto h = std::move(pool_.back());
      pool_.pop_back();
      return h;
    }
  }
  auto h = std::make_unique<PooledEasy>();
  h->easy = new_easy_(h->errbuf);
  if (!h->easy) return nullptr;
  CURL* e = h->easy.get();
  curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &RequestMulti::Open);
  curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, this);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &RequestMulti::CloseSocket);
  curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
  return h;
}

void RequestMulti::ReturnHandle(std::unique_ptr<PooledEasy> handle) {
  std::lock_guard lock(pool_mu_);
  if (pool_.size() < kMaxRequests) pool_.push_back(std::move(handle));
}

void RequestMulti::Start(std::shared_ptr<RequestTransfer> t) {
  loop_->Post([this, t = std::move(t)]() mutable { DoStart(std::move(t)); });
}

void RequestMulti::Cancel(std::shared_ptr<RequestTransfer> t) {
  loop_->Post([this, t = std::move(t)] { DoCancel(t); });
}

void RequestMulti::Resume(std::shared_ptr<RequestTransfer> t) {
  loop_->Post([this, t = std::move(t)] { DoResume(t); });
}

void RequestMulti::DoStart(std::shared_ptr<RequestTransfer> t) {
  if (t->cancel_requested) {
    t->canceled = true;
    Finish(t);
  } else if (running_.size() >= max_transfers_) {
    t->state = RequestTransfer::State::kWaiting;
    waiting_.push_back(std::move(t));
  } else {
    Admit(std::move(t));
  }
}

void RequestMulti::Admit(std::shared_ptr<RequestTransfer> t) {
  CURL* easy = t->handle->easy.get();
  if (curl_multi_add_handle(multi_.get(), easy) != CURLM_OK) {
    t->result = CURLE_FAILED_INIT;
    Finish(t);
    return;
  }
  // libcurl asks for a timeout of 0 through OnTimer: the next iteration starts the transfer.
  t->state = RequestTransfer::State::kRunning;
  running_.emplace(easy, std::move(t));
}

void RequestMulti::DoCancel(const std::shared_ptr<RequestTransfer>& t) {
  switch (t->state) {
    case RequestTransfer::State::kNew:
      t->cancel_requested = true;
      return;
    case RequestTransfer::State::kWaiting:
      std::erase(waiting_, t);
      break;
    case RequestTransfer::State::kRunning:
      // Mid-transfer, this closes the connection.
      curl_multi_remove_handle(multi_.get(), t->handle->easy.get());
      running_.erase(t->handle->easy.get());
      break;
    case RequestTransfer::State::kDone:
      return;
  }
  t->canceled = true;
  Finish(t);
  AdmitWaiting();
}

void RequestMulti::DoResume(const std::shared_ptr<RequestTransfer>& t) {
  if (t->state != RequestTransfer::State::kRunning) return;
  // Cleared first: the write callback, called from inside curl_easy_pause with the bytes libcurl
  // kept, may pause the transfer again.
  if (t->channel != nullptr) t->channel->Resumed();
  curl_easy_pause(t->handle->easy.get(), CURLPAUSE_CONT);
  ReadCompletions();
}

void RequestMulti::SocketAction(int fd, int ev_bitmask) {
  int running = 0;
  curl_multi_socket_action(multi_.get(), fd, ev_bitmask, &running);
  ReadCompletions();
}

void RequestMulti::RunTimerIfDue(std::chrono::steady_clock::time_point now) {
  if (!deadline_ || *deadline_ > now) return;
  deadline_.reset();
  SocketAction(CURL_SOCKET_TIMEOUT, 0);
}

void RequestMulti::ReadCompletions() {
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &queued)) {
    if (msg->msg != CURLMSG_DONE) continue;
    // Copied out: the message does not survive curl_multi_remove_handle.
    CURL* easy = msg->easy_handle;
    const CURLcode result = msg->data.result;
    auto it = running_.find(easy);
    if (it == running_.end()) continue;
    std::shared_ptr<RequestTransfer> t = std::move(it->second);
    running_.erase(it);
    curl_multi_remove_handle(multi_.get(), easy);  // after the end, the connection stays cached
    t->result = result;
    Finish(t);
  }
  AdmitWaiting();
}

void RequestMulti::AdmitWaiting() {
  while (running_.size() < max_transfers_ && !waiting_.empty()) {
    auto t = std::move(waiting_.front());
    waiting_.pop_front();
    Admit(std::move(t));
  }
}

void RequestMulti::Finish(const std::shared_ptr<RequestTransfer>& t) {
  t->state = RequestTransfer::State::kDone;
  if (t->on_done) t->on_done(*t);
  t->done.Set();  // the caller may take the handle back from here on
}

int RequestMulti::OnSocket(CURL* easy, curl_socket_t fd, int what, void* user, void*) {
  auto* m = static_cast<RequestMulti*>(user);
  bool paused = false;
  if (what == CURL_POLL_REMOVE) {
    auto it = m->running_.find(easy);
    paused = it != m->running_.end() && it->second->channel != nullptr &&
             it->second->channel->paused_on_loop();
  }
  m->loop_->WantSocket(fd, what, m, paused);
  return 0;
}

int RequestMulti::OnTimer(CURLM*, long timeout_ms, void* user) {
  auto* m = static_cast<RequestMulti*>(user);
  if (timeout_ms < 0) {
    m->deadline_.reset();
  } else {
    m->deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  }
  return 0;
}

curl_socket_t RequestMulti::Open(void* user, curlsocktype, curl_sockaddr* address) {
  auto* m = static_cast<RequestMulti*>(user);
  const curl_socket_t fd =
      ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  if (fd != CURL_SOCKET_BAD) m->loop_->SocketOpened(fd, m);
  return fd;
}

int RequestMulti::CloseSocket(void* user, curl_socket_t fd) {
  auto* m = static_cast<RequestMulti*>(user);
  if (m->loop_->OnLoopThread()) m->loop_->SocketClosed(fd);
  return ::close(fd);
}

}  // namespace kcm::client::internal
