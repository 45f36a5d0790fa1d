// Decoder: the reusable state behind every typed decode (simdjson parsers and a scratch buffer),
// so the hot path allocates nothing per frame. Not thread-safe: one Decoder per reflector thread.
#pragma once

#include <memory>

namespace kcm::api {

namespace internal {
struct DecoderImpl;
}

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  internal::DecoderImpl& impl() { return *impl_; }

 private:
  std::unique_ptr<internal::DecoderImpl> impl_;
};

}  // namespace kcm::api
