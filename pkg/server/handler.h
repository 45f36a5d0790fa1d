// What SecureServer hands to a path's handler and takes back: one HTTP request and its answer, as
// plain values (no Beast types), so that handlers and their tests need no networking. Handlers
// run on the server's worker threads, after authentication and authorization, concurrently:
// they must be thread-safe. Plain data; thread-compatible.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kcm::server {

inline constexpr const char* kTextPlainUtf8 = "text/plain; charset=utf-8";

struct Request {
  std::string method;  // "GET", "PUT", ... as sent
  std::string path;    // without the query
  std::string query;   // after '?', "" if none
  std::string accept;  // the Accept header, "" if absent
  std::string user_agent;
  std::string body;
};

struct Response {
  int code = 200;
  std::string content_type = kTextPlainUtf8;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

inline Response TextResponse(int code, std::string body) {
  return Response{code, kTextPlainUtf8, std::move(body), {}};
}

using Handler = std::function<Response(const Request&)>;

}  // namespace kcm::server
