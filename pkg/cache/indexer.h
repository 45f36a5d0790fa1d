// Indexer: a Store that also maintains secondary indexes (behaviour 5). The informer's cache;
// listers read it. Implementations are safe for concurrent use (readers share a lock, writers
// exclude).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pkg/cache/index.h"
#include "pkg/cache/store.h"

namespace kcm::cache {

class Indexer : public Store {
 public:
  // Objects that share any index value with obj under index_name. Unknown index → error.
  virtual Result<std::vector<api::ObjectPtr>> Index(const std::string& index_name,
                                                    const api::Object& obj) const = 0;
  // Keys of the objects indexed under value. Unknown index → error.
  virtual Result<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                                     const std::string& value) const = 0;
  // Every value currently present in the index (empty for an unknown index).
  virtual std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const = 0;
  // Objects indexed under value. Unknown index → error.
  virtual Result<std::vector<api::ObjectPtr>> ByIndex(const std::string& index_name,
                                                      const std::string& value) const = 0;
  // Adds obj or replaces the object of its key; returns the object replaced (null if none). One
  // key and one lookup where Get then Add/Update take two of each: the informer applies every
  // delta this way.
  virtual api::ObjectPtr Upsert(api::ObjectPtr obj) = 0;
  virtual Indexers GetIndexers() const = 0;
  // Adds index functions; existing items are indexed at once. A name already in use is an error.
  virtual Status AddIndexers(const Indexers& new_indexers) = 0;
};

// An Indexer over a ThreadSafeStore, keyed by key_func.
std::shared_ptr<Indexer> NewIndexer(KeyFunc key_func, Indexers indexers);

}  // namespace kcm::cache
