// The JSON list decoder behind ListStreamDecoder (see list_stream.h).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/internal/decode_error.h"
#include "pkg/api/internal/list_stream_impl.h"
#include "pkg/api/json_input.h"

namespace kcm::api {
namespace {

using internal::DecodeErrorAt;
using internal::ListItemPath;
using internal::PrefixErrorPath;
using internal::RecycleListBuffer;

// JSON: see the header. Outside the items' elements every byte is kept in skeleton_ (except the
// commas between elements), so the kept text is the list with "items":[]; strings directly inside
// the top-level object are captured (up to a few bytes) to recognise the "items" key and the
// list's "kind".
class JsonList final : public ListStreamDecoder::Impl {
 public:
  JsonList(const Codec& codec, size_t max_item) : codec_(codec), max_item_(max_item) {}

  Status Feed(std::string_view data) override {
    if (error_) return *error_;
    size_t i = 0;
    const size_t n = data.size();
    while (i < n) {
      if (in_element_) {
        i = ScanElement(data, i);
        if (error_) return *error_;
        continue;
      }
      if (Status s = Outside(data[i]); !s.ok()) {
        error_ = s.error();
        return *error_;
      }
      // What lies outside the items (kind, apiVersion, metadata) is small in any real answer;
      // a server that sends a huge field there is bounded like one item.
      if (max_item_ > 0 && skeleton_.size() > max_item_) {
        error_ = internal::ListTooLarge(max_item_, "list body outside its items");
        return *error_;
      }
      if (in_element_) {
        // Outside() saw the '{' that opens an element; ScanElement takes it from here.
        run_ = i;
        continue;
      }
      ++i;
    }
    if (in_element_) {
      const size_t tail = n - run_;
      if (max_item_ > 0 && item_.size() + tail > max_item_) {
        error_ = internal::ListTooLarge(max_item_);
        std::string().swap(item_);
        return *error_;
      }
      item_.append(data.substr(run_));
      run_ = 0;
    }
    NotePeak();
    return OkStatus();
  }

  Result<ObjectList> Finish() override {
    if (error_) return *error_;
    if (in_element_ || in_string_ || depth_ != 0) {
      return DecodeErrorAt(in_element_ ? ListItemPath(decoded) : "", "truncated list body");
    }
    skeleton_.reserve(skeleton_.size() + kJsonPadding);
    auto list = codec_.decode_list(*decoder, JsonInput::Padded(skeleton_));
    if (!list.ok()) return list.error();
    // The items the skeleton still holds (an "items" key we did not recognise, e.g. written with
    // escapes) were decoded by decode_list; ours come first.
    for (ObjectPtr& item : list->items) Keep(std::move(item), items_);
    list->items = std::move(items_);
    return list;
  }

  size_t buffered() const override { return item_.size() + skeleton_.size(); }

 private:
  enum class Elem { kFirst, kNext, kAfter };
  static constexpr size_t kMaxCapture = 32;

  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

  // One byte outside the items' elements.
  Status Outside(char c) {
    if (in_string_) {
      skeleton_.push_back(c);
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
        capture_ok_ = false;  // an escaped key or kind is left to the skeleton's decoder
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 1) EndTopLevelString();
      } else if (depth_ == 1 && capture_ok_) {
        if (capture_.size() < kMaxCapture) {
          capture_.push_back(c);
        } else {
          capture_ok_ = false;
        }
      }
      return OkStatus();
    }
    if (in_items_ && depth_ == 2) {
      // Directly inside the items array: elements and the commas between them.
      if (IsSpace(c)) return OkStatus();
      if (c == ']' && elem_ != Elem::kNext) {
        in_items_ = false;
        depth_ = 1;
        skeleton_.push_back(c);
        return OkStatus();
      }
      if (c == ',' && elem_ == Elem::kAfter) {
        elem_ = Elem::kNext;
        return OkStatus();
      }
      if (c == '{' && elem_ != Elem::kAfter) {
        in_element_ = true;
        elem_depth_ = 0;
        elem_in_string_ = false;
        elem_escaped_ = false;
        return OkStatus();
      }
      return DecodeErrorAt(ListItemPath(decoded),
                           std::string("unexpected character '") + c + "' in the items array");
    }
    skeleton_.push_back(c);
    switch (c) {
      case '"':
        in_string_ = true;
        if (depth_ == 1) {
          capture_.clear();
          capture_ok_ = true;
        }
        break;
      case '[':
        if (depth_ == 1 && after_colon_ && key_ok_ && key_ == "items") {
          in_items_ = true;
          elem_ = Elem::kFirst;
        }
        ++depth_;
        break;
      case '{':
        ++depth_;
        break;
      case '}':
      case ']':
        // An unbalanced close is left for the skeleton's decoder to reject.
        if (depth_ > 0) --depth_;
        break;
      case ':':
        if (depth_ == 1) after_colon_ = true;
        break;
      case ',':
        if (depth_ == 1) after_colon_ = false;
        break;
      default:
        break;
    }
    return OkStatus();
  }

  void EndTopLevelString() {
    if (!after_colon_) {
      key_ = capture_;
      key_ok_ = capture_ok_;
    } else if (key_ok_ && key_ == "kind" && capture_ok_) {
      kind_ = capture_;
    }
  }

  // Walks the current element from data[i]; returns where it stopped (data.size() or just past
  // the element's closing brace, once the element is decoded).
  size_t ScanElement(std::string_view data, size_t i) {
    const size_t n = data.size();
    int depth = elem_depth_;
    bool in_string = elem_in_string_;
    bool escaped = elem_escaped_;
    for (; i < n; ++i) {
      const char c = data[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          CompleteElement(data.substr(run_, i + 1 - run_));
          return i + 1;
        }
      }
    }
    elem_depth_ = depth;
    elem_in_string_ = in_string;
    elem_escaped_ = escaped;
    return n;
  }

  void CompleteElement(std::string_view tail) {
    in_element_ = false;
    elem_ = Elem::kAfter;
    if (max_item_ > 0 && item_.size() + tail.size() > max_item_) {
      error_ = internal::ListTooLarge(max_item_);
      std::string().swap(item_);
      return;
    }
    item_.append(tail);
    if (item_.capacity() < item_.size() + kJsonPadding) item_.reserve(item_.size() + kJsonPadding);
    NotePeak();
    auto obj = codec_.decode_list_item(*decoder, JsonInput::Padded(item_), kind_);
    RecycleListBuffer(&item_);
    if (!obj.ok()) {
      error_ = PrefixErrorPath(obj.error(), ListItemPath(decoded));
      return;
    }
    Keep(std::move(obj).value(), items_);
  }

  const Codec& codec_;
  const size_t max_item_;
  std::vector<ObjectPtr> items_;
  std::optional<Error> error_;

  std::string skeleton_;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  // Directly inside the top-level object: the last key, whether its value is being read, the
  // string being captured and the list's kind.
  std::string key_;
  bool key_ok_ = false;
  bool after_colon_ = false;
  std::string capture_;
  bool capture_ok_ = false;
  std::string kind_;

  bool in_items_ = false;
  Elem elem_ = Elem::kFirst;
  bool in_element_ = false;
  size_t run_ = 0;  // where the current element's bytes start in the chunk being fed
  std::string item_;
  int elem_depth_ = 0;
  bool elem_in_string_ = false;
  bool elem_escaped_ = false;
};

}  // namespace

std::unique_ptr<ListStreamDecoder::Impl> internal::NewJsonListDecoder(const Codec& codec,
                                                                      size_t max_item) {
  return std::make_unique<JsonList>(codec, max_item);
}

}  // namespace kcm::api
