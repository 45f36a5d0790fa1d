#include "pkg/util/klog.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "pkg/util/duration.h"
#include "pkg/util/utf8.h"

namespace kcm::klog {
namespace {

// Set once by InitLogging before threads start, read afterwards (see the header).
std::atomic<Format> g_format{Format::kText};

// Characters a reader of the log could take for a line break or a terminal's control: C0, DEL,
// C1, and the Unicode line and paragraph separators.
bool IsControl(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029;
}

enum class Style { kGo, kJson };

// Appends `s` with every control character escaped and every byte that is not UTF-8 escaped
// (Go's strconv.Quote, klog's text values: \xNN) or replaced (JSON: U+FFFD, as zap does), so no
// byte of a peer's text can end a line, forge one or reach a terminal raw. `quoted`: inside a
// double-quoted string, where " and \ are escaped too.
void AppendEscaped(std::string& out, std::string_view s, Style style, bool quoted) {
  char buf[16];
  while (!s.empty()) {
    char32_t cp = 0;
    const std::size_t n = utf8::SequenceLength(s, &cp);
    if (n == 0) {
      if (style == Style::kGo) {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[0]));
        out += buf;
      } else {
        out += "\\ufffd";
      }
      s.remove_prefix(1);
      continue;
    }
    if (quoted && (cp == '"' || cp == '\\')) {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (IsControl(cp)) {
      const bool byte = style == Style::kGo && cp < 0x80;
      std::snprintf(buf, sizeof buf, byte ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.data(), n);
    }
    s.remove_prefix(n);
  }
}

// A double-quoted string in `style`.
std::string Quote(std::string_view s, Style style) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  AppendEscaped(out, s, style, /*quoted=*/true);
  out += '"';
  return out;
}

// Go's %q, as klog's text format quotes a string value.
std::string GoQuote(std::string_view s) {
  return Quote(s, Style::kGo);
}

// A JSON string (the JSON format).
std::string JsonString(std::string_view s) {
  return Quote(s, Style::kJson);
}

const char* BaseName(const char* file) {
  const char* base = file;
  for (const char* p = file; *p; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

// Lines from every thread go to stderr whole, one write each under this lock.
void WriteLine(const std::string& line) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// One JSON line to stderr.
void WriteJsonLine(const char* caller_file, int line, google::LogSeverity severity, int v,
                   const std::string* err, std::string_view msg,
                   const std::vector<internal::KeyValue>& kvs, std::string_view logger = {}) {
  // klog's JSON "ts" is Unix time in milliseconds, as a float.
  auto now = std::chrono::system_clock::now().time_since_epoch();
  double ms =
      static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) /
      1000.0;
  WriteLine(internal::FormatJson(ms, caller_file, line, severity, v, err, msg, kvs, logger));
}

}  // namespace

namespace internal {

std::string FormatJson(double ts_ms, const char* caller_file, int line,
                       google::LogSeverity severity, int v, const std::string* err,
                       std::string_view msg, const std::vector<KeyValue>& kvs,
                       std::string_view logger) {
  char ts[64];
  std::snprintf(ts, sizeof ts, "%.3f", ts_ms);
  std::string out = std::string("{\"ts\":") + ts;
  // zap's JSON encoder writes the logger's name (NameKey "logger") between time and caller.
  if (!logger.empty()) out += ",\"logger\":" + JsonString(logger);
  out += std::string(",\"caller\":") +
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

// In text mode every line reaches the output through this sink, with glog's header and its
// message escaped (internal::EscapeMessage): a structured line's values are quoted already, and
// no peer's text in a plain LOG() line can break or forge a line either.
class TextSink : public google::LogSink {
 public:
  void send(google::LogSeverity severity, const char* /*full_filename*/, const char* base_filename,
            int line, const google::LogMessageTime& time, const char* message,
            size_t message_len) override {
    WriteLine(internal::FormatTextLine(severity, time.tm(), time.usec(),
                                       static_cast<long>(::syscall(SYS_gettid)), base_filename,
                                       line, std::string_view(message, message_len)));
  }
};

}  // namespace

void InitLogging(const char* argv0, Format format, std::chrono::nanoseconds flush_frequency) {
  FLAGS_logbufsecs = static_cast<int32_t>(std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(flush_frequency).count()));
  g_format = format;
  // glog writes nothing itself, to stderr or files; a sink of ours writes each line.
  FLAGS_logtostderr = false;
  FLAGS_alsologtostderr = false;
  FLAGS_stderrthreshold = google::NUM_SEVERITIES;
  google::InitGoogleLogging(argv0);
  for (int s = 0; s < google::NUM_SEVERITIES; ++s) google::SetLogDestination(s, "");  // no files
  // They live as long as glog may call them: to the end of the process.
  static JsonSink json_sink;
  static TextSink text_sink;
  if (format == Format::kJson) {
    google::AddLogSink(&json_sink);
  } else {
    google::AddLogSink(&text_sink);
  }
}

void internal::SetFormat(Format format) {
  g_format = format;
}

Format CurrentFormat() {
  return g_format.load(std::memory_order_relaxed);
}

namespace internal {

void MergeKeyValues(std::vector<KeyValue>& kvs, std::vector<KeyValue> later) {
  for (KeyValue& kv : later) {
    auto same_key =
        std::find_if(kvs.begin(), kvs.end(), [&](const KeyValue& e) { return e.key == kv.key; });
    if (same_key != kvs.end()) {
      const Value& old = same_key->value;
      if (old.kind == kv.value.kind && old.text == kv.value.text &&
          old.ref.namespace_ == kv.value.ref.namespace_ && old.ref.name == kv.value.ref.name) {
        continue;
      }
      kvs.erase(same_key);
    }
    kvs.push_back(std::move(kv));
  }
}

void Emit(const char* file, int line, google::LogSeverity severity, int v, const std::string* err,
          std::string_view msg, const std::vector<KeyValue>& kvs, std::string_view logger) {
  if (CurrentFormat() == Format::kJson) {
    WriteJsonLine(file, line, severity, v, err, msg, kvs, logger);
    return;
  }
  if (logger.empty()) {
    google::LogMessage(file, line, severity).stream() << FormatText(err, msg, kvs);
    return;
  }
  // klogr's WithName: the name is the first pair (after err, as klog's printS writes it).
  std::vector<KeyValue> named;
  named.reserve(kvs.size() + 1);
  named.push_back({"logger", ToValue(logger)});
  named.insert(named.end(), kvs.begin(), kvs.end());
  google::LogMessage(file, line, severity).stream() << FormatText(err, msg, named);
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

std::string EscapeMessage(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  AppendEscaped(out, message, Style::kGo, /*quoted=*/false);
  return out;
}

std::string FormatTextLine(google::LogSeverity severity, const std::tm& tm, int usec, long tid,
                           const char* base_filename, int line, std::string_view message) {
  // glog's header, which is klog's: "I1206 03:29:09.123456  4242 file.cc:42] ".
  char head[96];
  const char letter = severity >= 0 && severity < google::NUM_SEVERITIES
                          ? google::GetLogSeverityName(severity)[0]
                          : 'I';
  std::snprintf(head, sizeof head, "%c%02d%02d %02d:%02d:%02d.%06d %5ld ", letter, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec, tid);
  std::string out = head;
  out += base_filename;
  out += ':';
  out += std::to_string(line);
  out += "] ";
  out += EscapeMessage(message);
  out += '\n';
  return out;
}

Value DurationValue(std::chrono::nanoseconds d) {
  return {Value::Kind::kString, FormatDuration(d), {}};
}

}  // namespace internal
}  // namespace kcm::klog
