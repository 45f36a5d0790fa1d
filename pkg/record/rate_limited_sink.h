// RateLimitedEventSink: an EventSink whose writes take their tokens from another client's rate
// limiter. Upstream's Deployment and ReplicaSet controllers record events through a broadcaster
// that writes with the controller's own clientset (StartRecordingToSink with
// kubeClient.CoreV1().Events("")), so each event spends a token of the controller's
// --kube-api-qps budget: a pod create and its SuccessfulCreate event cost two. Our events go out
// through the daemon's events client; this sink charges them to the controller's limiter, so a
// controller paces its writes as upstream's does. Once `stop` is requested (lease lost, shutdown)
// the remaining events are written without waiting for a token: the broadcaster's shutdown flush
// is bounded by the events client's request timeout, not by the budget. Thread-safe.
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

  Result<api::Event> Create(const api::Event& event) override;
  Result<api::Event> Update(const api::Event& event) override;
  Result<api::Event> Patch(const api::Event& event, std::string_view patch) override;

 private:
  // Waits for a token unless stopped; a wait cut short by the stop lets the write go.
  void Charge();

  std::shared_ptr<EventSink> inner_;
  client::RateLimiter& limiter_;
  std::shared_ptr<const void> limiter_owner_;
  std::stop_token stop_;
};

}  // namespace kcm::record
