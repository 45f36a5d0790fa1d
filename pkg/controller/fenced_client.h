// FencedTypedClient<T>: a TypedClient decorator that refuses every write once the WriteFence is
// closed (the leader lost its lease, or the daemon is shutting down) or to a namespace it does
// not admit, locally and before the inner client is called, and holds the admission until the
// answer is in; reads pass through. NewFencedClient builds the daemon's client: a
// RestTypedClient cancelled by the fence's token (so a rate-limiter wait or a request in flight
// ends too) inside the fence. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "pkg/controller/typed_client.h"
#include "pkg/controller/write_fence.h"

namespace kcm::controller {

template <typename T>
class FencedTypedClient final : public TypedClient<T> {
 public:
  using typename TypedClient<T>::Ptr;
  using typename TypedClient<T>::StatusType;

  FencedTypedClient(std::shared_ptr<TypedClient<T>> inner, WriteFence fence)
      : inner_(std::move(inner)), fence_(std::move(fence)) {}

  Result<Ptr> Get(std::string_view ns, std::string_view name) override {
    return inner_->Get(ns, name);
  }
  Result<Ptr> Create(std::string_view ns, std::string body) override {
    auto pass = fence_.Admit(Describe("create", ns, ""), ns);
    if (!pass.ok()) return pass.error();
    return inner_->Create(ns, std::move(body));
  }
  Result<Ptr> Update(std::string_view ns, std::string_view name, std::string body) override {
    auto pass = fence_.Admit(Describe("update", ns, name), ns);
    if (!pass.ok()) return pass.error();
    return inner_->Update(ns, name, std::move(body));
  }
  Result<Ptr> UpdateStatus(const T& obj, const StatusType& status) override {
    auto pass =
        fence_.Admit(Describe("update status of", obj.metadata.namespace_, obj.metadata.name),
                     obj.metadata.namespace_);
    if (!pass.ok()) return pass.error();
    return inner_->UpdateStatus(obj, status);
  }
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override {
    auto pass = fence_.Admit(Describe("patch", ns, name), ns);
    if (!pass.ok()) return pass.error();
    return inner_->Patch(ns, name, patch);
  }
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override {
    auto pass = fence_.Admit(Describe("delete", ns, name), ns);
    if (!pass.ok()) return pass.error();
    return inner_->Delete(ns, name, uid);
  }

 private:
  // "update replicaset ns/name" (the fence's refusal names the write).
  static std::string Describe(std::string_view verb, std::string_view ns, std::string_view name) {
    std::string resource(ResourceTraits<T>::kResource.resource);
    resource.pop_back();  // "replicasets" -> "replicaset"
    std::string out = std::string(verb) + " " + resource + " " + std::string(ns);
    if (!name.empty()) out += "/" + std::string(name);
    return out;
  }

  std::shared_ptr<TypedClient<T>> inner_;
  WriteFence fence_;
};

// The client a controller writes `T` with: through `client`, fenced and cancelled by `fence`.
template <typename T>
std::shared_ptr<TypedClient<T>> NewFencedClient(std::shared_ptr<client::RestClient> client,
                                                WriteFence fence) {
  auto rest = std::make_shared<RestTypedClient<T>>(std::move(client), fence.token());
  return std::make_shared<FencedTypedClient<T>>(std::move(rest), std::move(fence));
}

}  // namespace kcm::controller
