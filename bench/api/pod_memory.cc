// Bytes per cached Pod record: sizeof(Pod) + the heap its members own (counted with a replaced
// global operator new, usable sizes from malloc), plus the shared_ptr control block.
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sstream>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/pod.h"

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

int main() {
  std::ifstream in(KCM_API_TESTDATA "/pod-10k.json", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pod_json = ss.str();
  kcm::api::Decoder d;
  (void)kcm::api::DecodePod(d, pod_json);  // warm the decoder's parser buffers
  constexpr int kPods = 10000;
  std::vector<kcm::api::ObjectPtr> cache;
  cache.reserve(kPods);
  int64_t before = g_heap_bytes.load();
  for (int i = 0; i < kPods; ++i) {
    auto p = kcm::api::DecodePod(d, pod_json);
    if (!p.ok()) return 1;
    cache.push_back(std::move(p).value());
  }
  int64_t per_pod = (g_heap_bytes.load() - before) / kPods;
  std::printf(
      "sizeof(Pod)=%zu sizeof(ObjectMeta)=%zu heap per cached pod (incl. Pod object and "
      "shared_ptr control block, malloc usable sizes)=%lld bytes\n",
      sizeof(kcm::api::Pod), sizeof(kcm::api::ObjectMeta), static_cast<long long>(per_pod));
  return 0;
}
