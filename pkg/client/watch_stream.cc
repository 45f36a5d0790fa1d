#include "pkg/client/watch_stream.h"

#include "pkg/client/api_errors.h"
#include "pkg/client/json_padding.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/transport.h"

namespace kcm::client {
namespace {

// The read buffer is kept from read to read (one allocation per watch, not per read), but not
// the capacity a big burst gave it.
constexpr std::size_t kKeepReadCapacity = std::size_t{1} << 20;

Error DecodingError(const std::string& detail) {
  return Error{500,
               std::string(errors::reason::kClientWatchDecoding),
               "unable to decode an event from the watch stream: " + detail,
               {}};
}

}  // namespace

WatchStream::WatchStream(std::unique_ptr<HttpStream> stream,
                         std::function<void(int status)> on_status, std::size_t max_frame_bytes)
    : stream_(std::move(stream)),
      on_status_(std::move(on_status)),
      max_frame_bytes_(max_frame_bytes),
      scanner_(NewFrameScanner({}, max_frame_bytes)) {}

WatchStream::~WatchStream() = default;

void WatchStream::Stop() {
  stream_->Cancel();
}

Result<std::optional<std::string>> WatchStream::Next() {
  using Frame = std::optional<std::string>;
  if (done_) return Frame();
  while (true) {
    if (stream_->canceled()) {
      done_ = true;
      return Frame();
    }
    auto frame = scanner_->Next();
    if (!frame.ok()) {
      done_ = true;
      stream_->Cancel();  // read no more of a stream we are giving up on
      return frame.error();
    }
    if (frame->has_value()) return std::move(frame).value();

    std::string& chunk = read_buffer_;
    chunk.clear();
    if (chunk.capacity() > kKeepReadCapacity) std::string().swap(chunk);
    auto n = stream_->Read(&chunk);
    if (stream_->canceled()) {
      done_ = true;
      return Frame();
    }
    if (!status_checked_ && (!n.ok() || stream_->status() != 0)) {
      const int status = stream_->status();
      if (status != 0) {
        status_checked_ = true;
        if (on_status_) on_status_(status);
        // The framing follows the encoding the server chose for a negotiated Accept.
        protobuf_ = status >= 200 && status < 300 && IsProtobufContentType(stream_->content_type());
        if (protobuf_) scanner_ = NewFrameScanner(stream_->content_type(), max_frame_bytes_);
      }
      if (status < 200 || status >= 300) {
        done_ = true;
        if (!n.ok()) return n.error();
        // An error answer: the transport has read its body, within its bound.
        return DecodeApiError(status, stream_->error_body());
      }
    }
    if (!n.ok()) {
      done_ = true;
      // A connection broken (or timed out) inside a frame lost an event. Between frames nothing
      // was lost: the transport error goes up with its cause and the reflector re-watches from
      // the last resourceVersion (upstream's StreamWatcher ends such a watch quietly).
      if (scanner_->HasPartial()) {
        return DecodingError("stream broken inside a frame: " + n.error().ToString());
      }
      return n.error();
    }
    if (*n == 0) {
      done_ = true;
      if (scanner_->HasPartial()) return DecodingError("stream ended inside a frame");
      return Frame();
    }
    scanner_->Feed(chunk);
  }
}

}  // namespace kcm::client
