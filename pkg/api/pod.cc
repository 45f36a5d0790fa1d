#include "pkg/api/pod.h"

#include <algorithm>

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"
#include "pkg/api/internal/pod_fields.h"
#include "pkg/api/protobuf.h"

namespace kcm::api {
namespace internal {
PodPhase ParsePhase(std::string_view p) {
  if (p == "Running") return PodPhase::kRunning;
  if (p == "Pending") return PodPhase::kPending;
  if (p == "Succeeded") return PodPhase::kSucceeded;
  if (p == "Failed") return PodPhase::kFailed;
  if (p == "Unknown") return PodPhase::kUnknown;
  return PodPhase::kUnset;
}

ConditionStatus ParseConditionStatus(std::string_view s) {
  if (s == "True") return ConditionStatus::kTrue;
  if (s == "False") return ConditionStatus::kFalse;
  if (s == "Unknown") return ConditionStatus::kUnknown;
  return ConditionStatus::kUnset;
}

namespace {

// Reads a string value without copying (null → ""); the view lives as long as the document.
Status ViewStringAt(od::value v, std::string_view path, std::string_view* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (is_null) {
    *out = {};
    return OkStatus();
  }
  if (auto ec = v.get_string().get(*out); ec) return DecodeErrorAt(path, ec);
  return OkStatus();
}

Status DecodePodStatus(od::value v, Pod* pod) {
  return ForEachField(v, "status", [&](od::field& f) -> Status {
    if (KeyIs(f, "phase")) {
      std::string_view phase;
      Status s = ViewStringAt(f.value(), "status.phase", &phase);
      pod->phase = ParsePhase(phase);
      return s;
    }
    if (KeyIs(f, "conditions")) {
      return ForEachElement(f.value(), "status.conditions", [&](od::value c, size_t) -> Status {
        std::string_view type, status;
        std::optional<Time> transition;
        Status s = ForEachField(c, "status.conditions[]", [&](od::field& cf) -> Status {
          if (KeyIs(cf, "type")) return ViewStringAt(cf.value(), "status.conditions[].type", &type);
          if (KeyIs(cf, "status"))
            return ViewStringAt(cf.value(), "status.conditions[].status", &status);
          if (KeyIs(cf, "lastTransitionTime")) {
            return ReadTimeAt(cf.value(), "status.conditions[].lastTransitionTime", &transition);
          }
          return OkStatus();
        });
        if (!s.ok()) return s;
        // `type` views the parser's string buffer, which stays valid for the whole document.
        if (type == "Ready") {
          pod->ready = ParseConditionStatus(status);
          pod->ready_transition_time = transition;
        }
        return OkStatus();
      });
    }
    if (KeyIs(f, "containerStatuses")) {
      return ForEachElement(
          f.value(), "status.containerStatuses", [&](od::value c, size_t) -> Status {
            return ForEachField(c, "status.containerStatuses[]", [&](od::field& cf) -> Status {
              if (!KeyIs(cf, "restartCount")) return OkStatus();
              int32_t n = 0;
              Status s = ReadInt32At(cf.value(), "status.containerStatuses[].restartCount", &n);
              if (!s.ok()) return s;
              pod->NoteRestartCount(n);
              return OkStatus();
            });
          });
    }
    return OkStatus();
  });
}

Result<ObjectPtr> PodFromValue(DecoderImpl& d, od::value v, int) {
  auto pod = std::make_shared<Pod>();
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "metadata")) {
      return DecodeObjectMeta(d, f.value(), &pod->metadata, MetaMode::kPod, &pod->deletion_cost);
    }
    if (KeyIs(f, "spec")) {
      return ForEachField(f.value(), "spec", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "nodeName")) {
          // Interned: a node's pods share one string (shared_meta.h SharedString).
          std::string_view node;
          Status s = ViewStringAt(sf.value(), "spec.nodeName", &node);
          if (s.ok()) pod->node_name = d.interner->InternString(node);
          return s;
        }
        return OkStatus();
      });
    }
    if (KeyIs(f, "status")) return DecodePodStatus(f.value(), pod.get());
    return OkStatus();
  });
  if (!s.ok()) return s.error();
  if (Status r = RequireName(pod->metadata); !r.ok()) return r.error();
  return ObjectPtr(std::move(pod));
}

}  // namespace
}  // namespace internal

Result<std::shared_ptr<const Pod>> DecodePod(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<Pod, internal::PodFromValue>(decoder, json);
}

const Codec& PodCodec() {
  static const Codec codec = [] {
    Codec c = internal::JsonCodec<internal::PodFromValue>("Pod");
    c.decode_list_protobuf = &DecodePodListProtobuf;
    c.decode_watch_event_protobuf = &DecodePodWatchEventProtobuf;
    c.decode_list_item_protobuf = &DecodePodListItemProtobuf;
    return c;
  }();
  return codec;
}

}  // namespace kcm::api
