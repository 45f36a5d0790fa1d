// Protobuf decoding of Pod, PodList and pod watch frames into the pruned Pod record (see
// protobuf.h). Keeps exactly the fields the JSON decoder (pod.cc, internal/decode.cc) keeps and
// skips every other field without looking inside it. Field numbers: k8s.io/api core/v1 and
// k8s.io/apimachinery meta/v1 and runtime generated.proto.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "pkg/api/codec.h"
#include "pkg/api/intern_table.h"
#include "pkg/api/internal/decode_error.h"
#include "pkg/api/internal/pod_fields.h"
#include "pkg/api/internal/watch_event_type.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/protobuf/wire.h"

namespace kcm::api {
namespace {

using protobuf::WireField;
using protobuf::WireReader;
using protobuf::WireType;

using internal::DecodeErrorAt;
using internal::PrefixErrorPath;

// Calls fn(const WireField&) → Status for each field of `message`; malformed input is an error
// at `path`.
template <typename Fn>
Status ForEachField(std::string_view message, std::string_view path, Fn&& fn) {
  WireReader reader(message);
  WireField f;
  while (reader.Next(&f)) {
    Status s = fn(f);
    if (!s.ok()) return s;
  }
  if (reader.error() != nullptr) return DecodeErrorAt(path, reader.error());
  return OkStatus();
}

Status WrongType(std::string_view path) {
  return DecodeErrorAt(path, "wrong wire type");
}

Status ViewBytes(const WireField& f, std::string_view path, std::string_view* out) {
  if (f.type != WireType::kLengthDelimited) return WrongType(path);
  *out = f.bytes;
  return OkStatus();
}

Status ReadString(const WireField& f, std::string_view path, std::string* out) {
  if (f.type != WireType::kLengthDelimited) return WrongType(path);
  // A fresh string is allocated to size; assign() into a short string's buffer would round the
  // capacity up to twice the short-string size (16 B more on every cached pod's name).
  if (out->capacity() < f.bytes.size()) {
    *out = std::string(f.bytes);
  } else {
    out->assign(f.bytes);
  }
  return OkStatus();
}

Status ReadVarint(const WireField& f, std::string_view path, uint64_t* out) {
  if (f.type != WireType::kVarint) return WrongType(path);
  *out = f.varint;
  return OkStatus();
}

// int32 fields travel as sign-extended varints; keep the low 32 bits, as Go's decoder does.
Status ReadInt32(const WireField& f, std::string_view path, int32_t* out) {
  uint64_t v = 0;
  if (Status s = ReadVarint(f, path, &v); !s.ok()) return s;
  *out = static_cast<int32_t>(static_cast<uint32_t>(v));
  return OkStatus();
}

Status ReadInt64(const WireField& f, std::string_view path, int64_t* out) {
  uint64_t v = 0;
  if (Status s = ReadVarint(f, path, &v); !s.ok()) return s;
  *out = static_cast<int64_t>(v);
  return OkStatus();
}

Status ReadBool(const WireField& f, std::string_view path, bool* out) {
  uint64_t v = 0;
  if (Status s = ReadVarint(f, path, &v); !s.ok()) return s;
  *out = v != 0;
  return OkStatus();
}

Time TimeFromUnixSeconds(int64_t seconds) {
  // Saturate outside Time's range, as ParseRFC3339 does (to kMinTime: Time::min() is
  // OptionalTime's "absent").
  constexpr int64_t kLimit =
      std::chrono::duration_cast<std::chrono::seconds>(Time::duration::max()).count();
  if (seconds >= kLimit) return Time::max();
  if (seconds <= -kLimit) return kMinTime;
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::seconds(seconds)));
}

// meta.v1.Time {seconds = 1, nanos = 2}. Upstream's Time.Unmarshal drops the nanoseconds (the
// JSON form carries whole seconds only), so the fraction is ignored here too.
Status ReadTime(const WireField& f, std::string_view path, OptionalTime* out) {
  std::string_view msg;
  if (Status s = ViewBytes(f, path, &msg); !s.ok()) return s;
  int64_t seconds = 0;
  Status s = ForEachField(msg, path, [&](const WireField& tf) -> Status {
    if (tf.number == 1) return ReadInt64(tf, path, &seconds);
    return OkStatus();
  });
  if (!s.ok()) return s;
  *out = TimeFromUnixSeconds(seconds);
  return OkStatus();
}

// A map<string, string> entry: {key = 1, value = 2}.
Status ReadMapEntry(const WireField& f, std::string_view path, std::string_view* key,
                    std::string_view* value) {
  std::string_view msg;
  if (Status s = ViewBytes(f, path, &msg); !s.ok()) return s;
  *key = {};
  *value = {};
  return ForEachField(msg, path, [&](const WireField& ef) -> Status {
    if (ef.number == 1) return ViewBytes(ef, path, key);
    if (ef.number == 2) return ViewBytes(ef, path, value);
    return OkStatus();
  });
}

// meta.v1.OwnerReference.
Status ReadOwnerReference(std::string_view msg, OwnerReference* ref) {
  constexpr std::string_view kPath = "metadata.ownerReferences[]";
  return ForEachField(msg, kPath, [&](const WireField& f) -> Status {
    switch (f.number) {
      case 1:
        return ReadString(f, "metadata.ownerReferences[].kind", &ref->kind);
      case 3:
        return ReadString(f, "metadata.ownerReferences[].name", &ref->name);
      case 4: {
        std::string_view uid;
        Status s = ViewBytes(f, "metadata.ownerReferences[].uid", &uid);
        if (s.ok()) ref->uid = Uid(uid);
        return s;
      }
      case 5:
        return ReadString(f, "metadata.ownerReferences[].apiVersion", &ref->api_version);
      case 6:
        return ReadBool(f, "metadata.ownerReferences[].controller", &ref->controller);
      case 7:
        return ReadBool(f, "metadata.ownerReferences[].blockOwnerDeletion",
                        &ref->block_owner_deletion);
      default:
        return OkStatus();
    }
  });
}

// The interning state of one decode call: labels and owner references are collected here (label
// views point into the message) and interned once the metadata message is read.
struct Ctx {
  InternTable& table;
  std::vector<Labels::value_type> labels;
  std::vector<OwnerReference> refs;
};

// meta.v1.ObjectMeta, pruned as for pods (MetaMode::kPod in the JSON decoder): annotations other
// than the deletion cost are dropped; managedFields are skipped unread. `initial_events_end` (may
// be null) is set from the k8s.io/initial-events-end annotation of a bookmark.
Status ReadPodMeta(Ctx& ctx, std::string_view msg, ObjectMeta* meta, int32_t* deletion_cost,
                   bool* initial_events_end) {
  ctx.labels.clear();
  ctx.refs.clear();
  Status st = ForEachField(msg, "metadata", [&](const WireField& f) -> Status {
    switch (f.number) {
      case 1:
        return ReadString(f, "metadata.name", &meta->name);
      case 3: {
        std::string_view ns;
        Status s = ViewBytes(f, "metadata.namespace", &ns);
        if (s.ok()) meta->namespace_ = ctx.table.InternString(ns);
        return s;
      }
      case 5: {
        std::string_view uid;
        Status s = ViewBytes(f, "metadata.uid", &uid);
        if (s.ok()) meta->uid = Uid(uid);
        return s;
      }
      case 6: {
        std::string_view rv;
        Status s = ViewBytes(f, "metadata.resourceVersion", &rv);
        if (s.ok()) meta->resource_version = ResourceVersion(rv);
        return s;
      }
      case 7:
        return ReadInt64(f, "metadata.generation", &meta->generation);
      case 8:
        return ReadTime(f, "metadata.creationTimestamp", &meta->creation_timestamp);
      case 9:
        return ReadTime(f, "metadata.deletionTimestamp", &meta->deletion_timestamp);
      case 11: {
        std::string_view key, value;
        Status s = ReadMapEntry(f, "metadata.labels", &key, &value);
        if (s.ok()) ctx.labels.emplace_back(key, value);
        return s;
      }
      case 12: {
        std::string_view key, value;
        Status s = ReadMapEntry(f, "metadata.annotations", &key, &value);
        if (!s.ok()) return s;
        if (key == kPodDeletionCostAnnotation) {
          *deletion_cost = internal::ParseInt32(value).value_or(0);
        } else if (initial_events_end != nullptr && key == kInitialEventsEndAnnotation) {
          *initial_events_end = value == "true";
        }
        return OkStatus();
      }
      case 13: {
        std::string_view ref_msg;
        if (Status s = ViewBytes(f, "metadata.ownerReferences", &ref_msg); !s.ok()) return s;
        OwnerReference ref;
        if (Status s = ReadOwnerReference(ref_msg, &ref); !s.ok()) return s;
        ctx.refs.push_back(std::move(ref));
        return OkStatus();
      }
      default:
        return OkStatus();
    }
  });
  if (!st.ok()) return st;
  meta->labels = ctx.table.InternLabels(&ctx.labels);
  meta->owner_references = ctx.table.InternOwnerReferences(std::move(ctx.refs));
  return OkStatus();
}

// core.v1.PodCondition {type = 1, status = 2, lastTransitionTime = 4}.
Status ReadCondition(std::string_view msg, Pod* pod) {
  std::string_view type, status;
  OptionalTime transition;
  Status s = ForEachField(msg, "status.conditions[]", [&](const WireField& f) -> Status {
    if (f.number == 1) return ViewBytes(f, "status.conditions[].type", &type);
    if (f.number == 2) return ViewBytes(f, "status.conditions[].status", &status);
    if (f.number == 4) return ReadTime(f, "status.conditions[].lastTransitionTime", &transition);
    return OkStatus();
  });
  if (!s.ok()) return s;
  if (type == "Ready") {
    pod->ready = internal::ParseConditionStatus(status);
    pod->ready_transition_time = transition;
  }
  return OkStatus();
}

// core.v1.ContainerStatus {restartCount = 5}.
Status ReadContainerStatus(std::string_view msg, Pod* pod) {
  return ForEachField(msg, "status.containerStatuses[]", [&](const WireField& f) -> Status {
    if (f.number != 5) return OkStatus();
    int32_t n = 0;
    if (Status s = ReadInt32(f, "status.containerStatuses[].restartCount", &n); !s.ok()) return s;
    pod->NoteRestartCount(n);
    return OkStatus();
  });
}

// core.v1.PodStatus {phase = 1, conditions = 2, containerStatuses = 8}.
Status ReadPodStatus(std::string_view msg, Pod* pod) {
  return ForEachField(msg, "status", [&](const WireField& f) -> Status {
    std::string_view sub;
    switch (f.number) {
      case 1: {
        Status s = ViewBytes(f, "status.phase", &sub);
        if (s.ok()) pod->phase = internal::ParsePhase(sub);
        return s;
      }
      case 2:
        if (Status s = ViewBytes(f, "status.conditions", &sub); !s.ok()) return s;
        return ReadCondition(sub, pod);
      case 8:
        if (Status s = ViewBytes(f, "status.containerStatuses", &sub); !s.ok()) return s;
        return ReadContainerStatus(sub, pod);
      default:
        return OkStatus();
    }
  });
}

// core.v1.Pod {metadata = 1, spec = 2, status = 3}; spec.nodeName = 10.
Status ReadPod(Ctx& ctx, std::string_view msg, Pod* pod, bool* initial_events_end) {
  return ForEachField(msg, "", [&](const WireField& f) -> Status {
    std::string_view sub;
    switch (f.number) {
      case 1:
        if (Status s = ViewBytes(f, "metadata", &sub); !s.ok()) return s;
        return ReadPodMeta(ctx, sub, &pod->metadata, &pod->deletion_cost, initial_events_end);
      case 2:
        if (Status s = ViewBytes(f, "spec", &sub); !s.ok()) return s;
        return ForEachField(sub, "spec", [&](const WireField& sf) -> Status {
          if (sf.number != 10) return OkStatus();
          // Interned: a node's pods share one string (shared_meta.h SharedString).
          std::string_view node;
          Status s = ViewBytes(sf, "spec.nodeName", &node);
          if (s.ok()) pod->node_name = ctx.table.InternString(node);
          return s;
        });
      case 3:
        if (Status s = ViewBytes(f, "status", &sub); !s.ok()) return s;
        return ReadPodStatus(sub, pod);
      default:
        return OkStatus();
    }
  });
}

Result<std::shared_ptr<const Pod>> PodFromMessage(Ctx& ctx, std::string_view msg) {
  auto pod = std::make_shared<Pod>();
  if (Status s = ReadPod(ctx, msg, pod.get(), nullptr); !s.ok()) return s.error();
  if (pod->metadata.name.empty()) return DecodeErrorAt("metadata.name", "required field missing");
  return std::shared_ptr<const Pod>(std::move(pod));
}

// The runtime.Unknown after the magic bytes: {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
// contentEncoding = 3, contentType = 4}.
struct Envelope {
  std::string_view kind;
  std::string_view raw;
};

Result<Envelope> Unwrap(std::string_view body, std::string_view path) {
  if (!HasProtobufMagic(body)) return DecodeErrorAt(path, "missing the k8s protobuf envelope");
  Envelope env;
  std::string_view encoding, content_type;
  Status s = ForEachField(body.substr(kProtobufMagic.size()), path, [&](const WireField& f) {
    switch (f.number) {
      case 1: {
        std::string_view type_meta;
        if (Status t = ViewBytes(f, path, &type_meta); !t.ok()) return t;
        return ForEachField(type_meta, path, [&](const WireField& tf) -> Status {
          if (tf.number == 2) return ViewBytes(tf, path, &env.kind);
          return OkStatus();
        });
      }
      case 2:
        return ViewBytes(f, path, &env.raw);
      case 3:
        return ViewBytes(f, path, &encoding);
      case 4:
        return ViewBytes(f, path, &content_type);
      default:
        return OkStatus();
    }
  });
  if (!s.ok()) return s.error();
  if (!encoding.empty()) {
    return DecodeErrorAt(path, "unsupported contentEncoding \"" + std::string(encoding) + "\"");
  }
  if (!content_type.empty() && content_type != kContentTypeProtobuf) {
    return DecodeErrorAt(path, "unsupported contentType \"" + std::string(content_type) + "\"");
  }
  return env;
}

Status ExpectKind(const Envelope& env, std::string_view want, std::string_view path) {
  // The server always names the kind; an empty one is tolerated like a JSON object without
  // "kind".
  if (env.kind.empty() || env.kind == want) return OkStatus();
  return DecodeErrorAt(path, "unexpected kind \"" + std::string(env.kind) + "\", want \"" +
                                 std::string(want) + "\"");
}

// meta.v1.Status {message = 3, reason = 4, details = 5 {causes = 4 {reason = 1}}, code = 6}.
Status ReadStatus(std::string_view msg, Error* out) {
  *out = Error{};
  return ForEachField(msg, "status", [&](const WireField& f) -> Status {
    switch (f.number) {
      case 3:
        return ReadString(f, "message", &out->message);
      case 4:
        return ReadString(f, "reason", &out->reason);
      case 6:
        return ReadInt32(f, "code", &out->code);
      case 5: {
        std::string_view details;
        if (Status s = ViewBytes(f, "details", &details); !s.ok()) return s;
        return ForEachField(details, "details", [&](const WireField& df) -> Status {
          if (df.number != 4) return OkStatus();
          std::string_view cause;
          if (Status s = ViewBytes(df, "details.causes[]", &cause); !s.ok()) return s;
          std::string reason;
          Status s = ForEachField(cause, "details.causes[]", [&](const WireField& cf) -> Status {
            if (cf.number == 1) return ReadString(cf, "details.causes[].reason", &reason);
            return OkStatus();
          });
          if (s.ok()) out->causes.push_back(std::move(reason));
          return s;
        });
      }
      default:
        return OkStatus();
    }
  });
}

}  // namespace

std::optional<Error> DecodeStatusProtobuf(std::string_view body) {
  auto env = Unwrap(body, "");
  if (!env.ok() || env->kind != "Status") return std::nullopt;
  Error err;
  if (!ReadStatus(env->raw, &err).ok()) return std::nullopt;
  return err;
}

Result<std::shared_ptr<const Pod>> DecodePodProtobuf(Decoder& decoder, std::string_view body) {
  auto env = Unwrap(body, "");
  if (!env.ok()) return env.error();
  if (Status s = ExpectKind(*env, "Pod", ""); !s.ok()) return s.error();
  Ctx ctx{decoder.interner(), {}, {}};
  return PodFromMessage(ctx, env->raw);
}

Result<ObjectPtr> DecodePodListItemProtobuf(Decoder& decoder, std::string_view message) {
  Ctx ctx{decoder.interner(), {}, {}};
  auto pod = PodFromMessage(ctx, message);
  if (!pod.ok()) return pod.error();
  return ObjectPtr(std::move(pod).value());
}

Result<ObjectList> DecodePodListProtobuf(Decoder& decoder, std::string_view body) {
  auto env = Unwrap(body, "");
  if (!env.ok()) return env.error();
  if (Status s = ExpectKind(*env, "PodList", ""); !s.ok()) return s.error();
  // core.v1.PodList {metadata = 1 (meta.v1.ListMeta {resourceVersion = 2, continue = 3,
  // remainingItemCount = 4, shardInfo = 5}), items = 2}. An empty list has no items field at all.
  ObjectList list;
  size_t index = 0;
  Ctx ctx{decoder.interner(), {}, {}};
  Status s = ForEachField(env->raw, "", [&](const WireField& f) -> Status {
    std::string_view sub;
    if (f.number == 1) {
      if (Status t = ViewBytes(f, "metadata", &sub); !t.ok()) return t;
      return ForEachField(sub, "metadata", [&](const WireField& mf) -> Status {
        if (mf.number == 2)
          return ReadString(mf, "metadata.resourceVersion", &list.resource_version);
        if (mf.number == 3) return ReadString(mf, "metadata.continue", &list.continue_token);
        if (mf.number == 4) {
          return ReadInt64(mf, "metadata.remainingItemCount", &list.remaining_item_count);
        }
        if (mf.number == 5) {  // shardInfo {selector = 1}
          std::string_view info;
          if (Status t = ViewBytes(mf, "metadata.shardInfo", &info); !t.ok()) return t;
          return ForEachField(info, "metadata.shardInfo", [&](const WireField& sf) -> Status {
            if (sf.number != 1) return OkStatus();
            return ReadString(sf, "metadata.shardInfo.selector", &list.shard_selector);
          });
        }
        return OkStatus();
      });
    }
    if (f.number == 2) {
      // The item's path is spelled out only on failure (hot loop).
      const size_t i = index++;
      auto item_path = [i] { return "items[" + std::to_string(i) + "]"; };
      if (f.type != WireType::kLengthDelimited) return WrongType(item_path());
      auto pod = PodFromMessage(ctx, f.bytes);
      if (!pod.ok()) return PrefixErrorPath(pod.error(), item_path());
      list.items.push_back(std::move(pod).value());
    }
    return OkStatus();
  });
  if (!s.ok()) return s.error();
  return list;
}

Result<WatchEvent> DecodePodWatchEventProtobuf(Decoder& decoder, std::string_view frame) {
  // The API server's watch framing writes bare WatchEvent messages; accept an enveloped one too.
  std::string_view msg = frame;
  if (HasProtobufMagic(frame)) {
    auto env = Unwrap(frame, "");
    if (!env.ok()) return env.error();
    if (Status s = ExpectKind(*env, "WatchEvent", ""); !s.ok()) return s.error();
    msg = env->raw;
  }
  // meta.v1.WatchEvent {type = 1, object = 2 (runtime.RawExtension {raw = 1})}.
  std::string_view type_name, raw;
  bool have_type = false, have_object = false;
  Status s = ForEachField(msg, "", [&](const WireField& f) -> Status {
    if (f.number == 1) {
      have_type = true;
      return ViewBytes(f, "type", &type_name);
    }
    if (f.number == 2) {
      have_object = true;
      std::string_view ext;
      if (Status t = ViewBytes(f, "object", &ext); !t.ok()) return t;
      return ForEachField(ext, "object", [&](const WireField& ef) -> Status {
        if (ef.number == 1) return ViewBytes(ef, "object", &raw);
        return OkStatus();
      });
    }
    return OkStatus();
  });
  if (!s.ok()) return s.error();
  if (!have_type) return DecodeErrorAt("type", "required field missing");
  if (!have_object) return DecodeErrorAt("object", "required field missing");
  auto type = internal::ParseWatchEventType(type_name);
  if (!type.ok()) return type.error();
  WatchEvent ev;
  ev.type = *type;
  Ctx ctx{decoder.interner(), {}, {}};
  auto env = Unwrap(raw, "object");
  if (!env.ok()) return env.error();
  switch (ev.type) {
    case WatchEventType::kBookmark: {
      if (Status t = ExpectKind(*env, "Pod", "object"); !t.ok()) return t.error();
      Pod bookmark;
      if (Status t = ReadPod(ctx, env->raw, &bookmark, &ev.initial_events_end); !t.ok()) {
        return PrefixErrorPath(t.error(), "object");
      }
      ev.resource_version = std::move(bookmark.metadata.resource_version);
      return ev;
    }
    case WatchEventType::kError: {
      if (Status t = ExpectKind(*env, "Status", "object"); !t.ok()) return t.error();
      if (Status t = ReadStatus(env->raw, &ev.error); !t.ok()) {
        return PrefixErrorPath(t.error(), "object");
      }
      return ev;
    }
    default: {
      if (Status t = ExpectKind(*env, "Pod", "object"); !t.ok()) return t.error();
      auto pod = PodFromMessage(ctx, env->raw);
      if (!pod.ok()) return PrefixErrorPath(pod.error(), "object");
      ev.resource_version = (*pod)->metadata.resource_version;
      ev.object = std::move(pod).value();
      return ev;
    }
  }
}

}  // namespace kcm::api
