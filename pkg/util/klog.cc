#include "pkg/util/klog.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "pkg/util/duration.h"

namespace kcm::klog {
namespace {

// Set once by InitLogging before threads start, read afterwards (see the header).
std::atomic<Format> g_format{Format::kText};

// A double-quoted string with quotes, backslashes and control characters escaped; the two
// formats differ only in how other control characters are written (`control`: a printf format).
std::string Quote(std::string_view s, const char* control) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, control, c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Go's %q for the printable subset klog meets (the text format).
std::string GoQuote(std::string_view s) {
  return Quote(s, "\\x%02x");
}

// A JSON string (the JSON format).
std::string JsonString(std::string_view s) {
  return Quote(s, "\\u%04x");
}

const char* BaseName(const char* file) {
  const char* base = file;
  for (const char* p = file; *p; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

// One JSON line to stderr; the mutex keeps lines from interleaving across threads.
void WriteJsonLine(const char* caller_file, int line, google::LogSeverity severity, int v,
                   const std::string* err, std::string_view msg,
                   const std::vector<internal::KeyValue>& kvs) {
  // klog's JSON "ts" is Unix time in milliseconds, as a float.
  auto now = std::chrono::system_clock::now().time_since_epoch();
  double ms =
      static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) /
      1000.0;
  std::string out = internal::FormatJson(ms, caller_file, line, severity, v, err, msg, kvs);
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace

namespace internal {

std::string FormatJson(double ts_ms, const char* caller_file, int line,
                       google::LogSeverity severity, int v, const std::string* err,
                       std::string_view msg, const std::vector<KeyValue>& kvs) {
  char ts[64];
  std::snprintf(ts, sizeof ts, "%.3f", ts_ms);
  std::string out = std::string("{\"ts\":") + ts + ",\"caller\":" +
                    JsonString(std::string(BaseName(caller_file)) + ":" + std::to_string(line)) +
                    ",\"msg\":" + JsonString(msg);
  if (severity >= google::GLOG_ERROR) {
    if (err) out += ",\"err\":" + JsonString(*err);
  } else {
    out += ",\"v\":" + std::to_string(v);
  }
  for (const auto& kv : kvs) {
    out += "," + JsonString(kv.key) + ":";
    switch (kv.value.kind) {
      case Value::Kind::kNumber:
      case Value::Kind::kBool:
        out += kv.value.text;
        break;
      case Value::Kind::kString:
        out += JsonString(kv.value.text);
        break;
      case Value::Kind::kRef:
        out += "{\"name\":" + JsonString(kv.value.ref.name);
        if (!kv.value.ref.namespace_.empty()) {
          out += ",\"namespace\":" + JsonString(kv.value.ref.namespace_);
        }
        out += "}";
        break;
    }
  }
  return out + "}\n";
}

}  // namespace internal

namespace {

// In JSON mode, plain LOG()/VLOG() lines reach the output through this sink.
class JsonSink : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char* /*full_filename*/, const char* base_filename,
            int line, const google::LogMessageTime& /*time*/, const char* message,
            size_t message_len) override {
    WriteJsonLine(base_filename, line, severity, 0, nullptr, std::string_view(message, message_len),
                  {});
  }
};

}  // namespace

void InitLogging(const char* argv0, Format format, std::chrono::nanoseconds flush_frequency) {
  FLAGS_logbufsecs = static_cast<int32_t>(std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(flush_frequency).count()));
  g_format = format;
  if (format == Format::kJson) {
    FLAGS_logtostderr = false;
    FLAGS_alsologtostderr = false;
    FLAGS_stderrthreshold = google::NUM_SEVERITIES;  // glog writes nothing to stderr itself
  } else {
    FLAGS_logtostderr = true;
    FLAGS_log_year_in_prefix = false;  // klog's header: "I1201 00:11:50.812873 pid file:line]"
  }
  google::InitGoogleLogging(argv0);
  if (format == Format::kJson) {
    for (int s = 0; s < google::NUM_SEVERITIES; ++s) google::SetLogDestination(s, "");  // no files
    static JsonSink sink;  // lives as long as glog may call it: to the end of the process
    google::AddLogSink(&sink);
  }
}

Format CurrentFormat() {
  return g_format.load(std::memory_order_relaxed);
}

namespace internal {

void Emit(const char* file, int line, google::LogSeverity severity, int v, const std::string* err,
          std::string_view msg, const std::vector<KeyValue>& kvs) {
  if (CurrentFormat() == Format::kJson) {
    WriteJsonLine(file, line, severity, v, err, msg, kvs);
    return;
  }
  google::LogMessage(file, line, severity).stream() << FormatText(err, msg, kvs);
}

std::string FormatText(const std::string* err, std::string_view msg,
                       const std::vector<KeyValue>& kvs) {
  std::string text = GoQuote(msg);
  if (err) text += " err=" + GoQuote(*err);
  for (const auto& kv : kvs) {
    text += " " + kv.key + "=";
    switch (kv.value.kind) {
      case Value::Kind::kNumber:
      case Value::Kind::kBool:
        text += kv.value.text;
        break;
      case Value::Kind::kString:
        text += GoQuote(kv.value.text);
        break;
      case Value::Kind::kRef:
        text += GoQuote(kv.value.ref.namespace_.empty()
                            ? kv.value.ref.name
                            : kv.value.ref.namespace_ + "/" + kv.value.ref.name);
        break;
    }
  }
  return text;
}

Value DurationValue(std::chrono::nanoseconds d) {
  return {Value::Kind::kString, FormatDuration(d), {}};
}

}  // namespace internal
}  // namespace kcm::klog
