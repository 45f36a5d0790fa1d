// Standard base64 (RFC 4648 §4, Go's encoding/base64.StdEncoding) over OpenSSL's EVP_EncodeBlock
// and EVP_DecodeBlock: the one place the client encodes or decodes it. Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::client {

// Padded output.
std::string Base64Encode(std::string_view in);

// Whitespace anywhere is skipped (kubeconfig data fields may be wrapped); padding may be left off.
// Error (reason InvalidBase64) for a byte outside the alphabet, data after padding, or more than
// two padding bytes.
Result<std::string> Base64Decode(std::string_view in);

}  // namespace kcm::client
