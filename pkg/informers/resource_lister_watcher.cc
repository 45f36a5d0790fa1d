#include "pkg/informers/resource_lister_watcher.h"

#include <optional>
#include <string_view>

#include "pkg/api/list_stream.h"

namespace kcm::informers {

namespace {

api::JsonInput PaddedInput(const std::string& body) {
  // pkg/client guarantees capacity() >= size() + padding for bodies and frames; check anyway
  // rather than let simdjson read past an allocation.
  if (body.capacity() >= body.size() + api::kJsonPadding) {
    return api::JsonInput::Padded(body);
  }
  return api::JsonInput(body);
}

class ResourceWatch final : public cache::WatchInterface {
 public:
  ResourceWatch(std::unique_ptr<client::WatchStream> stream, const api::Codec& codec,
                std::shared_ptr<std::mutex> mu, std::shared_ptr<api::Decoder> decoder)
      : stream_(std::move(stream)),
        codec_(codec),
        mu_(std::move(mu)),
        decoder_(std::move(decoder)) {}

  Result<std::optional<api::WatchEvent>> Next() override {
    auto frame = stream_->Next();
    if (!frame.ok()) return frame.error();
    if (!frame->has_value()) return std::optional<api::WatchEvent>();
    std::lock_guard lock(*mu_);
    // ResourceListerWatcher asks for protobuf only when the codec can read it.
    auto event = stream_->protobuf() && codec_.decode_watch_event_protobuf != nullptr
                     ? codec_.decode_watch_event_protobuf(*decoder_, **frame)
                     : codec_.decode_watch_event(*decoder_, PaddedInput(**frame));
    if (!event.ok()) {
      // Behaviour 1.8: a frame we cannot decode ends the stream with a synthetic 500.
      stream_->Stop();
      return Error{500,
                   std::string(errors::reason::kClientWatchDecoding),
                   "unable to decode an event from the watch stream: " + event.error().message,
                   {}};
    }
    return std::optional<api::WatchEvent>(std::move(*event));
  }

  void Stop() override { stream_->Stop(); }

  std::size_t buffered_events() const override { return stream_->buffered_frames(); }

 private:
  std::unique_ptr<client::WatchStream> stream_;
  const api::Codec& codec_;
  std::shared_ptr<std::mutex> mu_;
  std::shared_ptr<api::Decoder> decoder_;
};

}  // namespace

ResourceListerWatcher::ResourceListerWatcher(std::shared_ptr<client::ResourceClient> client,
                                             std::string ns, const api::Codec& codec,
                                             TweakListOptionsFunc tweak, std::stop_token stop,
                                             std::shared_ptr<api::InternTable> interner)
    : client_(std::move(client)),
      namespace_(std::move(ns)),
      codec_(codec),
      tweak_(std::move(tweak)),
      stop_(std::move(stop)),
      // Upstream asks for protobuf (client-go's default for built-in types) when the client's
      // ContentType says so; we do where the codec has a protobuf decoder (pods), the other
      // kinds stay JSON.
      accept_(client::IsProtobufContentType(client_->config().content_type) &&
                      codec_.decode_list_protobuf != nullptr &&
                      codec_.decode_watch_event_protobuf != nullptr
                  ? std::string(client::kAcceptProtobufOrJSON)
                  : std::string()),
      interner_(interner != nullptr ? std::move(interner) : std::make_shared<api::InternTable>()) {}

namespace {

// Decodes a LIST answer as it arrives (api::ListStreamDecoder): the body is never held
// whole, only the item being received. A retried attempt starts a fresh decoder.
class ListSink final : public client::BodySink {
 public:
  ListSink(const api::Codec& codec, size_t max_item_bytes, api::ListItemFunc on_item,
           std::shared_ptr<api::InternTable> interner)
      : codec_(codec),
        max_item_bytes_(max_item_bytes),
        on_item_(std::move(on_item)),
        interner_(std::move(interner)) {}

  void Begin(std::string_view content_type) override {
    // The server may answer JSON to a protobuf Accept; the Content-Type tells.
    const bool protobuf =
        client::IsProtobufContentType(content_type) && codec_.decode_list_protobuf != nullptr;
    decoder_.emplace(codec_, protobuf ? api::ListEncoding::kProtobuf : api::ListEncoding::kJson,
                     max_item_bytes_, on_item_, interner_);
  }
  Status Write(std::string_view data) override { return decoder_->Feed(data); }

  Result<api::ObjectList> Finish() {
    if (!decoder_) return Error::Local("DecodeError", "the list answer had no body");
    Result<api::ObjectList> list = decoder_->Finish();
    // The decoder (its simdjson parser, sized to the largest item) goes with the list.
    decoder_.reset();
    return list;
  }

 private:
  const api::Codec& codec_;
  size_t max_item_bytes_;
  api::ListItemFunc on_item_;
  std::shared_ptr<api::InternTable> interner_;
  std::optional<api::ListStreamDecoder> decoder_;
};

}  // namespace

Result<api::ObjectList> ResourceListerWatcher::List(const api::ListOptions& options) {
  return List(options, {});
}

Result<api::ObjectList> ResourceListerWatcher::List(const api::ListOptions& options,
                                                    const cache::ListItemFunc& on_item) {
  api::ListOptions opts = options;
  if (tweak_) tweak_(opts);
  // One item is bounded like one watch frame or one object (RestConfig::max_object_bytes).
  ListSink sink(codec_, client_->config().max_object_bytes, on_item, interner_);
  if (Status s = client_->ListStreaming(namespace_, opts, sink, stop_, accept_); !s.ok()) {
    return s.error();
  }
  return sink.Finish();
}

void ResourceListerWatcher::set_pack_watched_objects(bool pack) {
  std::lock_guard lock(*decoder_mu_);
  decoder_->set_pack_raw_json(pack);
}

Result<std::unique_ptr<cache::WatchInterface>> ResourceListerWatcher::Watch(
    const api::ListOptions& options) {
  api::ListOptions opts = options;
  if (tweak_) tweak_(opts);
  auto stream = client_->Watch(namespace_, opts, stop_, accept_);
  if (!stream.ok()) return stream.error();
  return std::unique_ptr<cache::WatchInterface>(
      std::make_unique<ResourceWatch>(std::move(*stream), codec_, decoder_mu_, decoder_));
}

}  // namespace kcm::informers
