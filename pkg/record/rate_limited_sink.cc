#include "pkg/record/rate_limited_sink.h"

#include <utility>

#include "pkg/util/any_stop.h"

namespace kcm::record {

RateLimitedEventSink::RateLimitedEventSink(std::shared_ptr<EventSink> inner,
                                           client::RateLimiter& limiter,
                                           std::shared_ptr<const void> limiter_owner,
                                           std::stop_token stop)
    : inner_(std::move(inner)),
      limiter_(limiter),
      limiter_owner_(std::move(limiter_owner)),
      stop_(std::move(stop)) {}

void RateLimitedEventSink::Charge(const std::stop_token& call) {
  if (stop_.stop_requested() || call.stop_requested()) return;
  // Cut short by the controller's stop, the event is then written anyway (see the header); by
  // the call's, the write that follows is canceled at once.
  const AnyStop either(stop_, call);
  (void)limiter_.Wait(either.token());
}

Result<api::Event> RateLimitedEventSink::Create(const api::Event& event, std::stop_token stop) {
  Charge(stop);
  return inner_->Create(event, stop);
}

Result<api::Event> RateLimitedEventSink::Update(const api::Event& event, std::stop_token stop) {
  Charge(stop);
  return inner_->Update(event, stop);
}

Result<api::Event> RateLimitedEventSink::Patch(const api::Event& event, std::string_view patch,
                                               std::stop_token stop) {
  Charge(stop);
  return inner_->Patch(event, patch, stop);
}

}  // namespace kcm::record
