// The pod-template-hash: FNV-1a 32 over the canonical template JSON (+ collisionCount), printed
// in decimal and mapped through rand.SafeEncodeString's alphabet. Stateless; thread-safe.
//
// Our values differ from upstream's on purpose: upstream hashes a Go deep-print of the
// PodTemplateSpec struct, which a C++ program cannot reproduce byte for byte. The controller only
// needs the hash to be stable and collision-resistant (D4): a Deployment adopted from
// upstream still finds its ReplicaSet by template equality ignoring the hash label (D3), and
// collisions are resolved by collisionCount, as upstream does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/json.h"

namespace kcm::api {

inline constexpr uint32_t kFnv32Offset = 2166136261u;
inline constexpr uint32_t kFnv32Prime = 16777619u;
// The label key ReplicaSets and pods carry (apps/v1 DefaultDeploymentUniqueLabelKey).
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";
// rand.SafeEncodeString's alphabet: no vowels, no 0/1/3, so no words and no look-alikes.
inline constexpr std::string_view kSafeEncodeAlphabet = "bcdfghjklmnpqrstvwxz2456789";

// FNV-1a 32; pass the previous result as `hash` to continue over more bytes.
uint32_t Fnv32a(std::string_view data, uint32_t hash = kFnv32Offset);

// Maps every byte b of `s` to kSafeEncodeAlphabet[b % 27], as rand.SafeEncodeString.
std::string SafeEncodeString(std::string_view s);

// The hash of a pod template (the `spec.template` object). The pod-template-hash label is ignored
// and the template is put in drop_empty canonical form first, so the hash depends only on the
// template's meaning. collisionCount, when set, is mixed in as 4 little-endian bytes (as upstream).
std::string ComputePodTemplateHash(const json::Value& pod_template,
                                   std::optional<int32_t> collision_count);

}  // namespace kcm::api
