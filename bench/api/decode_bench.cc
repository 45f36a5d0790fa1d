// P1: decode throughput of the hot read path (WATCH frames and LIST pages) on one core, JSON and
// protobuf, beside simdjson's own DOM parse of the same JSON as the machine's reference. After the
// table it prints the protobuf and JSON decoders' speed relative to that DOM parse (same run, same
// machine; machines here differ 2.5x in speed, so only ratios compare across them).
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "pkg/api/codec.h"
#include "pkg/api/deployment.h"
#include "pkg/api/event.h"
#include "pkg/api/json.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/protobuf/wire.h"
#include "pkg/api/replicaset.h"
#include "pkg/api/shared_text.h"
#include "test/unit/api/protobuf_writer.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string PodFrame() {
  return R"({"type":"MODIFIED","object":)" + ReadFile(KCM_API_TESTDATA "/pod-10k.json") + "}";
}

// The reflector's case: frames arrive in a PaddedBuffer, decoded in place.
void DecodeWatchFrame(benchmark::State& state, const std::string& frame) {
  kcm::api::PaddedBuffer buf;
  buf.Append(frame);
  kcm::api::Decoder d;
  for (auto _ : state) {
    auto ev = kcm::api::PodCodec().decode_watch_event(d, buf.Input());
    if (!ev.ok()) state.SkipWithError(ev.error().message.c_str());
    benchmark::DoNotOptimize(ev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(frame.size()));
}

void BM_PodWatchEvent(benchmark::State& state) {
  DecodeWatchFrame(state, PodFrame());
}
BENCHMARK(BM_PodWatchEvent);

// Unpadded input: one memcpy into the decoder's scratch first.
void BM_PodWatchEventUnpadded(benchmark::State& state) {
  std::string frame = PodFrame();
  kcm::api::Decoder d;
  for (auto _ : state) {
    auto ev = kcm::api::PodCodec().decode_watch_event(d, std::string_view(frame));
    benchmark::DoNotOptimize(ev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_PodWatchEventUnpadded);

void BM_PodList500(benchmark::State& state) {
  std::string pod = ReadFile(KCM_API_TESTDATA "/pod-10k.json");
  std::string list =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1","continue":"x"},"items":[)";
  for (int i = 0; i < 500; ++i) {
    if (i > 0) list += ',';
    list += pod;
  }
  list += "]}";
  kcm::api::PaddedBuffer buf;
  buf.Append(list);
  kcm::api::Decoder d;
  for (auto _ : state) {
    auto l = kcm::api::PodCodec().decode_list(d, buf.Input());
    if (!l.ok() || l->items.size() != 500) state.SkipWithError("list decode failed");
    benchmark::DoNotOptimize(l);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(list.size()));
}
BENCHMARK(BM_PodList500)->Unit(benchmark::kMillisecond);

void BM_ReplicaSetWatchEvent(benchmark::State& state) {
  std::string frame =
      R"({"type":"MODIFIED","object":)" + ReadFile(KCM_API_TESTDATA "/replicaset.json") + "}";
  kcm::api::PaddedBuffer buf;
  buf.Append(frame);
  kcm::api::Decoder d;
  for (auto _ : state) {
    auto ev = kcm::api::ReplicaSetCodec().decode_watch_event(d, buf.Input());
    if (!ev.ok()) state.SkipWithError(ev.error().message.c_str());
    benchmark::DoNotOptimize(ev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_ReplicaSetWatchEvent);

// A ReplicaSet (Arg 0) or Deployment (Arg 1) watch frame as the informers decode it: plain (packing
// waits till the object stays unchanged: docs/design/compact-raw-json.md), with managedFields of a
// real object (test/testdata/api/*-server.json: the API server's bytes of a ReplicaSet and its
// Deployment from bench/deployment/scale_bench.sh, about half of each object managedFields).
void BM_AppsWatchEventPlain(benchmark::State& state) {
  const bool deployment = state.range(0) == 1;
  std::string frame = R"({"type":"MODIFIED","object":)" +
                      ReadFile(deployment ? KCM_API_TESTDATA "/deployment-server.json"
                                          : KCM_API_TESTDATA "/replicaset-server.json") +
                      "}";
  kcm::api::PaddedBuffer buf;
  buf.Append(frame);
  kcm::api::Decoder d;
  d.set_pack_raw_json(false);
  const kcm::api::Codec& codec =
      deployment ? kcm::api::DeploymentCodec() : kcm::api::ReplicaSetCodec();
  for (auto _ : state) {
    auto ev = codec.decode_watch_event(d, buf.Input());
    if (!ev.ok()) state.SkipWithError(ev.error().message.c_str());
    benchmark::DoNotOptimize(ev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_AppsWatchEventPlain)->Arg(0)->Arg(1);

// The parts of a ReplicaSet's cost that come from holding its raw JSON packed (shared_text.h): the
// deflate at decode (included in BM_ReplicaSetWatchEvent, whose decoder packs every decode after
// the first against it) and the inflate each write or template comparison starts with. The
// dictionary is the same ReplicaSet under another name, as between the ReplicaSets of one
// informer.
std::string RenamedReplicaSet() {
  std::string text = ReadFile(KCM_API_TESTDATA "/replicaset.json");
  for (size_t at = text.find("web"); at != std::string::npos; at = text.find("web", at + 3)) {
    text.replace(at, 3, "api");
  }
  return text;
}

void BM_ReplicaSetPack(benchmark::State& state) {
  const std::string text = ReadFile(KCM_API_TESTDATA "/replicaset.json");
  kcm::api::TextPacker packer;
  packer.Pack("ReplicaSet", RenamedReplicaSet(), "");
  size_t stored = 0;
  for (auto _ : state) {
    kcm::api::SharedText packed = packer.Pack("ReplicaSet", text, "");
    stored = packed.stored_size();
    benchmark::DoNotOptimize(packed);
  }
  state.counters["bytes_in"] = static_cast<double>(text.size());
  state.counters["bytes_packed"] = static_cast<double>(stored);
}
BENCHMARK(BM_ReplicaSetPack);

void BM_ReplicaSetInflate(benchmark::State& state) {
  const std::string text = ReadFile(KCM_API_TESTDATA "/replicaset.json");
  kcm::api::TextPacker packer;
  packer.Pack("ReplicaSet", RenamedReplicaSet(), "");
  const kcm::api::SharedText packed = packer.Pack("ReplicaSet", text, "");
  if (!packed.packed()) state.SkipWithError("not packed");
  for (auto _ : state) benchmark::DoNotOptimize(packed.str());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ReplicaSetInflate);

// A status write's body (EncodeReplicaSetStatus) from a ReplicaSet held plain (arg 0: the first
// of its kind, the dictionary) and packed (arg 1).
void BM_ReplicaSetStatusBody(benchmark::State& state) {
  kcm::api::Decoder d;
  auto first = kcm::api::DecodeReplicaSet(d, RenamedReplicaSet());
  auto second = kcm::api::DecodeReplicaSet(d, ReadFile(KCM_API_TESTDATA "/replicaset.json"));
  if (!first.ok() || !second.ok()) return state.SkipWithError("decode");
  const kcm::api::ReplicaSet& rs = state.range(0) == 0 ? **first : **second;
  kcm::api::ReplicaSetStatus status = rs.status;
  status.ready_replicas += 1;
  for (auto _ : state) benchmark::DoNotOptimize(kcm::api::EncodeReplicaSetStatus(rs, status));
}
BENCHMARK(BM_ReplicaSetStatusBody)->Arg(0)->Arg(1);

// A Deployment's template against its ReplicaSet's (the same template plus the hash label), both
// held packed as the informers hold them: what FindNewReplicaSet pays per ReplicaSet of a
// Deployment on every sync (the Deployment carries kubectl's last-applied annotation before its
// template, as a Deployment made by `kubectl apply` does).
void BM_EqualIgnoreHash(benchmark::State& state) {
  namespace json = kcm::api::json;
  auto d_doc = json::Parse(ReadFile(KCM_API_TESTDATA "/deployment.json"));
  auto rs_doc = json::Parse(ReadFile(KCM_API_TESTDATA "/replicaset.json"));
  if (!d_doc.ok() || !rs_doc.ok()) return state.SkipWithError("parse");
  json::Value tmpl = *json::GetPath(*d_doc, {"spec", "template"});
  (void)json::SetPath(tmpl, {"metadata", "labels", "pod-template-hash"},
                      json::Value::String("7d9f8b6c5d"));
  (void)json::SetPath(*rs_doc, {"spec", "template"}, std::move(tmpl));
  // Compact, as the API server writes both.
  const std::string d_text = json::Serialize(*d_doc);
  const std::string rs_text = json::Serialize(*rs_doc);
  auto renamed = [](std::string text) {
    for (size_t at = text.find("web"); at != std::string::npos; at = text.find("web", at + 3)) {
      text.replace(at, 3, "api");
    }
    return text;
  };
  kcm::api::Decoder d;
  // The first object of each kind becomes its dictionary (held plain).
  (void)kcm::api::DecodeDeployment(d, renamed(d_text));
  (void)kcm::api::DecodeReplicaSet(d, renamed(rs_text));
  auto dep = kcm::api::DecodeDeployment(d, d_text);
  auto rs = kcm::api::DecodeReplicaSet(d, rs_text);
  if (!dep.ok() || !rs.ok()) return state.SkipWithError("decode");
  if (!(*dep)->raw_json.packed() || !(*rs)->raw_json.packed()) {
    return state.SkipWithError("not packed");
  }
  for (auto _ : state) {
    auto eq = kcm::api::EqualIgnoreHash((*rs)->spec.pod_template, (*dep)->spec.pod_template);
    if (!eq.ok() || !*eq) return state.SkipWithError("templates differ");
    benchmark::DoNotOptimize(eq);
  }
}
BENCHMARK(BM_EqualIgnoreHash);

// The create body of an event as the recorder writes one per pod created (EncodeEvent).
void BM_EventBody(benchmark::State& state) {
  kcm::api::Event e;
  e.metadata.name = "web-7d9f8b6c5d.187d4c8a1b2c3d4e";
  e.metadata.namespace_ = "bench-ours";
  e.involved_object = {"ReplicaSet",
                       "bench-ours",
                       "web-7d9f8b6c5d",
                       "8a7b6c5d-4e3f-2a1b-0c9d-000000000001",
                       "apps/v1",
                       "12345",
                       ""};
  e.reason = "SuccessfulCreate";
  e.message = "Created pod: web-7d9f8b6c5d-x7k2p";
  e.source.component = "replicaset-controller";
  e.first_timestamp = e.last_timestamp = kcm::api::Time{} + std::chrono::seconds(1764600000);
  e.count = 1;
  e.type = "Normal";
  e.reporting_component = "replicaset-controller";
  for (auto _ : state) benchmark::DoNotOptimize(e.ToJson());
}
BENCHMARK(BM_EventBody);

// --- The same pod in both encodings: test/testdata/api/pod-protobuf.{json,pb}, one pod created on
// kube-apiserver v1.37.2 from the reference pod and read back as JSON and as protobuf.

std::string ServerPodJson() {
  return ReadFile(KCM_API_TESTDATA "/pod-protobuf.json");
}
std::string ServerPodProtobuf() {
  return ReadFile(KCM_API_TESTDATA "/pod-protobuf.pb");
}

// simdjson's DOM parse (its full, validating parse into a tree; no record built): the reference.
void DomParse(benchmark::State& state, const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  for (auto _ : state) {
    simdjson::dom::element doc;
    if (parser.parse(padded).get(doc) != simdjson::SUCCESS) state.SkipWithError("DOM parse failed");
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(json.size()));
}
void BM_SimdjsonDomPod10k(benchmark::State& state) {
  DomParse(state, ReadFile(KCM_API_TESTDATA "/pod-10k.json"));
}
BENCHMARK(BM_SimdjsonDomPod10k);
void BM_SimdjsonDomServerPod(benchmark::State& state) {
  DomParse(state, ServerPodJson());
}
BENCHMARK(BM_SimdjsonDomServerPod);

// Our JSON decoder on the server pod (a watch frame, padded buffer): like for like with protobuf.
void BM_ServerPodWatchEventJson(benchmark::State& state) {
  DecodeWatchFrame(state, R"({"type":"MODIFIED","object":)" + ServerPodJson() + "}");
}
BENCHMARK(BM_ServerPodWatchEventJson);

// One enveloped Pod (a GET answer) into the pruned record.
void BM_ServerPodProtobuf(benchmark::State& state) {
  kcm::api::Decoder decoder;
  const std::string body = ServerPodProtobuf();
  for (auto _ : state) {
    auto pod = kcm::api::DecodePodProtobuf(decoder, body);
    if (!pod.ok()) state.SkipWithError(pod.error().message.c_str());
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_ServerPodProtobuf);

// A watch frame as the API server sends it (length prefix stripped), from the recorded stream.
void BM_ServerPodWatchEventProtobuf(benchmark::State& state) {
  kcm::api::Decoder decoder;
  const std::string stream = ReadFile(KCM_API_TESTDATA "/pod-watch-protobuf.pb");
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<uint8_t>(stream[i]);
  const std::string frame = stream.substr(4, n);
  for (auto _ : state) {
    auto ev = kcm::api::PodCodec().decode_watch_event_protobuf(decoder, frame);
    if (!ev.ok()) state.SkipWithError(ev.error().message.c_str());
    benchmark::DoNotOptimize(ev);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(frame.size()));
}
BENCHMARK(BM_ServerPodWatchEventProtobuf);

using kcm::api::testing::Bytes;

// A PodList of 500 copies of the server pod, enveloped as the API server sends it.
void BM_PodList500Protobuf(benchmark::State& state) {
  kcm::api::Decoder decoder;
  const std::string body = ServerPodProtobuf();
  std::string pod;  // the envelope's raw field: the Pod message
  kcm::api::protobuf::WireReader reader(std::string_view(body).substr(4));
  kcm::api::protobuf::WireField f;
  while (reader.Next(&f)) {
    if (f.number == 2) pod.assign(f.bytes);
  }
  std::string list = Bytes(1, Bytes(2, "1") + Bytes(3, "x"));
  for (int i = 0; i < 500; ++i) list += Bytes(2, pod);
  const std::string enveloped = std::string(kcm::api::kProtobufMagic) +
                                Bytes(1, Bytes(1, "v1") + Bytes(2, "PodList")) + Bytes(2, list);
  for (auto _ : state) {
    auto l = kcm::api::PodCodec().decode_list_protobuf(decoder, enveloped);
    if (!l.ok() || l->items.size() != 500) state.SkipWithError("list decode failed");
    benchmark::DoNotOptimize(l);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(enveloped.size()));
}
BENCHMARK(BM_PodList500Protobuf)->Unit(benchmark::kMillisecond);

// The console table, then the decoders' speed relative to simdjson's DOM parse of the same pod.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      // With repetitions, the median stands for the family; otherwise the (last) run.
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Aggregate && !median) continue;
      if (median || !medians_.count(r.run_name.function_name)) {
        cpu_ns_[r.run_name.function_name] = r.GetAdjustedCPUTime();
        if (median) medians_[r.run_name.function_name] = true;
      }
    }
  }

  void PrintRatios() const {
    auto ns = [&](const char* name) {
      auto it = cpu_ns_.find(name);
      return it == cpu_ns_.end() ? 0.0 : it->second;
    };
    const double dom = ns("BM_SimdjsonDomServerPod");
    const double dom10k = ns("BM_SimdjsonDomPod10k");
    const double json = ns("BM_ServerPodWatchEventJson");
    const double pb = ns("BM_ServerPodProtobuf");
    const double pb_watch = ns("BM_ServerPodWatchEventProtobuf");
    if (dom <= 0 || json <= 0 || pb <= 0 || pb_watch <= 0) return;
    const double json_bytes = static_cast<double>(ServerPodJson().size());
    const double pb_bytes = static_cast<double>(ServerPodProtobuf().size());
    auto gbps = [](double bytes, double ns_per_op) { return bytes / ns_per_op; };
    std::printf("\nSame pod (test/testdata/api/pod-protobuf.*): JSON %.0f B, protobuf %.0f B\n",
                json_bytes, pb_bytes);
    if (dom10k > 0) {
      std::printf(
          "  simdjson DOM parse, reference pod-10k.json:  %.2f GB/s\n",
          gbps(static_cast<double>(ReadFile(KCM_API_TESTDATA "/pod-10k.json").size()), dom10k));
    }
    std::printf("  simdjson DOM parse, JSON:          %7.0f pods/s  %.2f GB/s of JSON\n", 1e9 / dom,
                gbps(json_bytes, dom));
    std::printf("  our JSON watch-event decode:       %7.0f pods/s  %.2fx DOM\n", 1e9 / json,
                dom / json);
    std::printf(
        "  our protobuf Pod decode:           %7.0f pods/s  %.2fx DOM (%.2f GB/s of "
        "protobuf = %.2fx DOM's bytes/s)\n",
        1e9 / pb, dom / pb, gbps(pb_bytes, pb), gbps(pb_bytes, pb) / gbps(json_bytes, dom));
    std::printf("  our protobuf watch-event decode:   %7.0f pods/s  %.2fx DOM\n", 1e9 / pb_watch,
                dom / pb_watch);
  }

 private:
  std::map<std::string, double> cpu_ns_;  // CPU ns per op by benchmark function
  std::map<std::string, bool> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
