// Typed listers over an informer's Indexer (client-go's generated listers): PodLister,
// ReplicaSetLister, DeploymentLister. Results are the cache's shared immutable objects. Safe from
// any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pkg/api/deployment.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/cache/lister.h"

namespace kcm::informers {

template <typename T>
class TypedNamespaceLister {
 public:
  explicit TypedNamespaceLister(cache::GenericNamespaceLister lister)
      : lister_(std::move(lister)) {}
  std::vector<std::shared_ptr<const T>> List(const cache::Selector& selector = {}) const {
    return Cast(lister_.List(selector));
  }
  // NotFound (404) if absent.
  Result<std::shared_ptr<const T>> Get(const std::string& name) const {
    auto obj = lister_.Get(name);
    if (!obj.ok()) return obj.error();
    return std::static_pointer_cast<const T>(*obj);
  }

  static std::vector<std::shared_ptr<const T>> Cast(const std::vector<api::ObjectPtr>& objs) {
    std::vector<std::shared_ptr<const T>> out;
    out.reserve(objs.size());
    // The informer's reflector admits only objects of its kind, so the cast is safe.
    for (const auto& o : objs) out.push_back(std::static_pointer_cast<const T>(o));
    return out;
  }

 private:
  cache::GenericNamespaceLister lister_;
};

template <typename T>
class TypedLister {
 public:
  explicit TypedLister(std::shared_ptr<const cache::Indexer> indexer)
      : indexer_(indexer), lister_(std::move(indexer)) {}
  // Across all namespaces.
  std::vector<std::shared_ptr<const T>> List(const cache::Selector& selector = {}) const {
    return TypedNamespaceLister<T>::Cast(lister_.List(selector));
  }
  TypedNamespaceLister<T> ByNamespace(std::string ns) const {
    return TypedNamespaceLister<T>(lister_.ByNamespace(std::move(ns)));
  }
  const std::shared_ptr<const cache::Indexer>& indexer() const { return indexer_; }

 private:
  std::shared_ptr<const cache::Indexer> indexer_;
  cache::GenericLister lister_;
};

using PodLister = TypedLister<api::Pod>;
using ReplicaSetLister = TypedLister<api::ReplicaSet>;
using DeploymentLister = TypedLister<api::Deployment>;

}  // namespace kcm::informers
