#include "pkg/client/resource_client.h"

#include "pkg/api/json.h"

namespace kcm::client {
namespace {

void AppendWriteOptions(const WriteOptions& opts, QueryParams* q) {
  if (opts.dry_run) q->emplace_back("dryRun", "All");
  if (!opts.field_manager.empty()) q->emplace_back("fieldManager", opts.field_manager);
}

}  // namespace

std::string_view ContentTypeFor(PatchType type) {
  switch (type) {
    case PatchType::kJSONPatch:
      return kContentTypeJSONPatch;
    case PatchType::kMergePatch:
      return kContentTypeMergePatch;
    case PatchType::kStrategicMergePatch:
      return kContentTypeStrategicMergePatch;
  }
  return kContentTypeMergePatch;
}

std::string EncodeDeleteOptions(const DeleteOptions& o) {
  std::string out = R"({"kind":"DeleteOptions","apiVersion":"v1")";
  if (o.grace_period_seconds) {
    out += ",\"gracePeriodSeconds\":" + std::to_string(*o.grace_period_seconds);
  }
  if (o.precondition_uid || o.precondition_resource_version) {
    out += ",\"preconditions\":{";
    bool first = true;
    if (o.precondition_uid) {
      out += "\"uid\":";
      api::json::AppendQuoted(*o.precondition_uid, &out);
      first = false;
    }
    if (o.precondition_resource_version) {
      if (!first) out += ',';
      out += "\"resourceVersion\":";
      api::json::AppendQuoted(*o.precondition_resource_version, &out);
    }
    out += '}';
  }
  switch (o.propagation_policy) {
    case PropagationPolicy::kDefault:
      break;
    case PropagationPolicy::kOrphan:
      out += ",\"propagationPolicy\":\"Orphan\"";
      break;
    case PropagationPolicy::kBackground:
      out += ",\"propagationPolicy\":\"Background\"";
      break;
    case PropagationPolicy::kForeground:
      out += ",\"propagationPolicy\":\"Foreground\"";
      break;
  }
  if (o.dry_run) out += ",\"dryRun\":[\"All\"]";
  out += '}';
  return out;
}

// A LIST answer held whole (ListStreaming bounds each item instead): far above any page the
// controllers ask for, far below what a gzip bomb would inflate to.
constexpr std::size_t kMaxBufferedListBytes = std::size_t{1} << 30;

ResourceClient::ResourceClient(std::shared_ptr<RestClient> client, GroupVersionResource gvr,
                               bool namespaced)
    : client_(std::move(client)), gvr_(std::move(gvr)), namespaced_(namespaced) {}

std::string ResourceClient::Path(std::string_view ns, std::string_view name,
                                 std::string_view subresource) const {
  return ResourcePath(gvr_, namespaced_ ? ns : std::string_view(), name, subresource);
}

Result<std::string> ResourceClient::Get(std::string_view ns, std::string_view name,
                                        const GetOptions& opts, std::stop_token stop) {
  Request r{.verb = "GET", .path = Path(ns, name)};
  if (!opts.resource_version.empty())
    r.query.emplace_back("resourceVersion", opts.resource_version);
  return client_->Do(r, stop);
}

Result<std::string> ResourceClient::List(std::string_view ns, const api::ListOptions& opts,
                                         std::stop_token stop, std::string_view accept,
                                         std::string* content_type) {
  Request r{.verb = "GET",
            .path = Path(ns),
            .accept = std::string(accept),
            .max_body_bytes = kMaxBufferedListBytes};
  AppendListOptions(opts, /*watch=*/false, &r.query);
  return client_->Do(r, stop, content_type);
}

Status ResourceClient::ListStreaming(std::string_view ns, const api::ListOptions& opts,
                                     BodySink& sink, std::stop_token stop,
                                     std::string_view accept) {
  // The decoder bounds each item; the whole answer has the bound of one held whole.
  Request r{.verb = "GET",
            .path = Path(ns),
            .accept = std::string(accept),
            .max_body_bytes = kMaxBufferedListBytes,
            .body_sink = &sink};
  AppendListOptions(opts, /*watch=*/false, &r.query);
  auto body = client_->Do(r, stop);
  if (!body.ok()) return body.error();
  return OkStatus();
}

Result<std::unique_ptr<WatchStream>> ResourceClient::Watch(std::string_view ns,
                                                           const api::ListOptions& opts,
                                                           std::stop_token stop,
                                                           std::string_view accept) {
  Request r{.verb = "GET", .path = Path(ns), .accept = std::string(accept)};
  AppendListOptions(opts, /*watch=*/true, &r.query);
  return client_->Watch(r, stop);
}

Result<std::string> ResourceClient::Create(std::string_view ns, std::string body,
                                           const WriteOptions& opts, std::stop_token stop) {
  Request r{.verb = "POST", .path = Path(ns), .body = std::move(body)};
  AppendWriteOptions(opts, &r.query);
  return client_->Do(r, stop);
}

std::vector<CallAnswer> ResourceClient::CreateMany(std::string_view ns, const std::string& body,
                                                   int count, const WriteOptions& opts,
                                                   std::stop_token stop) {
  Request r{.verb = "POST", .path = Path(ns), .body = body};
  AppendWriteOptions(opts, &r.query);
  const std::vector<Request> requests(static_cast<size_t>(std::max(count, 0)), r);
  return client_->DoAll(requests, stop);
}

Result<std::string> ResourceClient::Update(std::string_view ns, std::string_view name,
                                           std::string body, const WriteOptions& opts,
                                           std::stop_token stop) {
  Request r{.verb = "PUT", .path = Path(ns, name), .body = std::move(body)};
  AppendWriteOptions(opts, &r.query);
  return client_->Do(r, stop);
}

Result<std::string> ResourceClient::UpdateStatus(std::string_view ns, std::string_view name,
                                                 std::string body, const WriteOptions& opts,
                                                 std::stop_token stop) {
  Request r{.verb = "PUT", .path = Path(ns, name, "status"), .body = std::move(body)};
  AppendWriteOptions(opts, &r.query);
  return client_->Do(r, stop);
}

Result<std::string> ResourceClient::Patch(std::string_view ns, std::string_view name,
                                          PatchType type, std::string body,
                                          const WriteOptions& opts, std::string_view subresource,
                                          std::stop_token stop) {
  Request r{.verb = "PATCH",
            .path = Path(ns, name, subresource),
            .body = std::move(body),
            .content_type = std::string(ContentTypeFor(type))};
  AppendWriteOptions(opts, &r.query);
  return client_->Do(r, stop);
}

Result<std::string> ResourceClient::Delete(std::string_view ns, std::string_view name,
                                           const DeleteOptions& opts, std::stop_token stop) {
  Request r{.verb = "DELETE", .path = Path(ns, name), .body = EncodeDeleteOptions(opts)};
  return client_->Do(r, stop);
}

std::vector<CallAnswer> ResourceClient::DeleteMany(std::string_view ns,
                                                   std::span<const std::string> names,
                                                   const DeleteOptions& opts,
                                                   std::stop_token stop) {
  const std::string body = EncodeDeleteOptions(opts);
  std::vector<Request> requests;
  requests.reserve(names.size());
  for (const std::string& name : names) {
    requests.push_back(Request{.verb = "DELETE", .path = Path(ns, name), .body = body});
  }
  return client_->DoAll(requests, stop);
}

Result<std::string> ResourceClient::DeleteCollection(std::string_view ns, const DeleteOptions& opts,
                                                     const api::ListOptions& list_opts,
                                                     std::stop_token stop) {
  Request r{.verb = "DELETE", .path = Path(ns), .body = EncodeDeleteOptions(opts)};
  AppendListOptions(list_opts, /*watch=*/false, &r.query);
  return client_->Do(r, stop);
}

}  // namespace kcm::client
