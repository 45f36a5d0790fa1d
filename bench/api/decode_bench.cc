// P1: decode throughput of the hot read path (WATCH frames and LIST pages) on one core.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "pkg/api/codec.h"
#include "pkg/api/json_input.h"

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
void BM_PodWatchEvent(benchmark::State& state) {
  std::string frame = PodFrame();
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

}  // namespace

BENCHMARK_MAIN();
