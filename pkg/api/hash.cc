#include "pkg/api/hash.h"

namespace kcm::api {

uint32_t Fnv32a(std::string_view data, uint32_t hash) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= kFnv32Prime;
  }
  return hash;
}

std::string SafeEncodeString(std::string_view s) {
  std::string out(s.size(), '\0');
  for (size_t i = 0; i < s.size(); ++i) {
    out[i] = kSafeEncodeAlphabet[static_cast<unsigned char>(s[i]) % kSafeEncodeAlphabet.size()];
  }
  return out;
}

std::string ComputePodTemplateHash(const json::Value& pod_template,
                                   std::optional<int32_t> collision_count) {
  json::Value t = pod_template;
  json::ErasePath(t, {"metadata", "labels", kPodTemplateHashLabel});
  uint32_t h = Fnv32a(json::CanonicalString(t, {.drop_empty = true}));
  if (collision_count.has_value()) {
    uint32_t c = static_cast<uint32_t>(*collision_count);
    char bytes[4] = {static_cast<char>(c & 0xFF), static_cast<char>((c >> 8) & 0xFF),
                     static_cast<char>((c >> 16) & 0xFF), static_cast<char>((c >> 24) & 0xFF)};
    h = Fnv32a(std::string_view(bytes, 4), h);
  }
  return SafeEncodeString(std::to_string(h));
}

}  // namespace kcm::api
