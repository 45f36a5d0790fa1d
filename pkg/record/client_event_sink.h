// ClientEventSink: the EventSink over the API server, core/v1 `events` in the event's namespace
// (client-go's typed EventSinkImpl). Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "pkg/api/decoder.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/record/event_sink.h"

namespace kcm::record {

// The create/update body: Event::ToJson plus an explicit `"eventTime": null` when unset, the
// form upstream's core/v1 recorder sends.
Result<std::string> EncodeEvent(const api::Event& event);

class ClientEventSink final : public EventSink {
 public:
  explicit ClientEventSink(std::shared_ptr<client::RestClient> client);

  Result<api::Event> Create(const api::Event& event, std::stop_token stop) override;
  Result<api::Event> Update(const api::Event& event, std::stop_token stop) override;
  Result<api::Event> Patch(const api::Event& event, std::string_view patch,
                           std::stop_token stop) override;

 private:
  Result<api::Event> Decode(Result<std::string> body);

  client::ResourceClient events_;
  std::mutex decoder_mu_;
  api::Decoder decoder_;  // guarded by decoder_mu_
};

}  // namespace kcm::record
