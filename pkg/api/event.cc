#include "pkg/api/event.h"

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

std::string Event::ToJson() const {
  using json::Value;
  Value obj = Value::MakeObject();
  obj.Set("apiVersion", Value::String("v1"));
  obj.Set("kind", Value::String("Event"));
  Value meta = Value::MakeObject();
  if (!metadata.name.empty()) meta.Set("name", Value::String(metadata.name));
  if (!generate_name.empty()) meta.Set("generateName", Value::String(generate_name));
  if (!metadata.namespace_.empty()) meta.Set("namespace", Value::String(metadata.namespace_));
  if (!metadata.resource_version.empty()) {
    meta.Set("resourceVersion", Value::String(metadata.resource_version));
  }
  obj.Set("metadata", std::move(meta));
  Value ref = Value::MakeObject();
  auto opt = [](Value& o, const char* k, const std::string& v) {
    if (!v.empty()) o.Set(k, Value::String(v));
  };
  opt(ref, "kind", involved_object.kind);
  opt(ref, "namespace", involved_object.namespace_);
  opt(ref, "name", involved_object.name);
  opt(ref, "uid", involved_object.uid);
  opt(ref, "apiVersion", involved_object.api_version);
  opt(ref, "resourceVersion", involved_object.resource_version);
  opt(ref, "fieldPath", involved_object.field_path);
  obj.Set("involvedObject", std::move(ref));
  opt(obj, "reason", reason);
  opt(obj, "message", message);
  Value src = Value::MakeObject();
  opt(src, "component", source.component);
  opt(src, "host", source.host);
  obj.Set("source", std::move(src));
  if (first_timestamp) obj.Set("firstTimestamp", Value::String(FormatTime(*first_timestamp)));
  if (last_timestamp) obj.Set("lastTimestamp", Value::String(FormatTime(*last_timestamp)));
  if (count != 0) obj.Set("count", Value::Int(count));
  opt(obj, "type", type);
  if (event_time) obj.Set("eventTime", Value::String(FormatMicroTime(*event_time)));
  opt(obj, "reportingComponent", reporting_component);
  opt(obj, "reportingInstance", reporting_instance);
  opt(obj, "action", action);
  return json::Serialize(obj);
}

Result<std::shared_ptr<const Event>> DecodeEvent(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<Event, internal::EventFromValue>(decoder, json);
}

const Codec& EventCodec() {
  static const Codec codec = internal::JsonCodec<internal::EventFromValue>("Event");
  return codec;
}

}  // namespace kcm::api
