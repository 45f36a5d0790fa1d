#include "pkg/client/base64.h"

#include <openssl/evp.h>

namespace kcm::client {
namespace {

Error InvalidBase64() {
  return Error::Local("InvalidBase64", "invalid base64");
}

bool IsSpace(char c) {
  return c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

}  // namespace

std::string Base64Encode(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock writes a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view in) {
  // EVP_DecodeBlock wants whole 4-byte groups and decodes padding as zero bytes: strip the
  // whitespace, count the padding, pad an unpadded tail, then drop the padding's bytes.
  std::string text;
  text.reserve(in.size() + 3);
  std::size_t pad = 0;
  for (const char c : in) {
    if (IsSpace(c)) continue;
    if (c == '=') {
      ++pad;
    } else if (pad > 0) {
      return InvalidBase64();
    }
    text.push_back(c);
  }
  if (pad > 2) return InvalidBase64();
  if (text.empty()) return std::string();
  if (pad == 0) {
    pad = (4 - text.size() % 4) % 4;
    text.append(pad, '=');
  }
  if (text.size() % 4 != 0 || pad > 2) return InvalidBase64();
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return InvalidBase64();
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

}  // namespace kcm::client
