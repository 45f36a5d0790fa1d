#include "pkg/api/internal/decode.h"

#include <charconv>
#include <cstring>
#include <limits>

#include "pkg/api/codec.h"
#include "pkg/api/internal/pod_fields.h"
#include "pkg/api/internal/watch_event_type.h"
#include "pkg/api/pod.h"
#include "pkg/api/time.h"

namespace kcm::api {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING, "padding contract out of date");

Decoder::Decoder() : Decoder(std::make_shared<InternTable>()) {}
Decoder::Decoder(std::shared_ptr<InternTable> interner)
    : impl_(std::make_unique<internal::DecoderImpl>()) {
  impl_->interner = std::move(interner);
}
InternTable& Decoder::interner() {
  return *impl_->interner;
}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
void Decoder::set_pack_raw_json(bool pack) {
  impl_->pack_raw_json = pack;
}
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

namespace internal {

simdjson::padded_string_view DecoderImpl::Prepare(const JsonInput& in) {
  if (in.padded) {
    return simdjson::padded_string_view(in.text.data(), in.text.size(),
                                        in.text.size() + kJsonPadding);
  }
  if (scratch.size() < in.text.size() + kJsonPadding) {
    scratch.resize(in.text.size() + kJsonPadding);
  }
  if (!in.text.empty()) std::memcpy(scratch.data(), in.text.data(), in.text.size());
  std::memset(scratch.data() + in.text.size(), 0, kJsonPadding);
  return simdjson::padded_string_view(scratch.data(), in.text.size(), scratch.size());
}

namespace {

Status CheckTrailing(od::document& doc) {
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) {
    return DecodeErrorAt("", "trailing content after JSON value");
  }
  return OkStatus();
}

}  // namespace

Result<ObjectPtr> DecodeDocumentAt(DecoderImpl& d, std::string_view padded_text, int level,
                                   FromValueFn fn) {
  if (level >= kLevels) return DecodeErrorAt("", "document nested too deeply");
  od::document doc;
  auto psv = simdjson::padded_string_view(padded_text.data(), padded_text.size(),
                                          padded_text.size() + kJsonPadding);
  if (auto ec = d.parsers[level].iterate(psv).get(doc); ec) return DecodeErrorAt("", ec);
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return DecodeErrorAt("", ec);
  auto obj = fn(d, root, level + 1);
  if (!obj.ok()) return obj;
  if (Status s = CheckTrailing(doc); !s.ok()) return s.error();
  return obj;
}

Status NullOk(od::value v, std::string_view path) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (!is_null) return DecodeErrorAt(path, "invalid literal");
  return OkStatus();
}

Status ReadStringAt(od::value v, std::string_view path, std::string* out) {
  if (auto ec = ReadString(v, out); ec) return DecodeErrorAt(path, ec);
  return OkStatus();
}

Status ReadUidAt(od::value v, std::string_view path, Uid* out) {
  std::string_view text;
  if (auto ec = ReadStringView(v, &text); ec) return DecodeErrorAt(path, ec);
  *out = Uid(text);
  return OkStatus();
}

Status ReadInt32At(od::value v, std::string_view path, int32_t* out) {
  int64_t n = 0;
  if (auto ec =
          ReadInt(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), &n);
      ec) {
    return DecodeErrorAt(path, ec == simdjson::NUMBER_OUT_OF_RANGE ? "number out of int32 range"
                                                                   : simdjson::error_message(ec));
  }
  *out = static_cast<int32_t>(n);
  return OkStatus();
}

Status ReadInt64At(od::value v, std::string_view path, int64_t* out) {
  if (auto ec =
          ReadInt(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), out);
      ec) {
    return DecodeErrorAt(path, ec);
  }
  return OkStatus();
}

Status ReadBoolAt(od::value v, std::string_view path, bool* out) {
  if (auto ec = ReadBool(v, out); ec) return DecodeErrorAt(path, ec);
  return OkStatus();
}

Status ReadTimeAt(od::value v, std::string_view path, std::optional<Time>* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (is_null) {
    out->reset();
    return OkStatus();
  }
  std::string_view s;
  if (auto ec = v.get_string().get(s); ec) return DecodeErrorAt(path, ec);
  auto t = ParseRFC3339(s);
  if (!t.ok()) return DecodeErrorAt(path, t.error().message);
  *out = *t;
  return OkStatus();
}

namespace {

// Fills d.label_scratch with an object's string pairs as views into the parser's string buffer,
// valid for the whole document (the intern table copies them only when the set is new). A null
// value reads as "".
Status CollectStringPairs(DecoderImpl& d, od::value v, std::string_view path) {
  std::vector<Labels::value_type>& items = d.label_scratch;
  items.clear();
  return ForEachField(v, path, [&](od::field& f) -> Status {
    std::string_view key;
    if (auto ec = f.unescaped_key().get(key); ec) return DecodeErrorAt(path, ec);
    std::string_view val;
    if (auto ec = ReadStringView(f.value(), &val); ec) {
      return DecodeErrorAt(std::string(path) + "." + std::string(key), ec);
    }
    items.emplace_back(key, val);
    return OkStatus();
  });
}

}  // namespace

Status ReadLabelsAt(DecoderImpl& d, od::value v, std::string_view path, Labels* out) {
  if (Status s = CollectStringPairs(d, v, path); !s.ok()) return s;
  *out = d.interner->InternLabels(&d.label_scratch);
  return OkStatus();
}

namespace {

// Interned as labels are (equal annotations, e.g. the revision and replicas annotations of most
// ReplicaSets, share one map).
Status ReadAnnotationsAt(DecoderImpl& d, od::value v, Annotations* out) {
  if (Status s = CollectStringPairs(d, v, "metadata.annotations"); !s.ok()) return s;
  *out = d.interner->InternAnnotations(&d.label_scratch);
  return OkStatus();
}

Status DecodeOwnerReferences(DecoderImpl& d, od::value v, OwnerReferences* result) {
  std::vector<OwnerReference> refs;
  std::vector<OwnerReference>* out = &refs;
  Status st = ForEachElement(v, "metadata.ownerReferences", [&](od::value e, size_t) -> Status {
    OwnerReference ref;
    Status s = ForEachField(e, "metadata.ownerReferences[]", [&](od::field& f) -> Status {
      if (KeyIs(f, "apiVersion"))
        return ReadStringAt(f.value(), "metadata.ownerReferences[].apiVersion", &ref.api_version);
      if (KeyIs(f, "kind"))
        return ReadStringAt(f.value(), "metadata.ownerReferences[].kind", &ref.kind);
      if (KeyIs(f, "name"))
        return ReadStringAt(f.value(), "metadata.ownerReferences[].name", &ref.name);
      if (KeyIs(f, "uid")) return ReadUidAt(f.value(), "metadata.ownerReferences[].uid", &ref.uid);
      if (KeyIs(f, "controller"))
        return ReadBoolAt(f.value(), "metadata.ownerReferences[].controller", &ref.controller);
      if (KeyIs(f, "blockOwnerDeletion")) {
        return ReadBoolAt(f.value(), "metadata.ownerReferences[].blockOwnerDeletion",
                          &ref.block_owner_deletion);
      }
      return OkStatus();
    });
    if (!s.ok()) return s;
    out->push_back(std::move(ref));
    return OkStatus();
  });
  if (!st.ok()) return st;
  *result = d.interner->InternOwnerReferences(std::move(refs));
  return OkStatus();
}

}  // namespace

// strconv.ParseInt(s, 10, 32) semantics: optional sign, decimal digits, int32 range.
std::optional<int32_t> ParseInt32(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int32_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return n;
}

Status DecodeObjectMeta(DecoderImpl& d, od::value v, ObjectMeta* meta, MetaMode mode,
                        int32_t* deletion_cost) {
  return ForEachField(v, "metadata", [&](od::field& f) -> Status {
    // Most frequent keys first; managedFields and unknown keys are skipped without parsing.
    if (KeyIs(f, "name")) return ReadStringAt(f.value(), "metadata.name", &meta->name);
    if (KeyIs(f, "namespace")) {
      std::string_view text;
      if (auto ec = ReadStringView(f.value(), &text); ec) {
        return DecodeErrorAt("metadata.namespace", ec);
      }
      meta->namespace_ = d.interner->InternString(text);
      return OkStatus();
    }
    if (KeyIs(f, "uid")) return ReadUidAt(f.value(), "metadata.uid", &meta->uid);
    if (KeyIs(f, "resourceVersion")) {
      std::string_view text;
      if (auto ec = ReadStringView(f.value(), &text); ec) {
        return DecodeErrorAt("metadata.resourceVersion", ec);
      }
      meta->resource_version = ResourceVersion(text);
      return OkStatus();
    }
    if (KeyIs(f, "generation"))
      return ReadInt64At(f.value(), "metadata.generation", &meta->generation);
    if (KeyIs(f, "creationTimestamp")) {
      std::optional<Time> t;
      Status s = ReadTimeAt(f.value(), "metadata.creationTimestamp", &t);
      meta->creation_timestamp = t;
      return s;
    }
    if (KeyIs(f, "deletionTimestamp")) {
      std::optional<Time> t;
      Status s = ReadTimeAt(f.value(), "metadata.deletionTimestamp", &t);
      meta->deletion_timestamp = t;
      return s;
    }
    if (KeyIs(f, "labels")) return ReadLabelsAt(d, f.value(), "metadata.labels", &meta->labels);
    if (KeyIs(f, "annotations")) {
      if (mode == MetaMode::kFull) return ReadAnnotationsAt(d, f.value(), &meta->annotations);
      return ForEachField(f.value(), "metadata.annotations", [&](od::field& a) -> Status {
        if (!KeyIs(a, kPodDeletionCostAnnotation)) return OkStatus();
        std::string val;
        Status s = ReadStringAt(a.value(), "metadata.annotations", &val);
        if (!s.ok()) return s;
        *deletion_cost = ParseInt32(val).value_or(0);
        return OkStatus();
      });
    }
    if (KeyIs(f, "ownerReferences"))
      return DecodeOwnerReferences(d, f.value(), &meta->owner_references);
    return OkStatus();
  });
}

Status RequireName(const ObjectMeta& meta) {
  if (meta.name.empty()) return DecodeErrorAt("metadata.name", "required field missing");
  return OkStatus();
}

Status DecodeConditions(DecoderImpl& d, od::value v, std::string_view path,
                        std::vector<Condition>* out) {
  out->clear();
  std::string p(path);
  const auto read_interned = [&](od::value fv, std::string_view field,
                                 SharedString* text) -> Status {
    std::string_view view;
    if (auto ec = ReadStringView(fv, &view); ec) {
      return DecodeErrorAt(p + std::string(field), ec);
    }
    *text = d.interner->InternString(view);
    return OkStatus();
  };
  const auto read_time = [&](od::value fv, std::string_view field, OptionalTime* time) -> Status {
    std::optional<Time> t;
    Status s = ReadTimeAt(fv, p + std::string(field), &t);
    *time = t;
    return s;
  };
  Status st = ForEachElement(v, path, [&](od::value e, size_t) -> Status {
    Condition c;
    Status s = ForEachField(e, p, [&](od::field& f) -> Status {
      if (KeyIs(f, "type")) return read_interned(f.value(), ".type", &c.type);
      if (KeyIs(f, "status")) return read_interned(f.value(), ".status", &c.status);
      if (KeyIs(f, "reason")) return read_interned(f.value(), ".reason", &c.reason);
      if (KeyIs(f, "message")) return ReadStringAt(f.value(), p + ".message", &c.message);
      if (KeyIs(f, "lastUpdateTime"))
        return read_time(f.value(), ".lastUpdateTime", &c.last_update_time);
      if (KeyIs(f, "lastTransitionTime")) {
        return read_time(f.value(), ".lastTransitionTime", &c.last_transition_time);
      }
      return OkStatus();
    });
    if (!s.ok()) return s;
    out->push_back(std::move(c));
    return OkStatus();
  });
  // Cached for the object's life: no spare capacity (three conditions would hold room for four).
  out->shrink_to_fit();
  return st;
}

Status DecodeLabelSelector(DecoderImpl& d, od::value v, std::string_view path,
                           std::optional<LabelSelector>* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (is_null) {
    out->reset();
    return OkStatus();
  }
  LabelSelector sel;
  std::string p(path);
  Status s = ForEachField(v, path, [&](od::field& f) -> Status {
    if (KeyIs(f, "matchLabels"))
      return ReadLabelsAt(d, f.value(), p + ".matchLabels", &sel.match_labels);
    if (KeyIs(f, "matchExpressions")) {
      return ForEachElement(f.value(), p + ".matchExpressions", [&](od::value e, size_t) -> Status {
        LabelSelectorRequirement req;
        Status st = ForEachField(e, p + ".matchExpressions[]", [&](od::field& ef) -> Status {
          if (KeyIs(ef, "key"))
            return ReadStringAt(ef.value(), p + ".matchExpressions[].key", &req.key);
          if (KeyIs(ef, "operator")) {
            return ReadStringAt(ef.value(), p + ".matchExpressions[].operator", &req.op);
          }
          if (KeyIs(ef, "values")) {
            return ForEachElement(
                ef.value(), p + ".matchExpressions[].values", [&](od::value s, size_t) -> Status {
                  std::string val;
                  Status r = ReadStringAt(s, p + ".matchExpressions[].values", &val);
                  if (r.ok()) req.values.push_back(std::move(val));
                  return r;
                });
          }
          return OkStatus();
        });
        if (!st.ok()) return st;
        sel.match_expressions.push_back(std::move(req));
        return OkStatus();
      });
    }
    return OkStatus();
  });
  if (!s.ok()) return s;
  *out = std::move(sel);
  return OkStatus();
}

namespace {

// `part` (a span of kept.from) as a view into the object's kept raw JSON, where kept.from's bytes
// before kept.cut_begin sit at the same offsets and those from kept.cut_end onwards are moved back
// by the cut; a copy when `part` is not such a span.
SharedText KeptTextOf(const DecoderImpl::KeptRaw& kept, std::string_view part) {
  if (kept.kept == nullptr || part.empty() || part.data() < kept.from.data() ||
      part.data() + part.size() > kept.from.data() + kept.from.size()) {
    return SharedText(part);
  }
  const auto begin = static_cast<size_t>(part.data() - kept.from.data());
  const size_t end = begin + part.size();
  size_t offset = 0;
  if (end <= kept.cut_begin) {
    offset = begin;
  } else if (begin >= kept.cut_end) {
    offset = begin - (kept.cut_end - kept.cut_begin);
  } else {
    return SharedText(part);  // overlaps the cut: not a span of the kept text
  }
  return SharedText::Sub(*kept.kept, offset, part.size());
}

}  // namespace

Status DecodePodTemplate(DecoderImpl& d, od::value v, int level, PodTemplate* out) {
  std::string_view raw;
  if (auto ec = RawJson(v, &raw); ec) return DecodeErrorAt("spec.template", ec);
  if (raw == "null") {
    out->raw_json = {};
    out->labels = {};
    return OkStatus();
  }
  out->raw_json = KeptTextOf(d.kept_raw, raw);
  if (level >= kLevels) return DecodeErrorAt("spec.template", "document nested too deeply");
  // `raw` lies inside the caller's padded buffer, so it can be re-parsed in place.
  od::document doc;
  auto psv = simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + kJsonPadding);
  if (auto ec = d.parsers[level].iterate(psv).get(doc); ec)
    return DecodeErrorAt("spec.template", ec);
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return DecodeErrorAt("spec.template", ec);
  return ForEachField(root, "spec.template", [&](od::field& f) -> Status {
    if (!KeyIs(f, "metadata")) return OkStatus();
    return ForEachField(f.value(), "spec.template.metadata", [&](od::field& m) -> Status {
      if (!KeyIs(m, "labels")) return OkStatus();
      return ReadLabelsAt(d, m.value(), "spec.template.metadata.labels", &out->labels);
    });
  });
}

Status DecodeStatusValue(od::value v, Error* out) {
  *out = Error{};
  return ForEachField(v, "status", [&](od::field& f) -> Status {
    if (KeyIs(f, "code")) return ReadInt32At(f.value(), "code", &out->code);
    if (KeyIs(f, "reason")) return ReadStringAt(f.value(), "reason", &out->reason);
    if (KeyIs(f, "message")) return ReadStringAt(f.value(), "message", &out->message);
    if (KeyIs(f, "details")) {
      return ForEachField(f.value(), "details", [&](od::field& df) -> Status {
        if (!KeyIs(df, "causes")) return OkStatus();
        return ForEachElement(df.value(), "details.causes", [&](od::value c, size_t) -> Status {
          std::string reason;
          Status s = ForEachField(c, "details.causes[]", [&](od::field& cf) -> Status {
            if (KeyIs(cf, "reason"))
              return ReadStringAt(cf.value(), "details.causes[].reason", &reason);
            return OkStatus();
          });
          if (s.ok()) out->causes.push_back(std::move(reason));
          return s;
        });
      });
    }
    return OkStatus();
  });
}

void SetGenericKindFromList(DecoderImpl& d, std::string_view list_kind) {
  d.generic_kind.assign(list_kind);
  if (d.generic_kind.size() > 4 && d.generic_kind.ends_with("List")) {
    d.generic_kind.resize(d.generic_kind.size() - 4);
  }
}

Result<ObjectList> DecodeListWith(Decoder& decoder, const JsonInput& in, FromValueFn fn) {
  DecoderImpl& d = decoder.impl();
  d.generic_kind.clear();
  od::document doc;
  if (auto ec = d.parsers[0].iterate(d.Prepare(in)).get(doc); ec) return DecodeErrorAt("", ec);
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return DecodeErrorAt("", ec);
  ObjectList list;
  bool saw_items = false;
  Status s = ForEachField(root, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "kind")) {
      std::string kind;
      Status st = ReadStringAt(f.value(), "kind", &kind);
      SetGenericKindFromList(d, kind);
      return st;
    }
    if (KeyIs(f, "metadata")) {
      return ForEachField(f.value(), "metadata", [&](od::field& m) -> Status {
        if (KeyIs(m, "resourceVersion")) {
          return ReadStringAt(m.value(), "metadata.resourceVersion", &list.resource_version);
        }
        if (KeyIs(m, "continue"))
          return ReadStringAt(m.value(), "metadata.continue", &list.continue_token);
        if (KeyIs(m, "remainingItemCount")) {
          bool is_null = false;
          if (auto ec = m.value().is_null().get(is_null); ec || is_null) {
            return ec ? Status(DecodeErrorAt("metadata.remainingItemCount", ec)) : OkStatus();
          }
          return ReadInt64At(m.value(), "metadata.remainingItemCount", &list.remaining_item_count);
        }
        if (KeyIs(m, "shardInfo")) {
          return ForEachField(m.value(), "metadata.shardInfo", [&](od::field& si) -> Status {
            if (!KeyIs(si, "selector")) return OkStatus();
            return ReadStringAt(si.value(), "metadata.shardInfo.selector", &list.shard_selector);
          });
        }
        return OkStatus();
      });
    }
    if (KeyIs(f, "items")) {
      saw_items = true;
      return ForEachElement(f.value(), "items", [&](od::value item, size_t i) -> Status {
        auto obj = fn(d, item, 1);  // items live in parsers[0]
        if (!obj.ok()) return PrefixErrorPath(obj.error(), ListItemPath(i));
        list.items.push_back(std::move(obj).value());
        return OkStatus();
      });
    }
    return OkStatus();
  });
  if (!s.ok()) return s.error();
  if (Status t = CheckTrailing(doc); !t.ok()) return t.error();
  if (!saw_items) return DecodeErrorAt("items", "required field missing");
  return list;
}

namespace {

Status DecodeBookmark(od::value v, WatchEvent* ev) {
  return ForEachField(v, "object", [&](od::field& f) -> Status {
    if (!KeyIs(f, "metadata")) return OkStatus();
    return ForEachField(f.value(), "object.metadata", [&](od::field& m) -> Status {
      if (KeyIs(m, "resourceVersion")) {
        return ReadStringAt(m.value(), "object.metadata.resourceVersion", &ev->resource_version);
      }
      if (!KeyIs(m, "annotations")) return OkStatus();
      return ForEachField(m.value(), "object.metadata.annotations", [&](od::field& a) -> Status {
        if (!KeyIs(a, kInitialEventsEndAnnotation)) return OkStatus();
        std::string val;
        Status s = ReadStringAt(a.value(), "object.metadata.annotations", &val);
        ev->initial_events_end = val == "true";
        return s;
      });
    });
  });
}

Status DecodeEventObject(DecoderImpl& d, od::value v, int level, FromValueFn fn, WatchEvent* ev) {
  switch (ev->type) {
    case WatchEventType::kBookmark:
      return DecodeBookmark(v, ev);
    case WatchEventType::kError: {
      Status s = DecodeStatusValue(v, &ev->error);
      return s.ok() ? s : PrefixErrorPath(s.error(), "object");
    }
    default: {
      auto obj = fn(d, v, level);
      if (!obj.ok()) return PrefixErrorPath(obj.error(), "object");
      ev->object = std::move(obj).value();
      ev->resource_version = ev->object->Meta().resource_version;
      return OkStatus();
    }
  }
}

}  // namespace

Result<WatchEvent> DecodeWatchEventWith(Decoder& decoder, const JsonInput& in, FromValueFn fn) {
  DecoderImpl& d = decoder.impl();
  od::document doc;
  if (auto ec = d.parsers[0].iterate(d.Prepare(in)).get(doc); ec) return DecodeErrorAt("", ec);
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return DecodeErrorAt("", ec);
  WatchEvent ev;
  bool have_type = false;
  bool have_object = false;
  std::string_view deferred;  // the object's text when it came before "type"
  Status s = ForEachField(root, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "type")) {
      std::string_view t;
      if (auto ec = f.value().get_string().get(t); ec) return DecodeErrorAt("type", ec);
      auto type = ParseWatchEventType(t);
      if (!type.ok()) return type.error();
      ev.type = *type;
      have_type = true;
      return OkStatus();
    }
    if (KeyIs(f, "object")) {
      have_object = true;
      if (have_type) return DecodeEventObject(d, f.value(), 1, fn, &ev);
      if (auto ec = RawJson(f.value(), &deferred); ec) return DecodeErrorAt("object", ec);
      return OkStatus();
    }
    return OkStatus();
  });
  if (!s.ok()) return s.error();
  if (Status t = CheckTrailing(doc); !t.ok()) return t.error();
  if (!have_type) return DecodeErrorAt("type", "required field missing");
  if (!have_object) return DecodeErrorAt("object", "required field missing");
  if (!deferred.empty()) {
    od::document inner;
    auto psv = simdjson::padded_string_view(deferred.data(), deferred.size(),
                                            deferred.size() + kJsonPadding);
    if (auto ec = d.parsers[1].iterate(psv).get(inner); ec) return DecodeErrorAt("object", ec);
    od::value v;
    if (auto ec = inner.get_value().get(v); ec) return DecodeErrorAt("object", ec);
    if (Status t = DecodeEventObject(d, v, 2, fn, &ev); !t.ok()) return t.error();
  }
  return ev;
}

}  // namespace internal
}  // namespace kcm::api
