// ByteChannel: the body bytes of one streamed transfer (a watch, a streamed LIST) on their way
// from the loop, where libcurl's write callback offers them through internal::Answer, to the one
// thread that reads them (docs/design/client-transport.md, "Byte channel and backpressure"). It
// holds at most kMaxHeld bytes: a full channel pauses its transfer, and the reader that empties it
// has the loop resume it.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "pkg/util/futex_condition.h"

namespace kcm::client::internal {

class ByteChannel {
 public:
  // At this many bytes held, an offer pauses the transfer; libcurl keeps the refused chunk (at
  // most CURLOPT_BUFFERSIZE, 16 KiB) and offers it again after the resume, so a channel holds at
  // most kMaxHeld + 16 KiB.
  static constexpr std::size_t kMaxHeld = std::size_t{1} << 20;

  // The head of a 2xx answer, as its first body byte found it.
  struct Head {
    int status = 0;
    std::string content_type;
    std::string retry_after;
  };

  ByteChannel() = default;
  ByteChannel(const ByteChannel&) = delete;
  ByteChannel& operator=(const ByteChannel&) = delete;

  // Loop thread. Before the first offer of a 2xx answer's body.
  void Begin(Head head);
  // The body's next bytes: false when the channel already holds kMaxHeld or more, and the
  // transfer is to pause (CURL_WRITEFUNC_PAUSE) until the reader took them. Bytes offered to a
  // closed channel are dropped. The reader is woken only when the channel goes from empty to not.
  bool Offer(std::string_view data);
  // The transfer ended (completed, failed or canceled); after the bytes held, the reader sees it.
  void End();
  // Whether the transfer is paused by this channel and not yet resumed: its socket, which libcurl
  // drops from its set meanwhile, is not an idle connection. Loop thread only.
  bool paused_on_loop() const { return paused_on_loop_; }
  void Resumed() { paused_on_loop_ = false; }

  // Reader thread.
  struct Taken {
    std::size_t bytes = 0;  // appended to *out
    bool resume = false;    // the transfer was paused and is drained: post its resume
    bool ended = false;     // nothing held and the transfer ended
    bool closed = false;    // Close() was called
  };
  // Appends every byte held to *out; with none, blocks until some arrive, the transfer ends or
  // the channel is closed.
  Taken Take(std::string* out);
  Head head() const;
  // Any thread: a Take blocked or to come returns `closed` at once; what is held is dropped.
  void Close();

 private:
  mutable std::mutex mu_;
  FutexCondition ready_;
  std::string held_;     // guarded by mu_
  Head head_;            // guarded by mu_
  bool paused_ = false;  // guarded by mu_: an offer was refused and no resume asked for since
  bool ended_ = false;   // guarded by mu_
  bool closed_ = false;  // guarded by mu_
  bool paused_on_loop_ = false;  // loop thread only
};

}  // namespace kcm::client::internal
