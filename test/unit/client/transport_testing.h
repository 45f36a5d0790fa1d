// Helpers the transport tests share: a Transport from a config (a failed Create fails the test),
// a GET of a URL.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pkg/client/rest_config.h"
#include "pkg/client/transport.h"

namespace kcm::testing {

inline std::shared_ptr<client::Transport> NewTransport(const client::RestConfig& config = {}) {
  auto t = client::Transport::Create(config);
  EXPECT_TRUE(t.ok()) << t.error().ToString();
  return t.ok() ? *t : nullptr;
}

inline client::HttpRequest Get(const std::string& url) {
  client::HttpRequest r;
  r.url = url;
  return r;
}

}  // namespace kcm::testing
