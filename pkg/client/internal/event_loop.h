// EventLoop and RequestMulti: the transport's request transfers driven by one loop thread per
// process over libcurl's multi interface with our own epoll (docs/design/client-transport.md,
// "The loop"): every request, watch (http_stream.cc) and streamed LIST (transport.cc) of every
// Transport runs on it; a streamed transfer's bytes cross to its reader in a ByteChannel.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pkg/client/internal/byte_channel.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/util/futex_flag.h"

namespace kcm::client::internal {

class RequestMulti;

// The one `kcm-curl-loop` thread: epoll over every RequestMulti's sockets, an eventfd to wake it,
// and ops (start, cancel, add or remove a multi) posted by any thread and run on the loop between
// libcurl calls only (curl_multi_add_handle and curl_multi_remove_handle are not allowed inside
// libcurl's callbacks). Nothing on the loop blocks or logs: a stderr pipe that fills would stall
// every transfer.
class EventLoop {
 public:
  // The process's loop, made by the first caller; the last holder's release stops and joins it,
  // so Transports made in turn (tests) leave no thread behind.
  static std::shared_ptr<EventLoop> Acquire();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Runs `op` on the loop thread, after the libcurl call in progress. Never blocks on the loop:
  // the eventfd is written only when the loop flagged itself asleep.
  void Post(std::function<void()> op);
  bool OnLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // Loop thread only, from RequestMulti's libcurl callbacks.
  void SocketOpened(int fd, RequestMulti* multi);
  void SocketClosed(int fd);
  // CURLMOPT_SOCKETFUNCTION's `what` for `fd`: watched for it, or, for CURL_POLL_REMOVE of a
  // connection still open (gone idle in the connection cache), for EPOLLIN | EPOLLRDHUP; a
  // connection whose transfer its reader paused (`paused`) is not idle, and is not watched until
  // libcurl asks again on the resume.
  void WantSocket(int fd, int what, RequestMulti* multi, bool paused = false);
  void AddMulti(RequestMulti* multi);
  void RemoveMulti(RequestMulti* multi);

  struct Private {
    explicit Private() = default;
  };
  explicit EventLoop(Private);

 private:
  struct Socket {
    RequestMulti* multi = nullptr;
    std::uint32_t events = 0;  // what epoll watches; 0 = not registered
    bool opened = false;       // opened through SocketOpened (a connection of ours)
    bool idle = false;         // an idle connection, watched for unasked bytes or its close
    bool retired = false;      // shut down by the loop; libcurl's liveness check drops it
  };

  void Run();
  void RunOps();
  int NextTimeoutMs() const;
  void OnEvent(int fd, std::uint32_t events);
  void Watch(int fd, Socket& s, std::uint32_t events);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::mutex mu_;
  std::vector<std::function<void()>> ops_;  // guarded by mu_
  bool asleep_ = false;                     // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  // Loop thread only.
  std::vector<RequestMulti*> multis_;
  std::unordered_map<int, Socket> sockets_;
  std::thread thread_;
};

// An easy handle of a RequestMulti's pool, configured as every request's handle is
// (Transport::Impl::NewEasy) and kept between requests.
struct PooledEasy {
  EasyPtr easy;
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string* proxy = nullptr;  // what CURLOPT_PROXY is set to
};

// One request transfer: its handle, set up by the caller before Start, and how its end is told.
struct RequestTransfer {
  std::unique_ptr<PooledEasy> handle;
  // Run once on the loop when the transfer ended or was canceled, before `done` is raised. Must
  // not block (it may post ops: Start, Cancel).
  std::function<void(RequestTransfer&)> on_done;
  FutexFlag done;
  // Set on the loop before `done`: libcurl's result, or canceled (never started, or removed).
  CURLcode result = CURLE_OK;
  bool canceled = false;
  // A streamed transfer's channel (not owned, outlives the transfer): a paused transfer's socket
  // is told from an idle connection's by it.
  ByteChannel* channel = nullptr;

  // Loop thread only.
  enum class State { kNew, kWaiting, kRunning, kDone } state = State::kNew;
  bool cancel_requested = false;
};

// A multi handle of a Transport on the loop: its connection cache, its pool of easy handles, and
// at most `max_transfers` transfers in flight (more wait for a slot, in order). A Transport has
// two: its requests', capped at kMaxRequests, and its streams' (watches and streamed LISTs),
// uncapped, since a watch holds its transfer for minutes and must never hold a request's place
// (docs/design/client-transport.md, "What step 2 built").
class RequestMulti {
 public:
  static constexpr std::size_t kMaxRequests = 16;
  static constexpr std::size_t kUncapped = static_cast<std::size_t>(-1);
  using NewEasyFn = std::function<EasyPtr(char* errbuf)>;

  // Null when libcurl cannot make a multi handle.
  static std::unique_ptr<RequestMulti> Create(NewEasyFn new_easy,
                                              std::size_t max_transfers = kMaxRequests);
  // Removes the multi from the loop and waits for that (its connections close there). Not to be
  // called on the loop thread (nothing on it holds a Transport).
  ~RequestMulti();
  RequestMulti(const RequestMulti&) = delete;
  RequestMulti& operator=(const RequestMulti&) = delete;

  // A handle from the pool (a new one when it is empty); nullptr when libcurl cannot make one.
  std::unique_ptr<PooledEasy> TakeHandle();
  // Back to the pool once its transfer is done (kept while the pool holds fewer than
  // kMaxRequests).
  void ReturnHandle(std::unique_ptr<PooledEasy> handle);

  // Posts the start of `t` (its handle configured); its on_done and `done` follow on the loop.
  void Start(std::shared_ptr<RequestTransfer> t);
  // Posts its cancel: a transfer not yet ended ends as canceled (mid-transfer, its connection is
  // closed); one that ended is left as it is.
  void Cancel(std::shared_ptr<RequestTransfer> t);
  // Posts the resume of a transfer its channel paused (curl_easy_pause with CURLPAUSE_CONT, from
  // inside which libcurl may offer the bytes it kept); nothing for one that ended.
  void Resume(std::shared_ptr<RequestTransfer> t);

  const std::shared_ptr<EventLoop>& loop() const { return loop_; }

  // Loop thread only (EventLoop).
  void SocketAction(int fd, int ev_bitmask);
  std::optional<std::chrono::steady_clock::time_point> deadline() const { return deadline_; }
  // CURL_SOCKET_TIMEOUT when libcurl's timer (CURLMOPT_TIMERFUNCTION) is due at `now`.
  void RunTimerIfDue(std::chrono::steady_clock::time_point now);
  void Close();

  struct Private {
    explicit Private() = default;
  };
  RequestMulti(Private, NewEasyFn new_easy, std::shared_ptr<EventLoop> loop, MultiPtr multi,
               std::size_t max_transfers);

 private:
  static int OnSocket(CURL* easy, curl_socket_t fd, int what, void* user, void*);
  static int OnTimer(CURLM*, long timeout_ms, void* user);
  static curl_socket_t Open(void* user, curlsocktype, curl_sockaddr* address);
  static int CloseSocket(void* user, curl_socket_t fd);

  void DoStart(std::shared_ptr<RequestTransfer> t);
  void DoCancel(const std::shared_ptr<RequestTransfer>& t);
  void DoResume(const std::shared_ptr<RequestTransfer>& t);
  void Admit(std::shared_ptr<RequestTransfer> t);
  void ReadCompletions();
  void AdmitWaiting();
  void Finish(const std::shared_ptr<RequestTransfer>& t);

  NewEasyFn new_easy_;
  std::shared_ptr<EventLoop> loop_;
  MultiPtr multi_;
  const std::size_t max_transfers_;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<PooledEasy>> pool_;  // guarded by pool_mu_
  FutexFlag closed_;
  // Loop thread only.
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::unordered_map<CURL*, std::shared_ptr<RequestTransfer>> running_;
  std::deque<std::shared_ptr<RequestTransfer>> waiting_;
};

}  // namespace kcm::client::internal
