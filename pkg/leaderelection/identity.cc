#include "pkg/leaderelection/identity.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

namespace kcm::leaderelection {

std::string NewUUID() {
  // std::random_device reads the kernel's CSPRNG on Linux (getrandom / /dev/urandom).
  std::random_device rd;
  std::array<uint8_t, 16> b{};
  for (size_t i = 0; i < b.size(); i += 4) {
    const uint32_t v = rd();
    std::memcpy(&b[i], &v, 4);
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof(out),
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

Result<std::string> NewIdentity() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) {
    return Error::Local("Hostname", std::string("unable to get hostname: ") + std::strerror(errno));
  }
  return std::string(host) + "_" + NewUUID();
}

}  // namespace kcm::leaderelection
