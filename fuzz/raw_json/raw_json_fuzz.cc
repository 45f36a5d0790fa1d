// libFuzzer target for the raw-JSON splicer (pkg/api/internal/raw_json.h) and the write-path
// encoders built on it (ReplaceAnnotations, EncodeDeploymentStatus). Input: a byte choosing the
// path, a byte choosing the value, a byte choosing the operation, then the object's text. The
// splicer's contract is that it never decides differently from the json::Value document model
// (it answers nullopt when unsure), so on text json::Parse accepts each answer is compared with
// the document model's: a found value parses to the document's value at the path, a set or
// erase parses to the document with that change, and the encoders' bodies parse to the document
// with their change. On any other text the splicer must just not crash.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "pkg/api/deployment.h"
#include "pkg/api/internal/raw_json.h"
#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"

namespace {

namespace json = kcm::api::json;
namespace internal = kcm::api::internal;
using json::Value;

using kcm::fuzz::Check;

// Keys the write path uses, plus a few that are not there.
constexpr std::string_view kKeys[] = {"metadata", "annotations", "labels", "spec",
                                      "status",   "replicas",    "a",      "pod-template-hash"};
constexpr std::string_view kValues[] = {"1",    "\"x\"",      "{}",     "[1,{\"a\":\"}\"}]",
                                        "null", "{\"a\":{}}", "-0.5e3", "\"\\\"}\""};

Value ParseOrDie(std::string_view text) {
  auto v = json::Parse(text);
  Check(v.ok());
  return std::move(v).value();
}

// A path of 1 to 3 keys; json::Path is an initializer_list, so each length is spelled out.
template <typename Fn>
void WithPath(uint8_t pick, Fn&& fn) {
  const std::string_view k0 = kKeys[pick & 7], k1 = kKeys[(pick >> 3) & 7],
                         k2 = kKeys[((pick >> 3) + (pick >> 6)) & 7];
  switch (pick >> 6) {
    case 0:
      return fn(internal::RawPath{k0});
    case 1:
      return fn(internal::RawPath{k0, k1});
    default:
      return fn(internal::RawPath{k0, k1, k2});
  }
}

void CheckSplicer(std::string_view text, const Value* doc, uint8_t path_pick,
                  std::string_view value_text) {
  WithPath(path_pick, [&](internal::RawPath path) {
    size_t begin = 0, end = 0;
    std::optional<bool> found = internal::RawFindValue(text, path, &begin, &end);
    std::optional<std::string> set = internal::RawSetMember(text, path, value_text);
    std::optional<std::string> erased = internal::RawEraseMember(text, path);
    if (found && *found) Check(begin < end && end <= text.size());
    if (doc == nullptr) return;
    const Value* at = json::GetPath(*doc, path);
    if (found) {
      Check(*found == (at != nullptr));
      if (*found) Check(ParseOrDie(text.substr(begin, end - begin)) == *at);
    }
    if (set) {
      Value want = *doc;
      Check(json::SetPath(want, path, ParseOrDie(value_text)).ok());
      Check(ParseOrDie(*set) == want);
    }
    if (erased) {
      Value want = *doc;
      Check(json::ErasePath(want, path) == (at != nullptr));
      Check(ParseOrDie(*erased) == want);
    }
  });
}

// The top-level members as RawObjectMembers cuts them: on an object json::Parse accepts, every
// member is found, and each unescaped, unrepeated key's value text parses to the document's.
void CheckMembers(std::string_view text, const Value& doc) {
  size_t open = text.find_first_not_of(" \t\r\n");
  size_t close = 0;
  auto members = internal::RawObjectMembers(text, open, &close);
  Check(members.has_value());
  Check(close < text.size() && text[close] == '}');
  Check(members->size() >= doc.as_object().size());
  for (const internal::RawMember& m : *members) {
    bool ambiguous = false;
    internal::FindRawMember(*members, m.key, &ambiguous);
    if (ambiguous) continue;
    const Value* v = doc.Find(m.key);
    Check(v != nullptr);
    Check(ParseOrDie(text.substr(m.value_begin, m.value_end - m.value_begin)) == *v);
  }
}

// ReplaceAnnotations sets (or, when empty, removes) metadata.annotations.
void CheckReplaceAnnotations(std::string_view text, const Value* doc, uint8_t pick) {
  std::map<std::string, std::string> annotations;
  if (pick & 1) annotations["a"] = "b";
  if (pick & 2) annotations[std::string(kKeys[pick >> 5])] = "\"}";
  auto body = kcm::api::ReplaceAnnotations(text, annotations);
  if (doc == nullptr) return;
  Value want = *doc;
  bool ok = true;
  if (annotations.empty()) {
    json::ErasePath(want, {"metadata", "annotations"});
  } else {
    Value map = Value::MakeObject();
    for (const auto& [k, v] : annotations) map.Set(k, Value::String(v));
    ok = json::SetPath(want, {"metadata", "annotations"}, std::move(map)).ok();
  }
  Check(body.ok() == ok);
  if (ok) Check(ParseOrDie(*body) == want);
}

// EncodeDeploymentStatus keeps the status members the record does not model and replaces the
// modelled ones (object_builders.cc MergeStatus; the list is kDeploymentStatusFields there).
void CheckDeploymentStatus(std::string_view text, const Value* doc, uint8_t pick) {
  kcm::api::DeploymentStatus status;
  status.observed_generation = pick;
  status.replicas = pick & 7;
  if (pick & 8) status.collision_count = 2;
  if (pick & 16) status.terminating_replicas = 1;
  auto body = kcm::api::EncodeDeploymentStatus(text, status);
  if (doc == nullptr) return;
  Check(body.ok());
  Value want = *doc;
  const Value fresh = status.ToJson();
  Value* st = want.Find("status");
  if (st == nullptr || !st->is_object()) {
    want.Set("status", fresh);
  } else {
    for (std::string_view k :
         {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
          "unavailableReplicas", "terminatingReplicas", "conditions", "collisionCount"}) {
      st->Erase(k);
    }
    for (const auto& [k, v] : fresh.as_object()) st->Set(k, v);
  }
  Check(ParseOrDie(*body) == want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t path_pick = data[0], value_pick = data[1], op = data[2];
  std::string_view text(reinterpret_cast<const char*>(data) + 3, size - 3);
  auto parsed = json::Parse(text);
  // The write path only ever splices into objects (a whole object's text).
  const Value* doc = parsed.ok() && parsed->is_object() ? &*parsed : nullptr;
  CheckSplicer(text, doc, path_pick, kValues[value_pick & 7]);
  if (doc != nullptr) CheckMembers(text, *doc);
  if (op & 1) CheckReplaceAnnotations(text, doc, value_pick);
  if (op & 2) CheckDeploymentStatus(text, doc, value_pick);
  return 0;
}
