// ResourceListerWatcher: the production ListerWatcher — LIST and WATCH through a ResourceClient,
// decoded by the kind's api::Codec straight from the padded response buffers. Errors pass to the
// reflector unchanged: it classifies them by reason and transport cause (pkg/util/errors.h). Called
// from one reflector thread (List, Watch, and the stream's Next); WatchInterface::Stop from any
// thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>

#include "pkg/api/codec.h"
#include "pkg/api/decoder.h"
#include "pkg/api/intern_table.h"
#include "pkg/cache/listwatch.h"
#include "pkg/client/resource_client.h"

namespace kcm::informers {

// Adjusts list/watch options (label/field selectors) for every request of an informer.
using TweakListOptionsFunc = std::function<void(api::ListOptions&)>;

class ResourceListerWatcher final : public cache::ListerWatcher {
 public:
  // `stop` cancels in-flight requests (the reflector's stop cannot reach them through the
  // ListerWatcher interface); a LIST to a server that never answers would otherwise block
  // shutdown for as long as the client has no request timeout.
  // `interner`: the table its decoders share labels, owner references and strings through; one
  // of its own when null. A SharedInformerFactory gives all its informers one table, so a pod
  // shares its labels with its ReplicaSet's template labels.
  ResourceListerWatcher(std::shared_ptr<client::ResourceClient> client, std::string ns,
                        const api::Codec& codec, TweakListOptionsFunc tweak = {},
                        std::stop_token stop = {},
                        std::shared_ptr<api::InternTable> interner = nullptr);

  Result<api::ObjectList> List(const api::ListOptions& options) override;
  // Decodes the answer as it arrives; on_item sees each item as soon as it is decoded.
  Result<api::ObjectList> List(const api::ListOptions& options,
                               const cache::ListItemFunc& on_item) override;
  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions& options) override;

  // Whether objects read from watches keep their raw JSON packed (api::Decoder::
  // set_pack_raw_json; on by default). Listed objects are always packed. SharedInformerFactory
  // turns it off where its informer packs an object once it has stayed unchanged
  // (SharedIndexInformerOptions::compact), so that an object updated many times in a row is not
  // deflated at every update and inflated at every write built from it.
  void set_pack_watched_objects(bool pack);

 private:
  std::shared_ptr<client::ResourceClient> client_;
  std::string namespace_;
  const api::Codec& codec_;
  TweakListOptionsFunc tweak_;
  std::stop_token stop_;
  std::string accept_;  // the Accept of LIST and WATCH; "" = JSON
  // For watch frames, shared by the watches this ListerWatcher opens (one at a time, on the
  // reflector thread; the mutex makes that contract checkable rather than assumed). List uses a
  // fresh decoder per call so a big LIST's buffers do not outlive it. All of them intern labels
  // and owner references through one table, so a relisted pod shares its sets with the watched
  // ones (and pods of one ReplicaSet share theirs across LIST and WATCH).
  std::shared_ptr<api::InternTable> interner_;
  std::shared_ptr<std::mutex> decoder_mu_ = std::make_shared<std::mutex>();
  std::shared_ptr<api::Decoder> decoder_ = std::make_shared<api::Decoder>(interner_);
};

}  // namespace kcm::informers
