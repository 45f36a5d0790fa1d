// Builders for the pods and ReplicaSets the pkg/controller tests use. Test-only; not thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"

namespace kcm::controller::testutil {

using namespace std::chrono_literals;

// A fixed wall-clock "now" far from the epoch, so "t ago" never underflows.
inline const api::Time kNow = api::Time{} + std::chrono::hours(24 * 365 * 50);

struct PodBuilder {
  api::Pod pod;

  explicit PodBuilder(std::string name, std::string ns = "default") {
    pod.metadata.name = name;
    pod.metadata.namespace_ = std::move(ns);
    pod.metadata.uid = "uid-" + name;
    pod.metadata.creation_timestamp = kNow - 1h;
    pod.node_name = "node-1";
    pod.phase = api::PodPhase::kRunning;
  }
  PodBuilder& Node(std::string n) { return pod.node_name = std::move(n), *this; }
  PodBuilder& Phase(api::PodPhase p) { return pod.phase = p, *this; }
  PodBuilder& Uid(std::string u) { return pod.metadata.uid = std::move(u), *this; }
  PodBuilder& Ready(std::optional<api::Time> since) {
    pod.ready = api::ConditionStatus::kTrue;
    pod.ready_transition_time = since;
    return *this;
  }
  PodBuilder& NotReady() {
    pod.ready = api::ConditionStatus::kFalse;
    return *this;
  }
  PodBuilder& Cost(int32_t c) { return pod.deletion_cost = c, *this; }
  // Through the decoders' NoteRestartCount, so a test sees the record's saturation, not a
  // silently truncated bit-field.
  PodBuilder& Restarts(int32_t max) {
    pod.restart_count_max = 0;
    pod.NoteRestartCount(max);
    return *this;
  }
  PodBuilder& Created(std::optional<api::Time> t) {
    return pod.metadata.creation_timestamp = t, *this;
  }
  PodBuilder& Deleting() { return pod.metadata.deletion_timestamp = kNow, *this; }
  PodBuilder& Label(std::string k, std::string v) {
    auto labels = pod.metadata.labels.ToMap();
    labels[std::move(k)] = std::move(v);
    pod.metadata.labels = labels;
    return *this;
  }
  PodBuilder& Owner(api::OwnerReference ref) {
    auto refs = pod.metadata.owner_references.ToVector();
    refs.push_back(std::move(ref));
    pod.metadata.owner_references = std::move(refs);
    return *this;
  }
  std::shared_ptr<const api::Pod> Build() const { return std::make_shared<const api::Pod>(pod); }
};

inline std::shared_ptr<const api::ReplicaSet> MakeReplicaSet(
    std::string name, int32_t replicas, std::optional<api::Time> created,
    const char* revision = nullptr) {  // nullptr: no revision annotation
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata.name = std::move(name);
  rs->metadata.namespace_ = "default";
  rs->metadata.uid = "uid-" + rs->metadata.name;
  rs->metadata.creation_timestamp = created;
  if (revision != nullptr)
    rs->metadata.annotations.Set("deployment.kubernetes.io/revision", revision);
  rs->spec.replicas = replicas;
  return rs;
}

}  // namespace kcm::controller::testutil
