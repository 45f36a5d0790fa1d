#include "cmd/kube-controller-manager/app/controller_context.h"

#include <random>

#include "pkg/client/user_agent.h"

namespace kcm::app {

Result<std::shared_ptr<client::RestClient>> ClientBuilder::ClientFor(
    const std::string& name, std::chrono::milliseconds timeout) const {
  client::RestConfig config = base_;
  if (timeout.count() > 0) config.timeout = timeout;
  config.user_agent = client::AddUserAgent(
      config.user_agent.empty() ? client::DefaultUserAgent() : config.user_agent, name);
  return client::RestClient::Create(config);
}

Clock::duration ResyncPeriod(std::chrono::nanoseconds min_resync_period) {
  std::random_device seed;
  std::mt19937_64 rng(seed());
  double factor = std::uniform_real_distribution<double>(0.0, 1.0)(rng) + 1.0;
  return std::chrono::duration_cast<Clock::duration>(min_resync_period * factor);
}

}  // namespace kcm::app
