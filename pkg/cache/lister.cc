#include "pkg/cache/lister.h"

namespace kcm::cache {
namespace {

// A lister miss is a 404 NotFound, as upstream's listers return (errors.NewNotFound).
Error NotFound(const std::string& key) {
  return errors::NewNotFound("", key);
}

Result<api::ObjectPtr> GetByKey(const Indexer& indexer, const std::string& key) {
  api::ObjectPtr obj = indexer.GetByKey(key);
  if (!obj) {
    return NotFound(key);
  }
  return obj;
}

}  // namespace

GenericLister::GenericLister(std::shared_ptr<const Indexer> indexer)
    : indexer_(std::move(indexer)) {}

std::vector<api::ObjectPtr> GenericLister::List(const Selector& selector) const {
  std::vector<api::ObjectPtr> out = indexer_->List();
  if (selector) {
    std::erase_if(out, [&](const api::ObjectPtr& obj) { return !selector(*obj); });
  }
  return out;
}

Result<api::ObjectPtr> GenericLister::Get(const std::string& name) const {
  return GetByKey(*indexer_, name);
}

GenericNamespaceLister GenericLister::ByNamespace(std::string ns) const {
  return GenericNamespaceLister(indexer_, std::move(ns));
}

GenericNamespaceLister::GenericNamespaceLister(std::shared_ptr<const Indexer> indexer,
                                               std::string ns)
    : indexer_(std::move(indexer)), namespace_(std::move(ns)) {}

std::vector<api::ObjectPtr> GenericNamespaceLister::List(const Selector& selector) const {
  std::vector<api::ObjectPtr> out;
  Result<std::vector<api::ObjectPtr>> indexed = indexer_->ByIndex(kNamespaceIndex, namespace_);
  if (indexed.ok()) {
    out = std::move(indexed).value();
  } else {
    // No namespace index: a full scan is slower but still correct.
    out = indexer_->List();
    std::erase_if(out,
                  [&](const api::ObjectPtr& obj) { return obj->Meta().namespace_ != namespace_; });
  }
  if (selector) {
    std::erase_if(out, [&](const api::ObjectPtr& obj) { return !selector(*obj); });
  }
  return out;
}

Result<api::ObjectPtr> GenericNamespaceLister::Get(const std::string& name) const {
  return GetByKey(*indexer_, namespace_.empty() ? name : namespace_ + "/" + name);
}

}  // namespace kcm::cache
