// Structured logging in upstream's two formats, on top of glog: klog's text form
// (`I1130 12:00:00.000000 1 file.cc:42] "msg" key="value"`) and its JSON form (one object a line:
// ts, caller, msg, v or err, then the key/value pairs). InfoS/ErrorS take a message and
// alternating keys and values, as klog.InfoS/ErrorS do; KRef renders an object reference as
// "ns/name" in text and {"name","namespace"} in JSON. Plain LOG()/VLOG() lines keep working and
// come out in the configured format too. Nothing a peer sent reaches the output raw: values are
// quoted, and in both formats every line's text has its control characters (C0, DEL, C1,
// U+2028/2029) escaped and its bytes that are not UTF-8 escaped or replaced
// (docs/architecture.md, "Logs").
//
// The format is chosen once by InitLogging in main, before any thread starts (like glog's own
// flags); emitting is thread-safe.
#pragma once

#include <glog/logging.h>

#include <chrono>
#include <concepts>
#include <ctime>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kcm::klog {

enum class Format { kText, kJson };

// Sets the output format and the flush period; in JSON mode glog's own text output is replaced.
void InitLogging(const char* argv0, Format format, std::chrono::nanoseconds flush_frequency);
Format CurrentFormat();

namespace internal {
// The format alone, without glog's setup: InitLogging's choice, and tests'.
void SetFormat(Format format);
}  // namespace internal

struct ObjectRef {
  std::string namespace_;
  std::string name;
};
inline ObjectRef KRef(std::string_view ns, std::string_view name) {
  return {std::string(ns), std::string(name)};
}

namespace internal {

// One value of a key/value pair, already classified for both formats.
struct Value {
  enum class Kind { kString, kNumber, kBool, kRef } kind = Kind::kString;
  std::string text;  // the string, number or bool as text
  ObjectRef ref;     // kRef only
};

inline Value ToValue(const ObjectRef& r) {
  return {Value::Kind::kRef, {}, r};
}
inline Value ToValue(bool b) {
  return {Value::Kind::kBool, b ? "true" : "false", {}};
}
template <typename T>
requires(std::is_arithmetic_v<T> && !std::same_as<T, bool>) Value ToValue(T n) {
  return {Value::Kind::kNumber, std::to_string(n), {}};
}
inline Value ToValue(std::string_view s) {
  return {Value::Kind::kString, std::string(s), {}};
}
inline Value ToValue(const std::string& s) {
  return {Value::Kind::kString, s, {}};
}
inline Value ToValue(const char* s) {
  return {Value::Kind::kString, s ? s : "", {}};
}
// Durations print as Go's time.Duration does ("1.5s"), klog's choice for both formats.
Value DurationValue(std::chrono::nanoseconds d);
template <typename Rep, typename Period>
Value ToValue(std::chrono::duration<Rep, Period> d) {
  return DurationValue(std::chrono::duration_cast<std::chrono::nanoseconds>(d));
}

struct KeyValue {
  std::string key;
  Value value;
};

// The two formats, apart from the output, for tests: klog's text after glog's header, and one
// JSON line (with its newline).
std::string FormatText(const std::string* err, std::string_view msg,
                       const std::vector<KeyValue>& kvs);
// `logger`: a named Logger's name (klog::Logger), which zapr writes as "logger" after "ts".
std::string FormatJson(double ts_ms, const char* caller_file, int line,
                       google::LogSeverity severity, int v, const std::string* err,
                       std::string_view msg, const std::vector<KeyValue>& kvs,
                       std::string_view logger = {});

// A glog message as the text format writes it: control characters escaped and bytes that are not
// UTF-8 written as \xNN (as klog's quoted values), quotes and backslashes left as they are.
std::string EscapeMessage(std::string_view message);
// One whole line of the text format: glog's header (klog's), then the escaped message.
std::string FormatTextLine(google::LogSeverity severity, const std::tm& tm, int usec, long tid,
                           const char* base_filename, int line, std::string_view message);

// `logger`: see FormatJson; in the text form it is the first pair, logger="name", as klogr's.
// Appends `later` to `kvs` as klog's FormatKVs merges WithValues pairs and a call's: the last
// value of a key wins, in its own place; a pair repeated with the same value stays where it was
// first.
void MergeKeyValues(std::vector<KeyValue>& kvs, std::vector<KeyValue> later);

void Emit(const char* file, int line, google::LogSeverity severity, int v, const std::string* err,
          std::string_view msg, const std::vector<KeyValue>& kvs, std::string_view logger = {});

inline void Collect(std::vector<KeyValue>&) {}
template <typename K, typename V, typename... Rest>
void Collect(std::vector<KeyValue>& out, const K& key, const V& value, const Rest&... rest) {
  out.push_back({std::string(key), ToValue(value)});
  Collect(out, rest...);
}

template <typename... KV>
void InfoS(const char* file, int line, int v, std::string_view msg, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "InfoS takes alternating keys and values");
  std::vector<KeyValue> kvs;
  kvs.reserve(sizeof...(KV) / 2);
  Collect(kvs, kv...);
  Emit(file, line, google::GLOG_INFO, v, nullptr, msg, kvs);
}

template <typename... KV>
void WarningS(const char* file, int line, std::string_view msg, const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "WarningS takes alternating keys and values");
  std::vector<KeyValue> kvs;
  Collect(kvs, kv...);
  Emit(file, line, google::GLOG_WARNING, 0, nullptr, msg, kvs);
}

template <typename... KV>
void ErrorS(const char* file, int line, const std::string& err, std::string_view msg,
            const KV&... kv) {
  static_assert(sizeof...(KV) % 2 == 0, "ErrorS takes alternating keys and values");
  std::vector<KeyValue> kvs;
  Collect(kvs, kv...);
  // An empty error is klog.ErrorS(nil, ...): no err pair.
  Emit(file, line, google::GLOG_ERROR, 0, err.empty() ? nullptr : &err, msg, kvs);
}

}  // namespace internal
}  // namespace kcm::klog

// KLOG_INFOS("Started syncing deployment", "deployment", klog::KRef(ns, name));
#define KLOG_INFOS(...) ::kcm::klog::internal::InfoS(__FILE__, __LINE__, 0, __VA_ARGS__)
// KLOG_V_INFOS(4, "msg", "key", value): only when -v is at least 4 (or --vmodule says so).
#define KLOG_V_INFOS(level, ...) \
  if (!VLOG_IS_ON(level)) {      \
  } else                         \
    ::kcm::klog::internal::InfoS(__FILE__, __LINE__, level, __VA_ARGS__)
// KLOG_WARNINGS("msg", "key", value): klog has no structured warning; this is InfoS's form under
// glog's W header, for the events upstream logs with klog.Warningf.
#define KLOG_WARNINGS(...) ::kcm::klog::internal::WarningS(__FILE__, __LINE__, __VA_ARGS__)
// KLOG_ERRORS(error_text, "msg", "key", value): an error line with its cause as "err".
#define KLOG_ERRORS(err, ...) ::kcm::klog::internal::ErrorS(__FILE__, __LINE__, err, __VA_ARGS__)
