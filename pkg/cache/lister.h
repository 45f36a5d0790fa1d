// GenericLister: read-only queries over an informer's Indexer, the way controllers read the world
// (typed listers wrap it). Safe from any thread; results are shared immutable objects.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/cache/indexer.h"
#include "pkg/util/result.h"

namespace kcm::cache {

// Selects objects, e.g. a label selector's Matches; an empty Selector selects everything.
using Selector = std::function<bool(const api::Object&)>;

// Objects of one namespace. Uses the "namespace" index when the indexer has it.
class GenericNamespaceLister {
 public:
  GenericNamespaceLister(std::shared_ptr<const Indexer> indexer, std::string ns);
  std::vector<api::ObjectPtr> List(const Selector& selector = {}) const;
  // NotFound (404) if absent.
  Result<api::ObjectPtr> Get(const std::string& name) const;

 private:
  std::shared_ptr<const Indexer> indexer_;
  std::string namespace_;
};

class GenericLister {
 public:
  explicit GenericLister(std::shared_ptr<const Indexer> indexer);
  // Across all namespaces.
  std::vector<api::ObjectPtr> List(const Selector& selector = {}) const;
  // A cluster-scoped object by name; NotFound (404) if absent.
  Result<api::ObjectPtr> Get(const std::string& name) const;
  GenericNamespaceLister ByNamespace(std::string ns) const;

 private:
  std::shared_ptr<const Indexer> indexer_;
};

}  // namespace kcm::cache
