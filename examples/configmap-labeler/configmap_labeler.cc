#include "configmap_labeler.h"

#include "pkg/api/json.h"
#include "pkg/client/api_errors.h"
#include "pkg/runtime/builder.h"

namespace kcm::examples {

namespace json = api::json;

ConfigMapLabeler::ConfigMapLabeler(ConfigMapLabelerOptions options, cache::GenericLister lister,
                                   std::shared_ptr<client::ResourceClient> configmaps)
    : options_(std::move(options)),
      lister_(std::move(lister)),
      configmaps_(std::move(configmaps)) {}

Result<runtime::ReconcileResult> ConfigMapLabeler::Reconcile(const runtime::Request& request,
                                                             std::stop_token stop) {
  auto cached = lister_.ByNamespace(request.namespace_).Get(request.name);
  if (!cached.ok()) {
    if (errors::IsNotFound(cached.error())) return runtime::Done();  // Deleted.
    return cached.error();
  }
  const auto& labels = (*cached)->Meta().labels;
  auto it = labels.find(options_.label_key);
  if (it != labels.end() && it->second == options_.label_value) return runtime::Done();

  // A merge patch touches only our label; resourceVersion makes it fail (409) if the cache was
  // stale, and the error requeues the request.
  json::Value patch = json::Value::MakeObject();
  (void)json::SetPath(patch, {"metadata", "labels", options_.label_key},
                      json::Value::String(options_.label_value));
  (void)json::SetPath(patch, {"metadata", "resourceVersion"},
                      json::Value::String((*cached)->Meta().resource_version));
  auto r = configmaps_->Patch(request.namespace_, request.name, client::PatchType::kMergePatch,
                              json::Serialize(patch), {}, "", stop);
  if (!r.ok() && !errors::IsNotFound(r.error())) return r.error();
  return runtime::Done();
}

informers::ResourceType ConfigMapsResource() {
  return informers::GenericResource({"", "v1", "configmaps"}, /*namespaced=*/true);
}

Result<std::unique_ptr<runtime::Controller>> NewConfigMapLabeler(
    ConfigMapLabelerOptions options, informers::SharedInformerFactory& factory,
    std::shared_ptr<client::RestClient> client) {
  auto informer = factory.InformerFor(ConfigMapsResource());
  auto configmaps =
      std::make_shared<client::ResourceClient>(client, ConfigMapsResource().gvr, true);
  runtime::ControllerOptions co;
  co.name = "configmap-labeler";
  co.max_concurrent_reconciles = options.workers;
  auto reconciler = std::make_shared<ConfigMapLabeler>(
      options, cache::GenericLister(informer->GetIndexer()), configmaps);
  // Creates pass; updates only when labels changed (status-free objects: this skips resyncs).
  return runtime::NewControllerManagedBy(co)
      .For(informer, {runtime::LabelChangedPredicate()})
      .Complete(reconciler);
}

}  // namespace kcm::examples
