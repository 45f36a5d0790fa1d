#include "pkg/api/event.h"

#include <string>
#include <string_view>

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"
#include "pkg/api/json.h"
#include "pkg/api/time.h"

namespace kcm::api {
namespace internal {
namespace {

Status DecodeEventFields(DecoderImpl& d, od::value v, int, Event* ev) {
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "metadata"))
      return DecodeObjectMeta(d, f.value(), &ev->metadata, MetaMode::kFull, nullptr);
    if (KeyIs(f, "involvedObject")) {
      ObjectReference& r = ev->involved_object;
      return ForEachField(f.value(), "involvedObject", [&](od::field& rf) -> Status {
        if (KeyIs(rf, "kind")) return ReadStringAt(rf.value(), "involvedObject.kind", &r.kind);
        if (KeyIs(rf, "namespace"))
          return ReadStringAt(rf.value(), "involvedObject.namespace", &r.namespace_);
        if (KeyIs(rf, "name")) return ReadStringAt(rf.value(), "involvedObject.name", &r.name);
        if (KeyIs(rf, "uid")) return ReadStringAt(rf.value(), "involvedObject.uid", &r.uid);
        if (KeyIs(rf, "apiVersion"))
          return ReadStringAt(rf.value(), "involvedObject.apiVersion", &r.api_version);
        if (KeyIs(rf, "resourceVersion")) {
          return ReadStringAt(rf.value(), "involvedObject.resourceVersion", &r.resource_version);
        }
        if (KeyIs(rf, "fieldPath"))
          return ReadStringAt(rf.value(), "involvedObject.fieldPath", &r.field_path);
        return OkStatus();
      });
    }
    if (KeyIs(f, "reason")) return ReadStringAt(f.value(), "reason", &ev->reason);
    if (KeyIs(f, "message")) return ReadStringAt(f.value(), "message", &ev->message);
    if (KeyIs(f, "source")) {
      return ForEachField(f.value(), "source", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "component"))
          return ReadStringAt(sf.value(), "source.component", &ev->source.component);
        if (KeyIs(sf, "host")) return ReadStringAt(sf.value(), "source.host", &ev->source.host);
        return OkStatus();
      });
    }
    if (KeyIs(f, "firstTimestamp"))
      return ReadTimeAt(f.value(), "firstTimestamp", &ev->first_timestamp);
    if (KeyIs(f, "lastTimestamp"))
      return ReadTimeAt(f.value(), "lastTimestamp", &ev->last_timestamp);
    if (KeyIs(f, "count")) return ReadInt32At(f.value(), "count", &ev->count);
    if (KeyIs(f, "type")) return ReadStringAt(f.value(), "type", &ev->type);
    if (KeyIs(f, "eventTime")) return ReadTimeAt(f.value(), "eventTime", &ev->event_time);
    if (KeyIs(f, "reportingComponent")) {
      return ReadStringAt(f.value(), "reportingComponent", &ev->reporting_component);
    }
    if (KeyIs(f, "reportingInstance")) {
      return ReadStringAt(f.value(), "reportingInstance", &ev->reporting_instance);
    }
    if (KeyIs(f, "action")) return ReadStringAt(f.value(), "action", &ev->action);
    return OkStatus();
  });
  if (!s.ok()) return s;
  return RequireName(ev->metadata);
}

Result<ObjectPtr> EventFromValue(DecoderImpl& d, od::value v, int level) {
  auto ev = std::make_shared<Event>();
  if (Status s = DecodeEventFields(d, v, level, ev.get()); !s.ok()) return s.error();
  return ObjectPtr(std::move(ev));
}

}  // namespace
}  // namespace internal

// Written member by member, in the order and spelling json::Serialize gave the document this
// used to build (test: EventTest.BodyIsTheDocumentsSerialization): one string and no tree of
// values per event the recorder writes.
std::string Event::ToJson() const {
  std::string out;
  out.reserve(320 + metadata.name.size() + involved_object.name.size() + message.size());
  bool first = true;
  auto key = [&](std::string_view k) {
    if (!first) out.push_back(',');
    first = false;
    json::AppendQuoted(k, &out);
    out.push_back(':');
  };
  auto str = [&](std::string_view k, std::string_view v) {
    key(k);
    json::AppendQuoted(v, &out);
  };
  auto opt = [&](std::string_view k, const std::string& v) {
    if (!v.empty()) str(k, v);
  };
  auto open = [&](std::string_view k) {
    key(k);
    out.push_back('{');
    first = true;
  };
  auto close = [&] {
    out.push_back('}');
    first = false;
  };
  out.push_back('{');
  str("apiVersion", "v1");
  str("kind", "Event");
  open("metadata");
  opt("name", metadata.name);
  opt("generateName", generate_name);
  opt("namespace", metadata.namespace_);
  opt("resourceVersion", metadata.resource_version);
  close();
  open("involvedObject");
  opt("kind", involved_object.kind);
  opt("namespace", involved_object.namespace_);
  opt("name", involved_object.name);
  opt("uid", involved_object.uid);
  opt("apiVersion", involved_object.api_version);
  opt("resourceVersion", involved_object.resource_version);
  opt("fieldPath", involved_object.field_path);
  close();
  opt("reason", reason);
  opt("message", message);
  open("source");
  opt("component", source.component);
  opt("host", source.host);
  close();
  if (first_timestamp) str("firstTimestamp", FormatTime(*first_timestamp));
  if (last_timestamp) str("lastTimestamp", FormatTime(*last_timestamp));
  if (count != 0) {
    key("count");
    out.append(std::to_string(count));
  }
  opt("type", type);
  if (event_time) str("eventTime", FormatMicroTime(*event_time));
  opt("reportingComponent", reporting_component);
  opt("reportingInstance", reporting_instance);
  opt("action", action);
  out.push_back('}');
  return out;
}

Result<std::shared_ptr<const Event>> DecodeEvent(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<Event, internal::EventFromValue>(decoder, json);
}

const Codec& EventCodec() {
  static const Codec codec = internal::JsonCodec<internal::EventFromValue>("Event");
  return codec;
}

}  // namespace kcm::api
