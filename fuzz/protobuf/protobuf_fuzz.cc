// libFuzzer target for the protobuf reader: WireReader (pkg/api/protobuf/wire.h) and the Pod
// decoders of pod_protobuf.cc. The input is a bare core.v1.Pod message, the form a PodList's items
// and a WatchEvent's object carry. Checked: WireReader hands out only views inside its input,
// stops at the end or with an error, and nested messages read the same way; the four ways the
// same Pod reaches us — a GET body (enveloped Pod), a LIST item cut out by the streaming decoder,
// a PodList body and a watch frame — decode to the same record or all fail; the envelope, list
// and frame built around any input (valid or not) are read without crashing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "pkg/api/codec.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/protobuf/wire.h"
#include "test/unit/api/protobuf_writer.h"

namespace {

using kcm::api::Pod;
using kcm::api::protobuf::WireField;
using kcm::api::protobuf::WireReader;
using kcm::api::protobuf::WireType;
namespace pbw = kcm::api::testing;

using kcm::fuzz::Check;

// Walks `message` and the length-delimited fields inside it (as messages, to `depth` levels).
void WalkWire(std::string_view message, int depth) {
  WireReader reader(message);
  WireField f;
  size_t fields = 0;
  while (reader.Next(&f)) {
    ++fields;
    Check(f.number != 0 && f.number < (1u << 29));
    Check(f.type != WireType::kStartGroup && f.type != WireType::kEndGroup);
    if (f.type == WireType::kLengthDelimited) {
      Check(f.bytes.data() >= message.data() &&
            f.bytes.data() + f.bytes.size() <= message.data() + message.size());
      if (depth > 0) WalkWire(f.bytes, depth - 1);
    }
    Check(fields <= message.size());  // every field takes at least one byte
  }
}

std::string TimeText(const kcm::api::OptionalTime& t) {
  return std::to_string((*t).time_since_epoch().count());
}

// Everything the decoders keep of a Pod, as text, to compare the four decodes.
std::string Summary(const Pod& pod) {
  std::string s =
      pod.metadata.name + "|" + std::string(pod.metadata.namespace_.view()) + "|" +
      pod.metadata.uid.str() + "|" + pod.metadata.resource_version.str() + "|" +
      std::to_string(pod.metadata.generation) + "|" + TimeText(pod.metadata.creation_timestamp) +
      "|" + TimeText(pod.metadata.deletion_timestamp) + "|" + std::string(pod.node_name.view()) +
      "|" + TimeText(pod.ready_transition_time) + "|" + std::to_string(pod.deletion_cost) + "|" +
      std::to_string(pod.restart_count_max) + "|" + std::to_string(static_cast<int>(pod.phase)) +
      "|" + std::to_string(static_cast<int>(pod.ready)) + "|labels";
  for (const auto& [k, v] : pod.metadata.labels) {
    s += "|" + std::string(k) + "=" + std::string(v);
  }
  s += "|refs";
  for (const auto& r : pod.metadata.owner_references) {
    s += "|" + r.api_version + "," + r.kind + "," + r.name + "," + r.uid.str() + "," +
         (r.controller ? "c" : "-") + (r.block_owner_deletion ? "b" : "-");
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view pod_message(reinterpret_cast<const char*>(data), size);
  WalkWire(pod_message, 4);

  kcm::api::Decoder decoder;
  const std::string body = pbw::Envelope("Pod", pod_message);
  auto get = kcm::api::DecodePodProtobuf(decoder, body);
  auto item = kcm::api::DecodePodListItemProtobuf(decoder, pod_message);
  auto list = kcm::api::DecodePodListProtobuf(
      decoder,
      pbw::Envelope("PodList", pbw::Bytes(1, pbw::Bytes(2, "7")) + pbw::Bytes(2, pod_message)));
  auto event = kcm::api::DecodePodWatchEventProtobuf(
      decoder, pbw::Bytes(1, "MODIFIED") + pbw::Bytes(2, pbw::Bytes(1, body)));

  Check(item.ok() == get.ok());
  Check(list.ok() == get.ok());
  Check(event.ok() == get.ok());
  if (get.ok()) {
    const std::string want = Summary(**get);
    Check(!(*get)->metadata.name.empty());
    Check(Summary(static_cast<const Pod&>(**item)) == want);
    Check(list->items.size() == 1 && list->resource_version == "7");
    Check(Summary(static_cast<const Pod&>(*list->items[0])) == want);
    Check(event->type == kcm::api::WatchEventType::kModified && event->object != nullptr);
    Check(Summary(static_cast<const Pod&>(*event->object)) == want);
    Check(event->resource_version == (*get)->metadata.resource_version);
  } else {
    // Failures are DecodeErrors, never another kind.
    Check(get.error().reason == "DecodeError");
  }
  // The input as a whole body and as a whole frame, too (what a broken server could send).
  (void)kcm::api::DecodePodProtobuf(decoder, pod_message);
  (void)kcm::api::DecodePodListProtobuf(decoder, pod_message);
  (void)kcm::api::DecodePodWatchEventProtobuf(decoder, pod_message);
  (void)kcm::api::DecodeStatusProtobuf(pod_message);
  return 0;
}
