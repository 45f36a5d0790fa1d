// The authenticators the server runs itself, before any delegated (network) call: front-proxy
// request headers (upstream's headerrequest authenticator, behind a verified proxy certificate)
// and x509 client certificates (upstream's CommonNameUserConversion). Pure functions on already
// parsed data; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/server/secure_server.h"

namespace kcm::server {

// Request header fields in arrival order (names as sent; compared case-insensitively).
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Whether a proxy certificate's CN may assert identities: any CN when `allowed` is empty.
bool ProxyNameAllowed(const std::string& common_name, const std::vector<std::string>& allowed);

// The user a trusted front proxy asserts: the first username header with a non-blank value
// (trimmed), every value of every group header, and the extra headers (key after the prefix,
// lower-cased and percent-decoded). nullopt when no username header is set.
std::optional<UserInfo> UserFromRequestHeaders(const HeaderList& headers,
                                               const RequestHeaderOptions& options);

// A verified client certificate's identity: CN = user name, O = groups.
UserInfo UserFromCertificate(const std::string& common_name,
                             const std::vector<std::string>& organizations);

// Adds "system:authenticated" to an authenticated user's groups when missing (upstream's
// AuthenticatedGroupAdder).
void AddAuthenticatedGroup(UserInfo& user);

}  // namespace kcm::server
