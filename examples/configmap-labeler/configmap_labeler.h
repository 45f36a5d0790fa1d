// ConfigMapLabeler: an example controller built on pkg/runtime — it keeps one label on every
// ConfigMap of a namespace. Copy it as the start of your own controller: a Reconciler that reads
// from the informer's cache and writes with a merge patch, wired by NewConfigMapLabeler.
// Reconcile is called from several workers at once (never twice for one ConfigMap); thread-safe.
#pragma once

#include <memory>
#include <string>

#include "pkg/client/resource_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/runtime/controller.h"
#include "pkg/runtime/reconciler.h"

namespace kcm::examples {

struct ConfigMapLabelerOptions {
  std::string label_key = "example.kcm.io/managed";
  std::string label_value = "true";
  int workers = 2;
};

class ConfigMapLabeler final : public runtime::Reconciler {
 public:
  ConfigMapLabeler(ConfigMapLabelerOptions options, cache::GenericLister lister,
                   std::shared_ptr<client::ResourceClient> configmaps);

  // Adds the label when it is missing or has another value; a ConfigMap that is gone is done.
  Result<runtime::ReconcileResult> Reconcile(const runtime::Request& request,
                                             std::stop_token stop) override;

 private:
  ConfigMapLabelerOptions options_;
  cache::GenericLister lister_;
  std::shared_ptr<client::ResourceClient> configmaps_;
};

// The ConfigMap resource as a schema-less (generic) informer resource.
informers::ResourceType ConfigMapsResource();

// Builds the controller (runtime::NewControllerManagedBy): a generic ConfigMap informer from the
// factory, For that informer with a predicate that passes ConfigMaps whose labels changed (or
// that were created), and the reconciler. Start the
// factory and then controller->Start(stop).
Result<std::unique_ptr<runtime::Controller>> NewConfigMapLabeler(
    ConfigMapLabelerOptions options, informers::SharedInformerFactory& factory,
    std::shared_ptr<client::RestClient> client);

}  // namespace kcm::examples
