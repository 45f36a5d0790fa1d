// Helpers for the informer integration tests and benchmarks: an admin client on the testbed,
// namespaces, parallel pod/ConfigMap writers, a fresh LIST as name → resourceVersion, and a
// ListerWatcher wrapper that can hold the watch down and records what the reflector saw.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/listwatch.h"
#include "pkg/cache/pager.h"
#include "pkg/cache/reflector.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/informers/resource_lister_watcher.h"

namespace kcm::informers::testing {

inline const client::GroupVersionResource kPodsGvr{"", "v1", "pods"};
inline const client::GroupVersionResource kConfigMapsGvr{"", "v1", "configmaps"};
inline const client::GroupVersionResource kNamespacesGvr{"", "v1", "namespaces"};

// No client-side limit: the API server is the bottleneck we measure against.
inline std::shared_ptr<client::RestClient> AdminClient(const std::string& server,
                                                       const std::string& ca_file,
                                                       const std::string& token) {
  client::RestConfig config{.host = server, .ca_file = ca_file, .bearer_token = token, .qps = -1};
  auto c = client::RestClient::Create(config);
  return c.ok() ? *c : nullptr;
}

inline Status CreateNamespace(const std::shared_ptr<client::RestClient>& c, const std::string& ns) {
  client::ResourceClient namespaces(c, kNamespacesGvr, false);
  auto r = namespaces.Create(
      "", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  if (!r.ok() && !errors::IsAlreadyExists(r.error())) return r.error();
  return OkStatus();
}

// Deleting a namespace leaves it Terminating (no namespace controller runs in the testbed), so
// the objects are deleted explicitly first.
inline void DeleteNamespace(const std::shared_ptr<client::RestClient>& c, const std::string& ns) {
  for (const auto& gvr : {kPodsGvr, kConfigMapsGvr}) {
    client::ResourceClient rc(c, gvr, true);
    (void)rc.DeleteCollection(ns, {.grace_period_seconds = 0}, {});
  }
  client::ResourceClient namespaces(c, kNamespacesGvr, false);
  (void)namespaces.Delete("", ns);
}

inline std::string UniqueName(const std::string& prefix) {
  return prefix + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
}

// A pod no scheduler picks up (schedulerName of nobody) and no KWOK node matches, so the testbed
// stays quiet: after create, nothing but this test writes it.
inline std::string PodManifest(const std::string& name, const std::string& value = "0") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":"informer-test"},"annotations":{"v":")" + value +
         R"("}},"spec":{"schedulerName":"kcm-nobody","nodeSelector":{"kcm-test":"no-such-node"},)"
         R"("containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}})";
}

inline std::string ConfigMapManifest(const std::string& name, const std::string& value) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"("},"data":{"v":")" + value + R"("}})";
}

// A merge patch that changes an annotation: a new resourceVersion, same object.
inline std::string AnnotationPatch(const std::string& value) {
  return R"({"metadata":{"annotations":{"v":")" + value + R"("}}})";
}

// Runs fn(i) for i in [0, n) on `threads` threads; returns the first error.
inline Status ParallelFor(int n, int threads, const std::function<Status(int)>& fn) {
  std::atomic<int> next{0};
  std::mutex mu;
  Status first;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        Status s = fn(i);
        if (!s.ok()) {
          std::lock_guard lock(mu);
          if (first.ok()) first = s;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return first;
}

// Creates pods name-0 … name-(n-1) in ns; retries each create a few times (429/5xx under load).
inline Status CreatePods(const std::shared_ptr<client::RestClient>& c, const std::string& ns,
                         const std::string& prefix, int n, int threads) {
  client::ResourceClient pods(c, kPodsGvr, true);
  return ParallelFor(n, threads, [&](int i) -> Status {
    const std::string name = prefix + "-" + std::to_string(i);
    Result<std::string> r = Error::Local("NotTried", "");
    for (int attempt = 0; attempt < 5; ++attempt) {
      r = pods.Create(ns, PodManifest(name));
      if (r.ok() || errors::IsAlreadyExists(r.error())) return OkStatus();
      std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
    }
    return r.error();
  });
}

using Versions = std::map<std::string, std::string>;  // "ns/name" → resourceVersion

// A fresh, consistent LIST (resourceVersion "" = quorum read from etcd), page by page.
inline Result<Versions> FreshList(const std::shared_ptr<client::RestClient>& c,
                                  const client::GroupVersionResource& gvr, const std::string& ns,
                                  const api::Codec& codec, std::string* list_rv = nullptr) {
  informers::ResourceListerWatcher lw(std::make_shared<client::ResourceClient>(c, gvr, true), ns,
                                      codec);
  auto list = cache::ListAllPages(lw, {}, cache::kDefaultPageSize, {});
  if (!list.ok()) return list.error();
  Versions out;
  for (const auto& o : list->items) {
    out[o->Meta().namespace_ + "/" + o->Meta().name] = o->Meta().resource_version;
  }
  if (list_rv) *list_rv = list->resource_version;
  return out;
}

inline Versions StoreVersions(const cache::Indexer& indexer, const std::string& ns) {
  Versions out;
  for (const auto& o : indexer.List()) {
    if (o->Meta().namespace_ == ns) {
      out[o->Meta().namespace_ + "/" + o->Meta().name] = o->Meta().resource_version;
    }
  }
  return out;
}

// Bounded wait for the store to equal `want`; returns the last store seen.
inline bool WaitForStore(const cache::Indexer& indexer, const std::string& ns, const Versions& want,
                         std::chrono::seconds limit, Versions* last) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    *last = StoreVersions(indexer, ns);
    if (*last == want) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// "first difference" for failure messages.
inline std::string Diff(const Versions& want, const Versions& got) {
  std::string out = "want " + std::to_string(want.size()) + " got " + std::to_string(got.size());
  int shown = 0;
  for (const auto& [k, v] : want) {
    auto it = got.find(k);
    if (it == got.end() || it->second != v) {
      out += "; " + k + " want rv " + v + " got " + (it == got.end() ? "missing" : it->second);
      if (++shown == 5) return out;
    }
  }
  for (const auto& [k, v] : got) {
    if (!want.count(k)) {
      out += "; " + k + " unexpected (rv " + v + ")";
      if (++shown == 5) return out;
    }
  }
  return out;
}

// Wraps a ListerWatcher: counts LISTs, records 410s the reflector received, and can hold the
// watch down (Watch() blocks while held; the current stream can be cut).
class ObservedListerWatcher final : public cache::ListerWatcher {
 public:
  explicit ObservedListerWatcher(std::shared_ptr<cache::ListerWatcher> inner)
      : inner_(std::move(inner)) {}
  ~ObservedListerWatcher() override { Release(); }

  Result<api::ObjectList> List(const api::ListOptions& options) override {
    ++lists_;
    if (options.continue_token.empty() && options.resource_version.empty()) ++quorum_lists_;
    auto r = inner_->List(options);
    if (!r.ok() && cache::IsExpiredOrGone(r.error())) ++expired_;
    return r;
  }

  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions& options) override {
    {
      std::unique_lock lock(mu_);
      // Bounded so a forgotten Release cannot hang a test forever.
      cv_.wait_for(lock, std::chrono::minutes(5), [&] { return !held_; });
    }
    ++watches_;
    auto w = inner_->Watch(options);
    if (!w.ok()) {
      if (cache::IsExpiredOrGone(w.error())) ++expired_;
      return w;
    }
    auto observed = std::make_unique<Observed>(std::move(*w), this);
    std::lock_guard lock(mu_);
    current_ = observed.get();
    return std::unique_ptr<cache::WatchInterface>(std::move(observed));
  }

  // Holds new watches and cuts the open one: the informer is "down" from now on.
  void HoldAndCut() {
    std::lock_guard lock(mu_);
    held_ = true;
    if (current_) current_->Stop();
  }
  void Release() {
    std::lock_guard lock(mu_);
    held_ = false;
    cv_.notify_all();
  }

  int lists() const { return lists_; }
  int quorum_lists() const { return quorum_lists_; }
  int watches() const { return watches_; }
  int expired() const { return expired_; }

 private:
  class Observed final : public cache::WatchInterface {
   public:
    Observed(std::unique_ptr<cache::WatchInterface> w, ObservedListerWatcher* owner)
        : w_(std::move(w)), owner_(owner) {}
    ~Observed() override {
      std::lock_guard lock(owner_->mu_);
      if (owner_->current_ == this) owner_->current_ = nullptr;
    }
    Result<std::optional<api::WatchEvent>> Next() override {
      auto e = w_->Next();
      if (e.ok() && e->has_value() && (*e)->type == api::WatchEventType::kError &&
          cache::IsExpiredOrGone((*e)->error)) {
        ++owner_->expired_;
      }
      if (!e.ok() && cache::IsExpiredOrGone(e.error())) ++owner_->expired_;
      return e;
    }
    void Stop() override { w_->Stop(); }

   private:
    std::unique_ptr<cache::WatchInterface> w_;
    ObservedListerWatcher* owner_;
  };

  std::shared_ptr<cache::ListerWatcher> inner_;
  std::atomic<int> lists_{0}, quorum_lists_{0}, watches_{0}, expired_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  Observed* current_ = nullptr;
};

}  // namespace kcm::informers::testing
