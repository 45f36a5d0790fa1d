#include "pkg/record/rate_limited_sink.h"

#include <utility>

namespace kcm::record {

RateLimitedEventSink::RateLimitedEventSink(std::shared_ptr<EventSink> inner,
                                           client::RateLimiter& limiter,
                                           std::shared_ptr<const void> limiter_owner,
                                           std::stop_token stop)
    : inner_(std::move(inner)),
      limiter_(limiter),
      limiter_owner_(std::move(limiter_owner)),
      stop_(std::move(stop)) {}

void RateLimitedEventSink::Charge() {
  if (stop_.stop_requested()) return;
  // Canceled only by the stop: the event is then written anyway (see the header).
  (void)limiter_.Wait(stop_);
}

Result<api::Event> RateLimitedEventSink::Create(const api::Event& event) {
  Charge();
  return inner_->Create(event);
}

Result<api::Event> RateLimitedEventSink::Update(const api::Event& event) {
  Charge();
  return inner_->Update(event);
}

Result<api::Event> RateLimitedEventSink::Patch(const api::Event& event, std::string_view patch) {
  Charge();
  return inner_->Patch(event, patch);
}

}  // namespace kcm::record
