// Bytes per cached Pod record: sizeof(Pod) + the heap its members own (counted with a replaced
// global operator new, usable sizes from malloc), plus the shared_ptr control block, plus the
// share of the interned label sets and owner-reference lists (and their intern-table slots).
// Pods are decoded through one Decoder, as a lister-watcher decodes them, in two sets:
//   reference: 10,000 copies of test/testdata/api/pod-10k.json (pods of one ReplicaSet), its
//              protobuf form written by the minimal encoder below;
//   fixture:   10,000 copies of test/testdata/api/pod-protobuf.pb (protobuf only);
//   mix:       10,000 pods across 100 ReplicaSets (per ReplicaSet its own name, uid and
//              pod-template-hash label; per pod its own name and uid; 20 nodes),
// each read from JSON and from protobuf.
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/intern_table.h"
#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"

namespace {
std::atomic<int64_t> g_heap_bytes{0};  // test-tool counter, not product state
}

void* operator new(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  g_heap_bytes += static_cast<int64_t>(malloc_usable_size(p));
  return p;
}
void operator delete(void* p) noexcept {
  if (p != nullptr) g_heap_bytes -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  operator delete(p);
}

namespace {

using kcm::api::Decoder;
using kcm::api::ObjectPtr;

constexpr int kPods = 10000;
constexpr int kReplicaSets = 100;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t pos = s->find(from); pos != std::string::npos; pos = s->find(from, pos + to.size())) {
    s->replace(pos, from.size(), to);
  }
}

// Lower-case hex of `n`, `width` digits.
std::string Hex(uint64_t n, int width) {
  std::string out(width, '0');
  for (int i = width - 1; i >= 0; --i, n >>= 4) out[i] = "0123456789abcdef"[n & 15];
  return out;
}

std::string Uuid(uint64_t a, uint64_t b) {
  return Hex(a >> 32, 8) + "-" + Hex(a >> 16, 4) + "-" + Hex(a, 4) + "-" + Hex(b >> 48, 4) + "-" +
         Hex(b, 12);
}

struct MixPod {
  std::string hash, suffix, uid, rs_uid, node;
};

MixPod Mix(int i) {
  const int rs = i % kReplicaSets;
  return MixPod{Hex(0x7d9f8b6c00ull + static_cast<uint64_t>(rs) * 7919, 10),
                Hex(static_cast<uint64_t>(i) * 2654435761u, 5),
                Uuid(0x2f1c7a8e00000000ull + static_cast<uint64_t>(i), 0x9a0b000000000000ull + i),
                Uuid(0x8a7b6c5d00000000ull + static_cast<uint64_t>(rs), 0x0c9d000000000000ull + rs),
                "node-" + std::to_string(i % 20)};
}

// The reference pod's JSON with the mix pod's identity substituted.
std::string MixJson(const std::string& reference, int i) {
  MixPod m = Mix(i);
  std::string s = reference;
  ReplaceAll(&s, "7d9f8b6c5d", m.hash);  // name, generateName, label, owner name
  ReplaceAll(&s, "x2k4q", m.suffix);
  ReplaceAll(&s, "2f1c7a8e-5b3d-4e6f-9a0b-1c2d3e4f5a6b", m.uid);
  ReplaceAll(&s, "8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d", m.rs_uid);
  ReplaceAll(&s, "\"node-17\"", "\"" + m.node + "\"");
  return s;
}

// --- a minimal protobuf writer for the mix (field numbers as pkg/api/pod_protobuf.cc reads) ---
void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void Bytes(std::string* out, int field, const std::string& b) {
  Varint(out, static_cast<uint64_t>(field) << 3 | 2);
  Varint(out, b.size());
  out->append(b);
}
void VarintField(std::string* out, int field, uint64_t v) {
  Varint(out, static_cast<uint64_t>(field) << 3);
  Varint(out, v);
}

// The pod of `m` as the API server's protobuf: the fields pod-10k.json has that the decoder keeps.
std::string PodProtobuf(const MixPod& m) {
  const std::string rs_name = "web-" + m.hash;
  std::string meta;
  Bytes(&meta, 1, rs_name + "-" + m.suffix);
  Bytes(&meta, 2, rs_name + "-");
  Bytes(&meta, 3, "prod");
  Bytes(&meta, 5, m.uid);
  Bytes(&meta, 6, "123456789");
  std::string ts;
  VarintField(&ts, 1, 1795946400);
  Bytes(&meta, 8, ts);
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"app", "web"},
                             {"pod-template-hash", m.hash},
                             {"tier", "frontend"},
                             {"version", "v1.2.3"}}) {
    std::string entry;
    Bytes(&entry, 1, k);
    Bytes(&entry, 2, v);
    Bytes(&meta, 11, entry);
  }
  std::string ref;
  Bytes(&ref, 1, "ReplicaSet");
  Bytes(&ref, 3, rs_name);
  Bytes(&ref, 4, m.rs_uid);
  Bytes(&ref, 5, "apps/v1");
  VarintField(&ref, 6, 1);
  VarintField(&ref, 7, 1);
  Bytes(&meta, 13, ref);
  std::string spec, status, cond, pod;
  Bytes(&spec, 10, m.node);
  Bytes(&status, 1, "Running");
  Bytes(&cond, 1, "Ready");
  Bytes(&cond, 2, "True");
  Bytes(&status, 2, cond);
  Bytes(&pod, 1, meta);
  Bytes(&pod, 2, spec);
  Bytes(&pod, 3, status);
  std::string type_meta, unknown;
  Bytes(&type_meta, 1, "v1");
  Bytes(&type_meta, 2, "Pod");
  Bytes(&unknown, 1, type_meta);
  Bytes(&unknown, 2, pod);
  return std::string(kcm::api::kProtobufMagic) + unknown;
}

// pod-10k.json's identity.
const MixPod kReference{"7d9f8b6c5d", "x2k4q", "2f1c7a8e-5b3d-4e6f-9a0b-1c2d3e4f5a6b",
                        "8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d", "node-17"};

// Decodes kPods pods (body(i) → pod) through one Decoder and prints the heap they hold per pod.
template <typename BodyFn, typename DecodeFn>
bool Measure(const char* set, const char* format, BodyFn body, DecodeFn decode) {
  Decoder d;
  std::vector<std::string> bodies;
  bodies.reserve(kPods);
  for (int i = 0; i < kPods; ++i) bodies.push_back(body(i));
  // Warm the decoder's parser buffers and scratch with a pod of its own (kept out of the count,
  // then dropped so the first counted pods do not share its label set).
  if (!decode(d, bodies[0]).ok()) return false;
  std::vector<ObjectPtr> cache;
  cache.reserve(kPods);
  const int64_t before = g_heap_bytes.load();
  for (int i = 0; i < kPods; ++i) {
    auto p = decode(d, bodies[i]);
    if (!p.ok()) {
      std::fprintf(stderr, "%s/%s: pod %d: %s\n", set, format, i, p.error().ToString().c_str());
      return false;
    }
    cache.push_back(std::move(p).value());
  }
  const int64_t per_pod = (g_heap_bytes.load() - before) / kPods;
  auto slots = d.interner().SlotCount();
  std::printf("set=%s format=%s pods=%d bytes_per_pod=%lld label_sets=%zu owner_ref_lists=%zu\n",
              set, format, kPods, static_cast<long long>(per_pod), slots.labels,
              slots.owner_references);
  return true;
}

}  // namespace

int main() {
  const std::string reference = ReadFile(KCM_API_TESTDATA "/pod-10k.json");
  const std::string reference_pb = PodProtobuf(kReference);
  // A pod fetched from kube-apiserver as protobuf (it also has a finalizer and a longer name).
  const std::string fixture_pb = ReadFile(KCM_API_TESTDATA "/pod-protobuf.pb");
  auto json = [](Decoder& d, const std::string& b) { return kcm::api::DecodePod(d, b); };
  auto pb = [](Decoder& d, const std::string& b) { return kcm::api::DecodePodProtobuf(d, b); };
  std::printf(
      "sizeof(Pod)=%zu sizeof(ObjectMeta)=%zu (heap per cached pod: Pod object, control "
      "block, owned strings, share of interned sets; malloc usable sizes)\n",
      sizeof(kcm::api::Pod), sizeof(kcm::api::ObjectMeta));
  auto same = [](const std::string& body) { return [&body](int) { return body; }; };
  bool ok = Measure("reference", "json", same(reference), json) &&
            Measure("reference", "protobuf", same(reference_pb), pb) &&
            Measure("fixture", "protobuf", same(fixture_pb), pb) &&
            Measure(
                "mix", "json", [&](int i) { return MixJson(reference, i); }, json) &&
            Measure(
                "mix", "protobuf", [](int i) { return PodProtobuf(Mix(i)); }, pb);
  return ok ? 0 : 1;
}
