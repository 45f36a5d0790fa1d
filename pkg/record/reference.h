// GetReference: the ObjectReference an event names as its involvedObject, built from an object's
// metadata plus its kind and apiVersion (client-go's tools/reference). Pure; thread-safe.
#pragma once

#include <string_view>

#include "pkg/api/object.h"
#include "pkg/record/event_recorder.h"

namespace kcm::record {

// `api_version` is the group/version the object is served at ("apps/v1", "v1").
ObjectReference GetReference(const api::Object& object, std::string_view kind,
                             std::string_view api_version);
// Kind taken from object.Kind().
ObjectReference GetReference(const api::Object& object, std::string_view api_version);

}  // namespace kcm::record
