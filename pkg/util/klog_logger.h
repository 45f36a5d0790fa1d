// A contextual logger, as klog's (logr.Logger from klog.FromContext / klog.LoggerWithName):
// a name and key/value pairs carried along and written on every line, in both formats of
// klog.h. WithName joins names with ".", as klog's klogr (WithName) and zap do; upstream's
// controller-manager names each controller's logger after the controller
// ("deployment-controller", "replicaset-controller": controller_descriptor.go). The name
// comes out as logger="name" first among the pairs in the text form and as "logger" after
// "ts" in the JSON form (component-base/logs/json, NameKey). Values set by WithValues come
// before the call's own pairs. A Logger is a value: copying it is cheap enough for
// constructors, and it is immutable, so threads share one freely.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/util/klog.h"

namespace kcm::klog {

// A message with the place it was logged from: the caller's file and line, as klog's header
// shows them, without a macro around each call. __builtin_FILE/__builtin_LINE as default
// arguments are evaluated at the call site by GCC and clang alike; std::source_location is not
// usable with clang 14 on libstdc++ 12 (the fuzz and sanitizer builds' compiler).
struct Message {
  Message(const char* text, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : text(text), file(file), line(line) {}
  Message(const std::string& text, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : text(text), file(file), line(line) {}
  Message(std::string_view text, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : text(text), file(file), line(line) {}
  std::string_view text;
  const char* file;
  int line;
};

// True if lines at `level` logged from `file` are written: -v (FLAGS_v) is at least `level`,
// or the --vmodule pattern matching `file` says so (glog's per-file rule, as VLOG_IS_ON and
// klog's V: the file's base name without extension against each pattern).
bool VEnabled(int level, const char* file);

// --vmodule's `pattern=level`, set through glog (google::SetVLOGLevel) and noted here, so that
// V asks glog per file only once a pattern exists.
void SetVModule(const std::string& pattern, int level);

class Logger {
 public:
  // The process's logger without a name: klog.Background().
  Logger() = default;

  // This logger with `name` appended ("parent.name").
  Logger WithName(std::string_view name) const {
    Logger out = *this;
    if (!out.name_.empty()) out.name_ += '.';
    out.name_ += name;
    return out;
  }

  // This logger with key/value pairs added to every line it writes.
  template <typename... KV>
  Logger WithValues(const KV&... kv) const {
    static_assert(sizeof...(KV) % 2 == 0, "WithValues takes alternating keys and values");
    Logger out = *this;
    internal::Collect(out.values_, kv...);
    return out;
  }

  const std::string& name() const { return name_; }

  // logr's V(level): Info on the result writes only when -v is at least `level` (or the caller's
  // file is given another level by --vmodule, as klog's V for the line's caller).
  class Verbose {
   public:
    bool Enabled() const { return enabled_; }
    template <typename... KV>
    void Info(Message msg, const KV&... kv) const {
      if (enabled_) logger_->Write(google::GLOG_INFO, level_, nullptr, msg, kv...);
    }

   private:
    friend class Logger;
    Verbose(const Logger* logger, int level, const char* file)
        : logger_(logger), level_(level), enabled_(VEnabled(level, file)) {}
    const Logger* logger_;
    int level_;
    bool enabled_;
  };
  Verbose V(int level, const char* file = __builtin_FILE()) const {
    return Verbose(this, level, file);
  }

  template <typename... KV>
  void Info(Message msg, const KV&... kv) const {
    Write(google::GLOG_INFO, 0, nullptr, msg, kv...);
  }

  // An error line: `err` is the cause, written as err="..." (logr's Error(err, msg, kv...));
  // an empty `err` is logr's nil error, written without the pair.
  template <typename... KV>
  void Error(const std::string& err, Message msg, const KV&... kv) const {
    Write(google::GLOG_ERROR, 0, err.empty() ? nullptr : &err, msg, kv...);
  }

  // A warning line: klog has no structured warning; this writes klog's W header with the
  // structured body, for the events upstream logs with klog.Warningf.
  template <typename... KV>
  void Warning(Message msg, const KV&... kv) const {
    Write(google::GLOG_WARNING, 0, nullptr, msg, kv...);
  }

 private:
  template <typename... KV>
  void Write(google::LogSeverity severity, int v, const std::string* err, const Message& msg,
             const KV&... kv) const {
    static_assert(sizeof...(KV) % 2 == 0, "a log call takes alternating keys and values");
    std::vector<internal::KeyValue> call;
    call.reserve(sizeof...(KV) / 2);
    internal::Collect(call, kv...);
    std::vector<internal::KeyValue> kvs = values_;
    internal::MergeKeyValues(kvs, std::move(call));
    internal::Emit(msg.file, msg.line, severity, v, err, msg.text, kvs, name_);
  }

  std::string name_;
  std::vector<internal::KeyValue> values_;
};

// klog.Background(): the unnamed logger, for code with no logger handed to it.
inline Logger Background() {
  return Logger();
}

}  // namespace kcm::klog
