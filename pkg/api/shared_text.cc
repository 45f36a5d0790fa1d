#include "pkg/api/shared_text.h"

// next_in as a pointer to const: the input is never written.
#define ZLIB_CONST
#include <zlib.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kcm::api {

// The buffer: this header, then `stored_size` bytes (the text, or its raw deflate stream). Made
// and freed only here, by NewBlock and Release; a SharedText holds one count.
struct SharedText::Block {
  mutable std::atomic<uint32_t> refs{1};
  uint32_t text_size = 0;
  uint32_t stored_size = 0;
  bool packed = false;
  const Block* dict = nullptr;  // packed against a dictionary: its (plain) buffer, one count held

  const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  char* bytes() { return reinterpret_cast<char*>(this + 1); }
};

namespace {

using Block = SharedText::Block;

// Raw deflate (no zlib header or checksum: the buffer is ours) with a 4 KiB window, which holds a
// dictionary of TextPacker::kMaxDictionary bytes and a document of about as many; the deflate
// state is ~30 KB per packer (memory level 4). Level 6: 10-15 % smaller than level 1 on
// ReplicaSets and Deployments for ~2 µs more per object.
constexpr int kWindowBits = 12;
constexpr int kMemLevel = 4;
constexpr int kLevel = 6;
// Scratch kept between Pack calls (a ReplicaSet or Deployment is a few kB).
constexpr size_t kMaxKeptScratch = 64 * 1024;

uint32_t CheckedSize(size_t n) {
  if (n > std::numeric_limits<uint32_t>::max()) throw std::length_error("SharedText over 4 GiB");
  return static_cast<uint32_t>(n);
}

Block* NewBlock(size_t stored_size, size_t text_size, bool packed, const Block* dict) {
  void* mem = ::operator new(sizeof(Block) + stored_size);
  Block* b = ::new (mem) Block;
  b->text_size = CheckedSize(text_size);
  b->stored_size = CheckedSize(stored_size);
  b->packed = packed;
  if (dict != nullptr) dict->refs.fetch_add(1, std::memory_order_relaxed);
  b->dict = dict;
  return b;
}

void Retain(const Block* b) {
  if (b != nullptr) b->refs.fetch_add(1, std::memory_order_relaxed);
}

void Release(const Block* b) {
  // A packed block holds its dictionary, which is plain: the chain is at most two long.
  while (b != nullptr && b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const Block* dict = b->dict;
    b->~Block();
    ::operator delete(const_cast<Block*>(b));
    b = dict;
  }
}

// The first `end` bytes of a packed block's text.
std::string InflatePrefix(const Block& b, size_t end) {
  std::string out(end, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -kWindowBits) != Z_OK) throw std::bad_alloc();
  int r = Z_OK;
  if (b.dict != nullptr) {
    r = inflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(b.dict->bytes()),
                             b.dict->stored_size);
  }
  if (r == Z_OK) {
    zs.next_in = reinterpret_cast<const Bytef*>(b.bytes());
    zs.avail_in = b.stored_size;
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(end);
    r = inflate(&zs, Z_FINISH);
  }
  const bool full = zs.avail_out == 0;
  inflateEnd(&zs);
  // A prefix stops with the output full (Z_BUF_ERROR or Z_OK); the whole text ends the stream.
  if (!full || (r != Z_STREAM_END && r != Z_OK && r != Z_BUF_ERROR)) {
    // Only this file writes packed buffers; a stream that does not inflate is corrupt memory.
    throw std::logic_error("SharedText: packed text does not inflate");
  }
  return out;
}

}  // namespace

SharedText::SharedText(const Block* block, size_t offset, size_t size)
    : block_(block), offset_(CheckedSize(offset)), size_(CheckedSize(size)) {}

SharedText::SharedText(const SharedText& other) noexcept
    : block_(other.block_), offset_(other.offset_), size_(other.size_) {
  Retain(block_);
}

SharedText::SharedText(SharedText&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)),
      offset_(std::exchange(other.offset_, 0)),
      size_(std::exchange(other.size_, 0)) {}

SharedText& SharedText::operator=(const SharedText& other) noexcept {
  Retain(other.block_);  // before releasing ours: `other` may be this value
  Release(block_);
  block_ = other.block_;
  offset_ = other.offset_;
  size_ = other.size_;
  return *this;
}

SharedText& SharedText::operator=(SharedText&& other) noexcept {
  if (this != &other) {
    Release(block_);
    block_ = std::exchange(other.block_, nullptr);
    offset_ = std::exchange(other.offset_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedText::~SharedText() {
  Release(block_);
}

SharedText SharedText::Concat(std::string_view a, std::string_view b) {
  const size_t n = a.size() + b.size();
  if (n == 0) return {};
  Block* block = NewBlock(n, n, false, nullptr);
  if (!a.empty()) std::memcpy(block->bytes(), a.data(), a.size());
  if (!b.empty()) std::memcpy(block->bytes() + a.size(), b.data(), b.size());
  return SharedText(block, 0, n);
}

SharedText::SharedText(std::string_view text) : SharedText(Concat(text, {})) {}

SharedText SharedText::Sub(const SharedText& whole, size_t offset, size_t size) {
  if (size == 0) return {};
  if (offset > whole.size_ || size > whole.size_ - offset) {
    throw std::out_of_range("SharedText::Sub outside the text");
  }
  Retain(whole.block_);
  return SharedText(whole.block_, whole.offset_ + offset, size);
}

SharedText SharedText::Rebase(const SharedText& part, const SharedText& from,
                              const SharedText& to) {
  if (!part.SharesBufferWith(from) || part.offset_ < from.offset_ ||
      part.offset_ + size_t{part.size_} > from.offset_ + size_t{from.size_} ||
      from.size_ != to.size_) {
    return SharedText(part.str());
  }
  return Sub(to, part.offset_ - from.offset_, part.size_);
}

std::string_view SharedText::PlainView() const {
  return block_ == nullptr ? std::string_view()
                           : std::string_view(block_->bytes() + offset_, size_);
}

bool SharedText::packed() const {
  return block_ != nullptr && block_->packed;
}

size_t SharedText::stored_size() const {
  return block_ != nullptr ? block_->stored_size : 0;
}

std::string SharedText::str() const {
  if (!packed()) return std::string(PlainView());
  std::string text = InflatePrefix(*block_, size_t{offset_} + size_);
  text.erase(0, offset_);
  return text;
}

void SharedText::AppendTo(std::string* out) const {
  if (!packed()) {
    out->append(PlainView());
  } else {
    out->append(str());
  }
}

bool operator==(const SharedText& a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (!a.packed()) return a.PlainView() == b;
  return a.str() == b;
}

bool operator==(const SharedText& a, const SharedText& b) {
  if (a.size() != b.size()) return false;
  if (a.block_ == b.block_ && a.offset_ == b.offset_) return true;
  if (!b.packed()) return a == b.PlainView();
  return a == std::string_view(b.str());
}

std::ostream& operator<<(std::ostream& os, const SharedText& text) {
  return os << text.str();
}

namespace {

// A deflate stream with a kind's dictionary already loaded. deflateSetDictionary hashes every
// byte of the dictionary into the stream's match tables, which was a third of each Pack (~5 µs of
// ~14 µs for a ReplicaSet); a copy of a stream that did it once starts from the same state, so
// its output is byte for byte that of the reset-and-load it replaces.
struct PrimedStream {
  z_stream zs{};
  bool ready = false;
  PrimedStream() = default;
  PrimedStream(const PrimedStream&) = delete;
  PrimedStream& operator=(const PrimedStream&) = delete;
  ~PrimedStream() {
    if (ready) deflateEnd(&zs);
  }
};

// Initializes `p` (raw deflate, our window and level) and loads `dict` when it is not empty.
bool Prime(PrimedStream& p, std::string_view dict) {
  if (deflateInit2(&p.zs, kLevel, Z_DEFLATED, -kWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::bad_alloc();
  }
  p.ready = true;
  return dict.empty() || deflateSetDictionary(&p.zs, reinterpret_cast<const Bytef*>(dict.data()),
                                              static_cast<uInt>(dict.size())) == Z_OK;
}

}  // namespace

struct TextPacker::Impl {
  struct Kind {
    std::string name;
    SharedText dict;
    std::unique_ptr<PrimedStream> primed;  // made at the kind's first packed text
  };
  std::vector<Kind> kinds;  // kind → its dictionary
  PrimedStream plain;       // texts too large to be a dictionary, packed without one
  std::string out;          // the stream, before its exact copy

  Kind* Find(std::string_view kind) {
    for (Kind& k : kinds) {
      if (k.name == kind) return &k;
    }
    return nullptr;
  }
};

TextPacker::TextPacker() : impl_(std::make_unique<Impl>()) {}
TextPacker::~TextPacker() = default;
TextPacker::TextPacker(TextPacker&&) noexcept = default;
TextPacker& TextPacker::operator=(TextPacker&&) noexcept = default;

SharedText TextPacker::Pack(std::string_view kind, std::string_view a, std::string_view b) {
  const size_t n = a.size() + b.size();
  if (n < kMinPacked) return SharedText::Concat(a, b);
  Impl& m = *impl_;
  Impl::Kind* k = m.Find(kind);
  if (k == nullptr && n <= kMaxDictionary) {
    // The first text of its kind that fits becomes the dictionary, kept plain in the value's own
    // buffer (so it costs nothing beyond that value).
    SharedText plain = SharedText::Concat(a, b);
    m.kinds.push_back({std::string(kind), plain, nullptr});
    return plain;
  }
  const SharedText* dict = k != nullptr ? &k->dict : nullptr;
  PrimedStream* primed = &m.plain;
  if (k != nullptr) {
    if (k->primed == nullptr) {
      k->primed = std::make_unique<PrimedStream>();
      if (!Prime(*k->primed, std::string_view(dict->block_->bytes(), dict->block_->stored_size))) {
        k->primed.reset();
        return SharedText::Concat(a, b);
      }
    }
    primed = k->primed.get();
  } else if (!m.plain.ready && !Prime(m.plain, {})) {
    return SharedText::Concat(a, b);
  }
  PrimedStream work;
  if (deflateCopy(&work.zs, &primed->zs) != Z_OK) return SharedText::Concat(a, b);
  work.ready = true;
  z_stream& zs = work.zs;
  m.out.resize(deflateBound(&zs, static_cast<uLong>(n)));
  zs.next_out = reinterpret_cast<Bytef*>(m.out.data());
  zs.avail_out = static_cast<uInt>(m.out.size());
  zs.next_in = reinterpret_cast<const Bytef*>(a.data());
  zs.avail_in = static_cast<uInt>(a.size());
  int r = a.empty() ? Z_OK : deflate(&zs, Z_NO_FLUSH);
  if (r == Z_OK) {
    zs.next_in = reinterpret_cast<const Bytef*>(b.data());
    zs.avail_in = static_cast<uInt>(b.size());
    r = deflate(&zs, Z_FINISH);
  }
  const size_t stored = m.out.size() - zs.avail_out;
  SharedText out;
  // Kept plain unless packing saves at least the dictionary reference it costs.
  if (r != Z_STREAM_END || stored + sizeof(void*) >= n) {
    out = SharedText::Concat(a, b);
  } else {
    Block* block = NewBlock(stored, n, true, dict != nullptr ? dict->block_ : nullptr);
    std::memcpy(block->bytes(), m.out.data(), stored);
    out = SharedText(block, 0, n);
  }
  // A rare large object must not leave its scratch behind for the decoder's lifetime.
  if (m.out.capacity() > kMaxKeptScratch) std::string().swap(m.out);
  return out;
}

}  // namespace kcm::api
