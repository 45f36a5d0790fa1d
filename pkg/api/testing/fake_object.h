// FakeObject: the one api::Object test double, for tests of the layers that handle objects without
// knowing their kind (pkg/cache, pkg/runtime). Metadata, a payload to tell versions of one object
// apart, and a kind. Test-only; a plain value.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "pkg/api/object.h"

namespace kcm::mocks {

class FakeObject final : public api::Object {
 public:
  FakeObject() = default;
  explicit FakeObject(api::ObjectMeta m, std::string p = "", std::string k = "Fake")
      : meta(std::move(m)), payload(std::move(p)), kind(std::move(k)) {}
  FakeObject(std::string ns, std::string name) {
    meta.namespace_ = std::move(ns);
    meta.name = std::move(name);
  }

  std::string_view Kind() const override { return kind; }
  const api::ObjectMeta& Meta() const override { return meta; }

  // Public: tests build objects field by field.
  api::ObjectMeta meta;
  std::string payload;
  std::string kind = "Fake";
};

}  // namespace kcm::mocks
