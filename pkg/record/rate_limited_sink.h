// RateLimitedEventSink: an EventSink whose writes take their tokens from another client's rate
// limiter. Upstream's Deployment and ReplicaSet controllers record events through a broadcaster
// that writes with the controller's own clientset (StartRecordingToSink with
// kubeClient.CoreV1().Events("")), so each event spends a token of the controller's
// --kube-api-qps budget: a pod create and its SuccessfulCreate event cost two. Our events go out
// through the daemon's events client; this sink charges them to the controller's limiter, so a
// controller paces its writes as upstream's does. Once `stop` is requested (lease lost, shutdown)
// events are written without waiting for a token; a call's own stop (the broadcaster's Shutdown)
// ends its wait and cancels its write. Thread-safe.
#pragma once

#include <memory>
#include <stop_token>
#include <string_view>

#include "pkg/client/rate_limiter.h"
#include "pkg/record/event_sink.h"

namespace kcm::record {

class RateLimitedEventSink final : public EventSink {
 public:
  // `limiter` belongs to `limiter_owner` (e.g. the controller's RestClient), kept alive here.
  RateLimitedEventSink(std::shared_ptr<EventSink> inner, client::RateLimiter& limiter,
                       std::shared_ptr<const void> limiter_owner, std::stop_token stop);

  Result<api::Event> Create(const api::Event& event, std::stop_token stop) override;
  Result<api::Event> Update(const api::Event& event, std::stop_token stop) override;
  Result<api::Event> Patch(const api::Event& event, std::string_view patch,
                           std::stop_token stop) override;

 private:
  // Waits for a token unless either stop is requested.
  void Charge(const std::stop_token& call);

  std::shared_ptr<EventSink> inner_;
  client::RateLimiter& limiter_;
  std::shared_ptr<const void> limiter_owner_;
  std::stop_token stop_;
};

}  // namespace kcm::record
