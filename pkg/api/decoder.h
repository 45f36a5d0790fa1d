// Decoder: the reusable state behind every typed decode (simdjson parsers and a scratch buffer),
// so the hot path allocates nothing per frame, and the InternTable the decoded objects' labels and
// owner references are shared through. Not thread-safe: one Decoder per reflector thread (the
// table may be shared by several decoders; it is thread-safe).
#pragma once

#include <memory>

namespace kcm::api {

class InternTable;

namespace internal {
struct DecoderImpl;
}

class Decoder {
 public:
  // With a table of its own.
  Decoder();
  // Interning through `interner` (shared with other decoders, e.g. a lister-watcher's LIST and
  // WATCH decoders, so a relisted pod shares its labels with the watched ones).
  explicit Decoder(std::shared_ptr<InternTable> interner);
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  // Whether the ReplicaSets and Deployments decoded here keep their raw JSON packed (TextPacker,
  // shared_text.h). On by default, for decoders whose objects are cached; a decoder of write
  // answers, each used once and dropped, saves the deflate (~10 µs per object) with it off.
  void set_pack_raw_json(bool pack);

  internal::DecoderImpl& impl() { return *impl_; }
  InternTable& interner();

 private:
  std::unique_ptr<internal::DecoderImpl> impl_;
};

}  // namespace kcm::api
