#include "pkg/runtime/channel_source.h"

namespace kcm::runtime {

ChannelSource::~ChannelSource() {
  if (dispatcher_.joinable()) {
    dispatcher_.request_stop();
    dispatcher_.join();
  }
}

void ChannelSource::Send(GenericEvent event) {
  {
    std::lock_guard lock(mu_);
    buffer_.push_back(std::move(event));
  }
  cv_.notify_all();
}

Status ChannelSource::Start(std::stop_token stop, std::shared_ptr<EventHandler> handler,
                            std::vector<Predicate> predicates, Queue& queue) {
  std::lock_guard lock(mu_);
  sinks_.push_back(Sink{std::move(handler), std::move(predicates), &queue});
  if (!dispatcher_.joinable()) {
    dispatcher_ = std::jthread([this, stop](std::stop_token own) {
      std::stop_callback forward(stop, [&] { cv_.notify_all(); });
      std::stop_callback forward_own(own, [&] { cv_.notify_all(); });
      while (!stop.stop_requested() && !own.stop_requested()) {
        GenericEvent e;
        std::vector<Sink> sinks;
        {
          std::unique_lock l(mu_);
          cv_.wait(
              l, [&] { return !buffer_.empty() || stop.stop_requested() || own.stop_requested(); });
          if (buffer_.empty()) break;
          e = std::move(buffer_.front());
          buffer_.pop_front();
          sinks = sinks_;
        }
        for (const Sink& s : sinks) {
          if (PassGeneric(s.predicates, e)) s.handler->Generic(e, *s.queue);
        }
      }
    });
  }
  return OkStatus();
}

}  // namespace kcm::runtime
