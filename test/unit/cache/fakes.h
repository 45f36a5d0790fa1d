// Test doubles for pkg/cache: a minimal api::Object and a scripted ListerWatcher.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "pkg/api/object.h"

namespace kcm::cache::testing {

// A typed object with only metadata and one payload field, enough to tell versions apart.
class FakeObject final : public api::Object {
 public:
  explicit FakeObject(api::ObjectMeta meta, std::string payload = "", std::string kind = "Fake")
      : meta_(std::move(meta)), payload_(std::move(payload)), kind_(std::move(kind)) {}
  std::string_view Kind() const override { return kind_; }
  const api::ObjectMeta& Meta() const override { return meta_; }
  const std::string& payload() const { return payload_; }

 private:
  api::ObjectMeta meta_;
  std::string payload_;
  std::string kind_;
};

inline api::ObjectPtr MakeObj(std::string ns, std::string name, std::string rv = "1",
                              std::string payload = "") {
  api::ObjectMeta meta;
  meta.namespace_ = std::move(ns);
  meta.name = std::move(name);
  meta.resource_version = std::move(rv);
  return std::make_shared<FakeObject>(std::move(meta), std::move(payload));
}

inline const std::string& Payload(const api::ObjectPtr& obj) {
  return static_cast<const FakeObject&>(*obj).payload();
}

}  // namespace kcm::cache::testing
