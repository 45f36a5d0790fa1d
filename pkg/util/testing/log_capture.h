// LogCapture: the text-form lines glog hands its sinks while it lives, for tests that check what
// a component logs (its message, its pairs, its logger name). Thread-safe.
#pragma once

#include <glog/logging.h>

#include <mutex>
#include <string>
#include <vector>

namespace kcm {

class LogCapture : public google::LogSink {
 public:
  LogCapture() { google::AddLogSink(this); }
  ~LogCapture() override { google::RemoveLogSink(this); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Each line as "<severity letter> <base file name> <body after the header>".
  void send(google::LogSeverity severity, const char*, const char* base_filename, int,
            const google::LogMessageTime&, const char* message, size_t message_len) override {
    std::lock_guard lock(mu_);
    lines_.push_back(std::string(google::GetLogSeverityName(severity)).substr(0, 1) + " " +
                     base_filename + " " + std::string(message, message_len));
  }

  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace kcm
