#include "pkg/record/client_event_sink.h"

#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/json_input.h"

namespace kcm::record {
namespace {

// Upstream refuses to write an event without a namespace rather than guess one.
Status RequireNamespace(const api::Event& event) {
  if (event.metadata.namespace_.empty()) {
    return Error::Local("InvalidEvent", "event " + event.metadata.name + " has no namespace");
  }
  return OkStatus();
}

}  // namespace

Result<std::string> EncodeEvent(const api::Event& event) {
  std::string body = event.ToJson();
  // ToJson writes one compact object and an eventTime member only when it is set; the null one
  // goes last, as appending it to the decoded object did, without decoding it again.
  if (!event.event_time) {
    if (body.empty() || body.back() != '}') {
      return Error::Local("InvalidEvent", "event " + event.metadata.name + " did not encode");
    }
    body.insert(body.size() - 1, R"(,"eventTime":null)");
  }
  return body;
}

ClientEventSink::ClientEventSink(std::shared_ptr<client::RestClient> client)
    : events_(std::move(client), api::kEvents) {}

Result<api::Event> ClientEventSink::Create(const api::Event& event, std::stop_token stop) {
  if (Status s = RequireNamespace(event); !s.ok()) return s.error();
  // A create carries no precondition: a resourceVersion is dropped (on a copy; a new event has
  // none).
  Result<std::string> body = event.metadata.resource_version.empty() ? EncodeEvent(event) : [&] {
    api::Event copy = event;
    copy.metadata.resource_version.clear();
    return EncodeEvent(copy);
  }();
  if (!body.ok()) return body.error();
  return Decode(events_.Create(event.metadata.namespace_, std::move(body).value(), {}, stop));
}

Result<api::Event> ClientEventSink::Update(const api::Event& event, std::stop_token stop) {
  if (Status s = RequireNamespace(event); !s.ok()) return s.error();
  auto body = EncodeEvent(event);
  if (!body.ok()) return body.error();
  return Decode(events_.Update(event.metadata.namespace_, event.metadata.name,
                               std::move(body).value(), {}, stop));
}

Result<api::Event> ClientEventSink::Patch(const api::Event& event, std::string_view patch,
                                          std::stop_token stop) {
  if (Status s = RequireNamespace(event); !s.ok()) return s.error();
  return Decode(events_.Patch(event.metadata.namespace_, event.metadata.name,
                              client::PatchType::kStrategicMergePatch, std::string(patch), {}, "",
                              stop));
}

Result<api::Event> ClientEventSink::Decode(Result<std::string> body) {
  if (!body.ok()) return body.error();
  std::lock_guard lock(decoder_mu_);
  auto event = api::DecodeEvent(decoder_, api::JsonInput(*body));
  if (!event.ok()) return event.error();
  return **event;
}

}  // namespace kcm::record
