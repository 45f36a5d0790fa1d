// ChannelSource: events from outside the cluster (a webhook, a timer, another system) pushed in
// with Send and delivered as GenericEvents to every handler watching it. Send is thread-safe and
// never blocks on a slow handler: events wait in an unbounded buffer.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "pkg/runtime/source.h"

namespace kcm::runtime {

class ChannelSource final : public Source {
 public:
  ChannelSource() = default;
  ~ChannelSource() override;

  void Send(GenericEvent event);

  Status Start(std::stop_token stop, std::shared_ptr<EventHandler> handler,
               std::vector<Predicate> predicates, Queue& queue) override;
  bool WaitForSync(std::stop_token) override { return true; }  // Nothing to sync.

 private:
  struct Sink {
    std::shared_ptr<EventHandler> handler;
    std::vector<Predicate> predicates;
    Queue* queue;
  };

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<GenericEvent> buffer_;
  std::vector<Sink> sinks_;
  std::jthread dispatcher_;  // Last: stops before the state it reads goes away.
};

}  // namespace kcm::runtime
