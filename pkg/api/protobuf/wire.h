// WireReader: a minimal reader of the protocol buffers wire format (the encoding of
// application/vnd.kubernetes.protobuf bodies): tags, varints, length-delimited fields and fixed
// 32/64-bit fields. It walks one message's fields in order and never allocates: a
// length-delimited field is a view into the input, so skipping one costs O(1). Groups (wire types
// 3 and 4, never used by Kubernetes) and malformed input (truncated varints, lengths past the
// end, field number 0, unknown wire types) stop the walk with an error message.
// Thread-compatible; the input must outlive the reader and the views it hands out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kcm::api::protobuf {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct WireField {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t varint = 0;     // kVarint: the value; kFixed32/kFixed64: the raw bits
  std::string_view bytes;  // kLengthDelimited: the payload
};

class WireReader {
 public:
  explicit WireReader(std::string_view message)
      : p_(reinterpret_cast<const uint8_t*>(message.data())), end_(p_ + message.size()) {}

  // Reads the next field into *f. False at the end of the message or on malformed input; error()
  // tells the two apart.
  bool Next(WireField* f) {
    if (p_ == end_ || error_ != nullptr) return false;
    uint64_t tag = 0;
    if (!ReadVarint(&tag)) return false;
    const uint64_t number = tag >> 3;
    if (number == 0 || number > kMaxFieldNumber) return Fail("invalid field number");
    f->number = static_cast<uint32_t>(number);
    f->type = static_cast<WireType>(tag & 7);
    switch (f->type) {
      case WireType::kVarint:
        return ReadVarint(&f->varint);
      case WireType::kFixed64:
        return ReadFixed(8, f);
      case WireType::kFixed32:
        return ReadFixed(4, f);
      case WireType::kLengthDelimited: {
        uint64_t len = 0;
        if (!ReadVarint(&len)) return false;
        if (len > static_cast<uint64_t>(end_ - p_)) return Fail("length past the end of input");
        f->bytes = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(len));
        p_ += len;
        return true;
      }
      default:
        return Fail("unsupported wire type");
    }
  }

  // nullptr unless Next() stopped on malformed input.
  const char* error() const { return error_; }

 private:
  static constexpr uint64_t kMaxFieldNumber = (uint64_t{1} << 29) - 1;

  bool Fail(const char* what) {
    error_ = what;
    return false;
  }

  bool ReadVarint(uint64_t* out) {
    // Fast path: one byte (most tags, lengths and small numbers).
    if (p_ < end_ && *p_ < 0x80) {
      *out = *p_++;
      return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return Fail("truncated varint");
      const uint8_t b = *p_++;
      // The tenth byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && b > 1) return Fail("varint overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *out = v;
        return true;
      }
    }
    return Fail("varint overflows 64 bits");
  }

  bool ReadFixed(size_t n, WireField* f) {
    if (static_cast<size_t>(end_ - p_) < n) return Fail("truncated fixed-width field");
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    f->varint = v;
    p_ += n;
    return true;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const char* error_ = nullptr;
};

}  // namespace kcm::api::protobuf
