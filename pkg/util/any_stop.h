// AnyStop: a stop token requested as soon as either of two others is (a batch's writes stopped by
// the worker's stop or the write fence's; a cache-sync wait ended by the caller or a shutdown).
// The callbacks are registered for its lifetime: keep it alive while its token is used.
#pragma once

#include <stop_token>

namespace kcm {

class AnyStop {
 public:
  AnyStop(const std::stop_token& a, const std::stop_token& b)
      : a_(a, Forward{&source_}), b_(b, Forward{&source_}) {}
  AnyStop(const AnyStop&) = delete;
  AnyStop& operator=(const AnyStop&) = delete;

  std::stop_token token() const { return source_.get_token(); }

 private:
  struct Forward {
    std::stop_source* source;
    void operator()() const { source->request_stop(); }
  };
  std::stop_source source_;  // first: the callbacks below may request it while being built
  std::stop_callback<Forward> a_;
  std::stop_callback<Forward> b_;
};

}  // namespace kcm
