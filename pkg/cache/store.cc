#include "pkg/cache/store.h"

#include <unordered_map>

#include "pkg/cache/indexer.h"
#include "pkg/cache/thread_safe_store.h"

namespace kcm::cache {
namespace {

// Store/Indexer by object: computes keys with key_func and delegates to a ThreadSafeStore.
class KeyedIndexer final : public Indexer {
 public:
  KeyedIndexer(KeyFunc key_func, Indexers indexers)
      : key_func_(std::move(key_func)), store_(std::move(indexers)) {}

  Status Add(api::ObjectPtr obj) override {
    store_.Add(key_func_(*obj), obj);
    return OkStatus();
  }
  Status Update(api::ObjectPtr obj) override {
    store_.Update(key_func_(*obj), obj);
    return OkStatus();
  }
  api::ObjectPtr Upsert(api::ObjectPtr obj) override {
    std::string key = key_func_(*obj);  // before obj is moved from
    return store_.Update(key, std::move(obj));
  }
  Status Delete(api::ObjectPtr obj) override {
    store_.Delete(key_func_(*obj));
    return OkStatus();
  }
  Status Replace(std::vector<api::ObjectPtr> items, const std::string&) override {
    std::unordered_map<std::string, api::ObjectPtr> by_key;
    by_key.reserve(items.size());
    for (api::ObjectPtr& obj : items) {
      std::string key = key_func_(*obj);
      by_key.insert_or_assign(std::move(key), std::move(obj));
    }
    store_.Replace(std::move(by_key));
    return OkStatus();
  }
  // A plain cache has nothing to resync; the DeltaFIFO is where resync means something.
  Status Resync() override { return OkStatus(); }

  std::vector<std::string> ListKeys() const override { return store_.ListKeys(); }
  api::ObjectPtr GetByKey(const std::string& key) const override { return store_.Get(key); }
  void ForEachKey(const std::function<void(const std::string&)>& fn) const override {
    store_.ForEachKey(fn);
  }
  std::vector<api::ObjectPtr> List() const override { return store_.List(); }
  api::ObjectPtr Get(const api::Object& obj) const override { return store_.Get(key_func_(obj)); }

  Result<std::vector<api::ObjectPtr>> Index(const std::string& index_name,
                                            const api::Object& obj) const override {
    return store_.Index(index_name, obj);
  }
  Result<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                             const std::string& value) const override {
    return store_.IndexKeys(index_name, value);
  }
  std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const override {
    return store_.ListIndexFuncValues(index_name);
  }
  Result<std::vector<api::ObjectPtr>> ByIndex(const std::string& index_name,
                                              const std::string& value) const override {
    return store_.ByIndex(index_name, value);
  }
  Indexers GetIndexers() const override { return store_.GetIndexers(); }
  Status AddIndexers(const Indexers& new_indexers) override {
    return store_.AddIndexers(new_indexers);
  }

 private:
  const KeyFunc key_func_;
  ThreadSafeStore store_;
};

}  // namespace

std::shared_ptr<Store> NewStore(KeyFunc key_func) {
  return std::make_shared<KeyedIndexer>(std::move(key_func), Indexers{});
}

std::shared_ptr<Indexer> NewIndexer(KeyFunc key_func, Indexers indexers) {
  return std::make_shared<KeyedIndexer>(std::move(key_func), std::move(indexers));
}

}  // namespace kcm::cache
