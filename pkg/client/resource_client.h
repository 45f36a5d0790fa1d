// ResourceClient: typed-verb access to one resource (a GroupVersionResource, namespaced or
// cluster-scoped) returning raw JSON bodies (client-go's dynamic ResourceInterface). Bodies are
// padded for simdjson (json_padding.h); decoding is pkg/api's job. Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/list_options.h"
#include "pkg/client/request_path.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/transport.h"
#include "pkg/client/watch_stream.h"
#include "pkg/util/result.h"

namespace kcm::client {

enum class PatchType { kJSONPatch, kMergePatch, kStrategicMergePatch };
std::string_view ContentTypeFor(PatchType type);

enum class PropagationPolicy { kDefault, kOrphan, kBackground, kForeground };

struct GetOptions {
  std::string resource_version;
};

// Create / Update / Patch options (metav1.CreateOptions etc.).
struct WriteOptions {
  bool dry_run = false;  // dryRun=All
  std::string field_manager;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  PropagationPolicy propagation_policy = PropagationPolicy::kDefault;
  bool dry_run = false;
};

// The DeleteOptions JSON body ({"kind":"DeleteOptions","apiVersion":"v1",...}).
std::string EncodeDeleteOptions(const DeleteOptions& options);

class ResourceClient {
 public:
  ResourceClient(std::shared_ptr<RestClient> client, GroupVersionResource gvr, bool namespaced);
  // A built-in resource, by its descriptor (api/resource.h).
  ResourceClient(std::shared_ptr<RestClient> client, const api::Resource& resource)
      : ResourceClient(std::move(client), GroupVersionResource::Of(resource), resource.namespaced) {
  }

  // `ns` is ignored for cluster-scoped resources; "" on a namespaced resource means all
  // namespaces (list/watch/deletecollection only).
  Result<std::string> Get(std::string_view ns, std::string_view name, const GetOptions& opts = {},
                          std::stop_token stop = {});
  // One page, exactly as asked. Reading every page is cache::ListAllPages (upstream's pager).
  // `accept` ("" = JSON) may negotiate another encoding; *content_type (if not null) receives
  // the answer's.
  Result<std::string> List(std::string_view ns, const api::ListOptions& opts,
                           std::stop_token stop = {}, std::string_view accept = {},
                           std::string* content_type = nullptr);
  // The same request, its answer's body handed to `sink` as it arrives (the sink's Begin gets
  // the answer's Content-Type); errors as List's.
  Status ListStreaming(std::string_view ns, const api::ListOptions& opts, BodySink& sink,
                       std::stop_token stop = {}, std::string_view accept = {});
  // The stream tells which framing the server chose (WatchStream::protobuf()).
  Result<std::unique_ptr<WatchStream>> Watch(std::string_view ns, const api::ListOptions& opts,
                                             std::stop_token stop = {},
                                             std::string_view accept = {});

  Result<std::string> Create(std::string_view ns, std::string body, const WriteOptions& opts = {},
                             std::stop_token stop = {});
  // `count` creates of the same body (a generateName'd pod) at once, from this thread
  // (RestClient::DoAll): each answer is what Create would have returned.
  std::vector<CallAnswer> CreateMany(std::string_view ns, const std::string& body, int count,
                                     const WriteOptions& opts = {}, std::stop_token stop = {});
  Result<std::string> Update(std::string_view ns, std::string_view name, std::string body,
                             const WriteOptions& opts = {}, std::stop_token stop = {});
  Result<std::string> UpdateStatus(std::string_view ns, std::string_view name, std::string body,
                                   const WriteOptions& opts = {}, std::stop_token stop = {});
  Result<std::string> Patch(std::string_view ns, std::string_view name, PatchType type,
                            std::string body, const WriteOptions& opts = {},
                            std::string_view subresource = "", std::stop_token stop = {});
  // Returns the server's answer body (the object being finalized, or a Status).
  Result<std::string> Delete(std::string_view ns, std::string_view name,
                             const DeleteOptions& opts = {}, std::stop_token stop = {});
  // The deletes of `names` at once, from this thread (RestClient::DoAll), answers in that order.
  std::vector<CallAnswer> DeleteMany(std::string_view ns, std::span<const std::string> names,
                                     const DeleteOptions& opts = {}, std::stop_token stop = {});
  Result<std::string> DeleteCollection(std::string_view ns, const DeleteOptions& opts,
                                       const api::ListOptions& list_opts,
                                       std::stop_token stop = {});

  const GroupVersionResource& gvr() const { return gvr_; }
  const RestConfig& config() const { return client_->config(); }
  bool namespaced() const { return namespaced_; }

 private:
  std::string Path(std::string_view ns, std::string_view name = "",
                   std::string_view subresource = "") const;

  std::shared_ptr<RestClient> client_;
  GroupVersionResource gvr_;
  bool namespaced_;
};

}  // namespace kcm::client
