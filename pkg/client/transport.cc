#include "pkg/client/transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "pkg/client/host_lookup.h"
#include "pkg/client/json_padding.h"
#include "pkg/util/openssl_ptr.h"

namespace kcm::client {
namespace {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Idle keep-alive connections kept for reuse (all hosts together), and how long one may sit idle
// (client-go's transport: IdleConnTimeout 90 s).
constexpr std::size_t kMaxIdleConnections = 32;
constexpr auto kIdleConnectionTimeout = std::chrono::seconds(90);
// The largest response head (status line and headers) we accept.
constexpr std::size_t kMaxHeadBytes = 1 << 20;
// How much one socket read asks for.
constexpr std::size_t kReadChunk = 64 << 10;
// Request bodies up to this size go out in the same write as the head.
constexpr std::size_t kInlineBodyBytes = 16 << 10;
// The socket's receive timeout (SO_RCVTIMEO): how long a read that waits in the kernel for a
// RoundTrip's answer may block before the request's limits are looked at again.
constexpr int kBlockingReadMs = 100;

// Dead-peer detection on every connection, idle or streaming a watch. client-go gets it from its
// HTTP/2 health check (http2.Transport ReadIdleTimeout 30 s: send a PING after 30 s without a
// frame; PingTimeout 15 s: close the connection when the PING is not answered). Over HTTP/1.1 TCP
// keepalive with the same numbers does it in the kernel: the first probe after 30 s idle, and a
// connection whose probe is unanswered for 15 s is closed (the pending read then fails with cause
// kConnectionReset or kTimedOut). A live server that accepts and stays silent answers the probes;
// the request deadlines (stall limit, total timeout) cover that case.
constexpr int kKeepAliveIdleSeconds = 30;
constexpr int kKeepAliveIntervalSeconds = 15;
constexpr int kKeepAliveProbes = 1;

// HTTP's names and tokens are ASCII: folded inline rather than by std::tolower, a locale-aware
// call per byte (1.2k instructions per answer's head, callgrind).
char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r')) {
    v.remove_suffix(1);
  }
  return v;
}

bool IsIpLiteral(const std::string& host) {
  in_addr a4{};
  in6_addr a6{};
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

// scheme://host[:port] of a URL, and the rest (the request target).
struct Endpoint {
  bool tls = true;
  std::string host;       // without IPv6 brackets
  std::string port;       // always set
  std::string authority;  // host[:port] as in the URL, for Host and CONNECT
  bool ip = false;
  std::string key;  // "https://host:port", the pool's key
};

struct ParsedUrl {
  Endpoint endpoint;
  std::string target;  // "/path?query"
};

std::optional<ParsedUrl> ParseUrl(std::string_view url) {
  ParsedUrl out;
  if (url.starts_with("https://")) {
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    url.remove_prefix(7);
    out.endpoint.tls = false;
  } else {
    return std::nullopt;
  }
  const std::size_t slash = url.find_first_of("/?");
  std::string_view authority = url.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (out.target.front() == '?') out.target.insert(0, "/");
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // userinfo is not ours to send
  }
  if (authority.empty()) return std::nullopt;
  out.endpoint.authority = std::string(authority);
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  out.endpoint.host = Lower(host);
  out.endpoint.port = port.empty() ? (out.endpoint.tls ? "443" : "80") : std::string(port);
  out.endpoint.ip = IsIpLiteral(out.endpoint.host);
  out.endpoint.key = std::string(out.endpoint.tls ? "https://" : "http://") + out.endpoint.host +
                     ":" + out.endpoint.port;
  return out;
}

// --- proxies from the environment (net/http.ProxyFromEnvironment) ------------------------------

std::string Env(const char* upper, const char* lower) {
  if (const char* v = std::getenv(upper); v != nullptr && *v != '\0') return v;
  if (const char* v = std::getenv(lower); v != nullptr) return v;
  return "";
}

std::string Base64(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()),
                                static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int v = 0;
      if (std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr == s.data() + i + 3) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

struct Proxy {
  Endpoint endpoint;
  std::string authorization;  // Proxy-Authorization value, "" if none
  std::string error;          // an unusable proxy setting: every request through it fails so
};

// One NO_PROXY entry, golang.org/x/net/http/httpproxy's rules: "*" matches every host; a CIDR
// matches IP hosts inside it; an IP matches itself; "example.com" matches it and its subdomains,
// ".example.com" (or "*.example.com") only the subdomains; an entry with ":port" only that port.
struct NoProxyEntry {
  bool all = false;
  std::string domain;  // lower-case; a leading '.' = subdomains only
  std::string port;    // "" = any
  int family = 0;      // AF_INET/AF_INET6 for an IP or CIDR
  unsigned char addr[16] = {};
  int prefix = -1;  // CIDR prefix length; -1 = exact IP
};

bool ParseIp(const std::string& s, int* family, unsigned char* addr) {
  if (inet_pton(AF_INET, s.c_str(), addr) == 1) {
    *family = AF_INET;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), addr) == 1) {
    *family = AF_INET6;
    return true;
  }
  return false;
}

std::vector<NoProxyEntry> ParseNoProxy(std::string_view list) {
  std::vector<NoProxyEntry> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string entry = Lower(Trim(list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (entry.empty()) continue;
    NoProxyEntry e;
    if (entry == "*") {
      e.all = true;
      out.push_back(e);
      continue;
    }
    if (const auto slash = entry.find('/'); slash != std::string::npos) {
      int bits = -1;
      const std::string_view len = std::string_view(entry).substr(slash + 1);
      std::from_chars(len.data(), len.data() + len.size(), bits);
      if (ParseIp(entry.substr(0, slash), &e.family, e.addr) && bits >= 0 &&
          bits <= (e.family == AF_INET ? 32 : 128)) {
        e.prefix = bits;
        out.push_back(e);
      }
      continue;
    }
    if (ParseIp(entry, &e.family, e.addr)) {
      out.push_back(e);
      continue;
    }
    std::string host = entry;
    if (host.front() == '[') {  // [v6]:port
      const auto close = host.find(']');
      if (close != std::string::npos) {
        if (close + 2 < host.size() && host[close + 1] == ':') e.port = host.substr(close + 2);
        host = host.substr(1, close - 1);
        if (ParseIp(host, &e.family, e.addr)) out.push_back(e);
      }
      continue;
    }
    if (const auto colon = host.rfind(':'); colon != std::string::npos) {
      e.port = host.substr(colon + 1);
      host = host.substr(0, colon);
      if (ParseIp(host, &e.family, e.addr)) {
        out.push_back(e);
        continue;
      }
    }
    if (host.starts_with("*.")) host.erase(0, 1);
    e.domain = host;
    out.push_back(e);
  }
  return out;
}

bool NoProxyMatches(const std::vector<NoProxyEntry>& entries, const Endpoint& target) {
  int family = 0;
  unsigned char addr[16] = {};
  const bool ip = ParseIp(target.host, &family, addr);
  for (const auto& e : entries) {
    if (e.all) return true;
    if (!e.port.empty() && e.port != target.port) continue;
    if (e.family != 0) {
      if (!ip || family != e.family) continue;
      const int bits = e.prefix < 0 ? (family == AF_INET ? 32 : 128) : e.prefix;
      bool match = true;
      for (int b = 0; b < bits && match; ++b) {
        const int mask = 0x80 >> (b % 8);
        match = (addr[b / 8] & mask) == (e.addr[b / 8] & mask);
      }
      if (match) return true;
      continue;
    }
    if (ip) continue;
    if (e.domain.front() == '.') {
      if (target.host.ends_with(e.domain)) return true;
    } else if (target.host == e.domain || target.host.ends_with("." + e.domain)) {
      return true;
    }
  }
  return false;
}

struct ProxySettings {
  std::optional<Proxy> https;  // for https:// targets (HTTPS_PROXY)
  std::optional<Proxy> http;   // for http:// targets (HTTP_PROXY)
  std::vector<NoProxyEntry> no_proxy;

  static std::optional<Proxy> Parse(const std::string& value) {
    if (value.empty()) return std::nullopt;
    Proxy p;
    std::string url = value.find("://") == std::string::npos ? "http://" + value : value;
    if (!url.starts_with("http://")) {
      p.error = "proxy " + value + ": only http:// proxies are supported";
      return p;
    }
    std::string_view rest = std::string_view(url).substr(7);
    const std::string_view authority = rest.substr(0, rest.find('/'));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
      p.authorization = "Basic " + Base64(PercentDecode(authority.substr(0, at)));
    }
    auto parsed = ParseUrl(url);
    if (!parsed) {
      p.error = "proxy " + value + ": not a URL";
      return p;
    }
    p.endpoint = parsed->endpoint;
    return p;
  }

  static ProxySettings FromEnvironment() {
    ProxySettings s;
    s.https = Parse(Env("HTTPS_PROXY", "https_proxy"));
    s.http = Parse(Env("HTTP_PROXY", "http_proxy"));
    s.no_proxy = ParseNoProxy(Env("NO_PROXY", "no_proxy"));
    return s;
  }

  // The proxy for a target, or none. As Go's httpproxy: localhost and loopback addresses are
  // never proxied.
  const Proxy* For(const Endpoint& target) const {
    const std::optional<Proxy>& p = target.tls ? https : http;
    if (!p) return nullptr;
    if (target.host == "localhost" || target.host.ends_with(".localhost")) return nullptr;
    int family = 0;
    unsigned char addr[16] = {};
    if (ParseIp(target.host, &family, addr)) {
      static constexpr unsigned char kV6Loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                        0, 0, 0, 0, 0, 0, 0, 1};
      if ((family == AF_INET && addr[0] == 127) ||
          (family == AF_INET6 && std::memcmp(addr, kV6Loopback, 16) == 0)) {
        return nullptr;
      }
    }
    if (NoProxyMatches(no_proxy, target)) return nullptr;
    return &*p;
  }
};

// --- TLS ---------------------------------------------------------------------------------------

// What the BIO under a TLS connection needs of it: the socket, where to say that a read found
// the socket empty (Connection::socket_drained), and whether the next read may block
// (Connection::blocking_read).
struct SocketBioTarget {
  int fd = -1;
  bool* drained = nullptr;
  bool* blocking_read = nullptr;
};

// The BIO under each TLS connection: the socket read and written with recv/send, sending with
// MSG_NOSIGNAL. OpenSSL's own socket BIO write()s, which raises SIGPIPE on a connection the peer
// reset and kills a process that keeps SIGPIPE's default action (a library must not rely on its
// host ignoring it; libcurl blocked it around each call). Made once, never changed afterwards.
int BioWrite(BIO* b, const char* data, int n) {
  BIO_clear_retry_flags(b);
  const auto* target = static_cast<const SocketBioTarget*>(BIO_get_data(b));
  const long r = ::send(target->fd, data, static_cast<std::size_t>(n), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_write(b);
  }
  return static_cast<int>(r);
}

int BioRead(BIO* b, char* data, int n) {
  BIO_clear_retry_flags(b);
  const auto* target = static_cast<const SocketBioTarget*>(BIO_get_data(b));
  const long r = ::recv(target->fd, data, static_cast<std::size_t>(n),
                        *target->blocking_read ? 0 : MSG_DONTWAIT);
  *target->blocking_read = false;
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    BIO_set_retry_read(b);
  }
  // With read-ahead OpenSSL asks for all the room its buffer has: less than that means the
  // socket held no more at this moment.
  *target->drained = r < n;
  return static_cast<int>(r);
}

long BioCtrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

const BIO_METHOD* SocketBioMethod() {
  static const BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "kcm-socket");
    BIO_meth_set_write(m, &BioWrite);
    BIO_meth_set_read(m, &BioRead);
    BIO_meth_set_ctrl(m, &BioCtrl);
    return m;
  }();
  return method;
}

std::string OpenSslError() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown TLS error" : out;
}

util::BioPtr MemBio(const std::string& pem) {
  return util::BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = in.good();
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The SSL_CTX from the RestConfig's TLS settings; an error names what could not be used
// (client-go fails at transport creation the same way).
Result<util::SslCtxPtr> MakeTlsContext(const RestConfig& config) {
  util::SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return Error::Local("InvalidConfig", "SSL_CTX_new: " + OpenSslError());
  SSL_CTX* c = ctx.get();
  SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);  // crypto/tls's client minimum
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
  // A peer that closes without close_notify ends the stream like a clean EOF; a body cut short
  // is still caught by its framing (Content-Length, chunked).
  SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
  SSL_CTX_set_verify(c, config.insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  if (!config.insecure) {
    std::string ca = config.ca_data;
    if (ca.empty() && !config.ca_file.empty()) {
      bool ok = false;
      ca = ReadFile(config.ca_file, &ok);
      if (!ok) {
        return Error::Local("InvalidConfig",
                            "cannot read certificate-authority file " + config.ca_file);
      }
    }
    if (ca.empty()) {
      SSL_CTX_set_default_verify_paths(c);
    } else {
      auto bio = MemBio(ca);
      X509_STORE* store = SSL_CTX_get_cert_store(c);
      int added = 0;
      while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        X509_STORE_add_cert(store, cert);
        X509_free(cert);
        ++added;
      }
      ERR_clear_error();
      if (added == 0) {
        return Error::Local("InvalidConfig",
                            "certificate-authority: no PEM certificate in " +
                                (config.ca_data.empty() ? config.ca_file : std::string("data")));
      }
    }
  }
  std::string cert = config.cert_data;
  std::string key = config.key_data;
  bool ok = true;
  if (cert.empty() && !config.cert_file.empty()) {
    cert = ReadFile(config.cert_file, &ok);
    if (!ok) {
      return Error::Local("InvalidConfig",
                          "cannot read client-certificate file " + config.cert_file);
    }
  }
  if (key.empty() && !config.key_file.empty()) {
    key = ReadFile(config.key_file, &ok);
    if (!ok) return Error::Local("InvalidConfig", "cannot read client-key file " + config.key_file);
  }
  if (cert.empty() && !key.empty()) {
    return Error::Local("InvalidConfig", "client key given without a client certificate");
  }
  if (!cert.empty()) {
    auto bio = MemBio(cert);
    util::X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!leaf || SSL_CTX_use_certificate(c, leaf.get()) != 1) {
      return Error::Local("InvalidConfig", "client-certificate: " + OpenSslError());
    }
    while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      if (SSL_CTX_add0_chain_cert(c, extra) != 1) X509_free(extra);
    }
    ERR_clear_error();
    auto key_bio = MemBio(key);
    util::PkeyPtr pkey(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
    if (!pkey || SSL_CTX_use_PrivateKey(c, pkey.get()) != 1 || SSL_CTX_check_private_key(c) != 1) {
      return Error::Local("InvalidConfig", "client-key: " + OpenSslError());
    }
  }
  static constexpr unsigned char kAlpn[] = "\x08http/1.1";
  SSL_CTX_set_alpn_protos(c, kAlpn, sizeof kAlpn - 1);
  // Read-ahead: one recv takes every record the socket holds (up to OpenSSL's read buffer)
  // instead of two per record (its 5-byte header, then its body). Every wait for the socket
  // therefore first asks SSL_has_pending whether OpenSSL holds bytes already.
  SSL_CTX_set_read_ahead(c, 1);
  return ctx;
}

// --- connections -------------------------------------------------------------------------------

// Received bytes; grows without zero-filling what a read is about to overwrite (a std::string
// resize before each 64 kB read would clear 64 kB per read).
class Buffer {
 public:
  std::string_view view() const { return {data_.get(), size_}; }
  std::size_t size() const { return size_; }
  // Room for n more bytes at the end.
  char* Reserve(std::size_t n) {
    if (size_ + n > capacity_) {
      const std::size_t cap = std::max(size_ + n, capacity_ * 2);
      auto grown = std::make_unique_for_overwrite<char[]>(cap);
      if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
      data_ = std::move(grown);
      capacity_ = cap;
    }
    return data_.get() + size_;
  }
  void Commit(std::size_t n) { size_ += n; }
  void EraseFront(std::size_t n) {
    std::memmove(data_.get(), data_.get() + n, size_ - n);
    size_ -= n;
  }
  void clear() { size_ = 0; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// One TCP (and TLS) connection with the bytes read from it and not yet consumed. Every send and
// receive is non-blocking (MSG_DONTWAIT) and every wait goes through Limits, but one: a
// RoundTrip waiting for its answer reads with the socket's receive timeout instead of a poll
// followed by a read (blocking_read; the socket itself is blocking once connected).
struct Connection {
  int fd = -1;
  util::SslPtr ssl;
  std::string key;
  Buffer in;
  std::size_t pos = 0;
  TimePoint idle_since;
  bool reused = false;
  // The last read from the socket returned less than it asked for: the socket was empty then,
  // so the next read waits for it before reading (a read now would almost always fail with
  // EAGAIN, one syscall for nothing), and a read that must not wait returns at once.
  bool socket_drained = false;
  // The next read blocks for up to kBlockingReadMs (then fails with EAGAIN); cleared by it.
  bool blocking_read = false;
  SocketBioTarget bio_target;  // the TLS BIO's view of fd, socket_drained and blocking_read

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    // A close_notify (one non-blocking write; its failure on a broken connection changes
    // nothing): without it OpenSSL takes the connection for cut short and marks its session
    // not resumable, the session the next connection to the endpoint would resume.
    if (ssl && SSL_is_init_finished(ssl.get())) SSL_shutdown(ssl.get());
    ssl.reset();
    if (fd >= 0) ::close(fd);
  }
  std::size_t available() const { return in.size() - pos; }
};

// The deadlines, the stall limit and the cancel sources of one request.
struct Limits {
  TimePoint deadline = TimePoint::max();          // total
  TimePoint connect_deadline = TimePoint::max();  // while connecting (set by each dial)
  std::chrono::milliseconds connect_timeout{0};
  bool connecting = false;
  std::chrono::seconds stall{0};
  long stall_rate = 1;
  TimePoint window_start;
  std::uint64_t window_bytes = 0;
  std::stop_token stop;
  int cancel_fd = -1;  // an eventfd: readable = canceled
  const std::atomic<bool>* canceled = nullptr;

  enum class Wait { kReady, kTimedOut, kConnectTimedOut, kStalled, kCanceled };

  void Progress(std::size_t n) { window_bytes += n; }

  // Whether a limit ends the wait at this moment; if not, *timeout_ms is how long the next wait
  // may last (-1 = no bound).
  std::optional<Wait> Due(int* timeout_ms) {
    if ((canceled != nullptr && canceled->load()) || stop.stop_requested()) return Wait::kCanceled;
    const TimePoint now = Clock::now();
    if (connecting && now >= connect_deadline) return Wait::kConnectTimedOut;
    if (now >= deadline) return Wait::kTimedOut;
    TimePoint until = connecting ? std::min(deadline, connect_deadline) : deadline;
    if (stall.count() > 0) {
      // libcurl's CURLOPT_LOW_SPEED_LIMIT/TIME, which this replaces: the average over the last
      // `stall` seconds under the rate fails the transfer.
      if (now - window_start >= stall) {
        if (window_bytes <
            static_cast<std::uint64_t>(stall_rate) * static_cast<std::uint64_t>(stall.count())) {
          return Wait::kStalled;
        }
        window_start = now;
        window_bytes = 0;
      }
      until = std::min(until, window_start + stall);
    }
    // A stop_token has no descriptor to poll: look at it every 100 ms.
    if (stop.stop_possible()) until = std::min(until, now + std::chrono::milliseconds(100));
    *timeout_ms = -1;
    if (until != TimePoint::max()) {
      *timeout_ms =
          static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(until - now).count());
    }
    return std::nullopt;
  }

  // Waits until fd is ready for `events`, or a limit ends the wait.
  Wait WaitFor(int fd, short events) {
    for (;;) {
      int timeout = -1;
      if (const auto due = Due(&timeout)) return *due;
      pollfd fds[2] = {{fd, events, 0}, {cancel_fd, POLLIN, 0}};
      const int n = ::poll(fds, cancel_fd >= 0 ? 2 : 1, timeout);
      if (n < 0 && errno != EINTR) return Wait::kReady;  // let the I/O call report it
      if (n > 0 && cancel_fd >= 0 && (fds[1].revents & POLLIN) != 0) return Wait::kCanceled;
      if (n > 0 && fds[0].revents != 0) return Wait::kReady;
    }
  }
};

// What failed, before it is turned into the request's Error.
struct Failure {
  TransportCause cause = TransportCause::kOther;
  std::string what;
  bool canceled = false;
  // No byte of an answer arrived and the connection was closed or reset: a reused connection
  // that the server had already closed (see Exchange).
  bool closed_before_answer = false;
  std::optional<Error> error;  // kept as is (a BodySink's error)
};

// A socket or TLS call failed: the connection is unusable (Exchange decides from the bytes
// received whether the request may go again on a new one).
Failure SocketFailure(TransportCause cause, std::string what) {
  Failure f;
  f.cause = cause;
  f.what = std::move(what);
  f.closed_before_answer = true;
  return f;
}

Failure FromWait(Limits::Wait w, const Limits& limits, std::uint64_t received) {
  Failure f;
  switch (w) {
    case Limits::Wait::kCanceled:
      f.canceled = true;
      f.what = "request canceled";
      break;
    case Limits::Wait::kConnectTimedOut:
      f.cause = TransportCause::kTimedOut;
      f.what = "connection timed out";
      break;
    case Limits::Wait::kTimedOut:
      f.cause = TransportCause::kTimedOut;
      f.what = "operation timed out with " + std::to_string(received) + " bytes received";
      break;
    case Limits::Wait::kStalled:
      f.cause = TransportCause::kTimedOut;
      f.what = "operation too slow: less than " + std::to_string(limits.stall_rate) +
               " bytes/s transferred the last " + std::to_string(limits.stall.count()) + " seconds";
      break;
    case Limits::Wait::kReady:
      break;
  }
  return f;
}

enum class Io { kOk, kEof, kWouldBlock };

// Reads more bytes into c.in. With wait = false, returns kWouldBlock instead of waiting.
std::optional<Failure> Fill(Connection& c, Limits& limits, bool wait, Io* io,
                            std::uint64_t* received) {
  if (c.pos == c.in.size()) {
    c.in.clear();
    c.pos = 0;
  } else if (c.pos > kReadChunk) {
    c.in.EraseFront(c.pos);
    c.pos = 0;
  }
  char* room = c.in.Reserve(kReadChunk);
  // Whether the next read needs bytes from the socket, so waits for it first: the socket was
  // found empty and OpenSSL holds nothing, or OpenSSL asked for more (what it holds, if anything,
  // is part of a record).
  bool need_socket = c.socket_drained && !(c.ssl && SSL_has_pending(c.ssl.get()));
  for (;;) {
    if (need_socket) {
      if (!wait) {
        *io = Io::kWouldBlock;
        return std::nullopt;
      }
      int timeout = -1;
      if (const auto due = limits.Due(&timeout)) return FromWait(*due, limits, *received);
      if (limits.cancel_fd < 0 && (timeout < 0 || timeout >= kBlockingReadMs)) {
        // No eventfd to watch (a RoundTrip) and no limit due within the socket's receive
        // timeout: the read itself waits, one syscall where a poll and a read were two. It
        // comes back empty after kBlockingReadMs and the limits are looked at again.
        c.blocking_read = true;
      } else if (const auto w = limits.WaitFor(c.fd, POLLIN); w != Limits::Wait::kReady) {
        return FromWait(w, limits, *received);
      }
    }
    short want = POLLIN;
    long n = 0;
    if (c.ssl) {
      ERR_clear_error();
      const int r = SSL_read(c.ssl.get(), room, static_cast<int>(kReadChunk));
      if (r > 0) {
        n = r;
      } else {
        const int err = SSL_get_error(c.ssl.get(), r);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
          want = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
          n = -1;
        } else if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && errno == 0)) {
          n = 0;
        } else {
          return SocketFailure(
              err == SSL_ERROR_SSL ? TransportCause::kTLS : TransportCause::kConnectionReset,
              err == SSL_ERROR_SSL ? "TLS read: " + OpenSslError()
                                   : std::string("recv failure: ") + std::strerror(errno));
        }
      }
    } else {
      n = ::recv(c.fd, room, kReadChunk, c.blocking_read ? 0 : MSG_DONTWAIT);
      c.socket_drained = n < static_cast<long>(kReadChunk);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        n = -1;
      } else if (n < 0) {
        return SocketFailure(TransportCause::kConnectionReset,
                             std::string("recv failure: ") + std::strerror(errno));
      }
    }
    c.blocking_read = false;  // one read at most (OpenSSL may not have read the socket at all)
    if (n >= 0) {
      c.in.Commit(static_cast<std::size_t>(n));
      *io = n == 0 ? Io::kEof : Io::kOk;
      limits.Progress(static_cast<std::size_t>(n));
      *received += static_cast<std::uint64_t>(n);
      return std::nullopt;
    }
    // More bytes needed: the top of the loop waits for the socket (or returns when not waiting).
    need_socket = want == POLLIN;
    if (need_socket) continue;
    if (!wait) {
      *io = Io::kWouldBlock;
      return std::nullopt;
    }
    if (const auto w = limits.WaitFor(c.fd, want); w != Limits::Wait::kReady) {
      return FromWait(w, limits, *received);
    }
  }
}

// Writes all of data. *written counts what the connection accepted.
std::optional<Failure> WriteAll(Connection& c, std::string_view data, Limits& limits,
                                std::uint64_t* written) {
  while (!data.empty()) {
    short want = POLLOUT;
    long n = 0;
    if (c.ssl) {
      ERR_clear_error();
      const int r = SSL_write(c.ssl.get(), data.data(), static_cast<int>(data.size()));
      if (r > 0) {
        n = r;
      } else {
        const int err = SSL_get_error(c.ssl.get(), r);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
          want = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
          n = -1;
        } else {
          return SocketFailure(TransportCause::kConnectionReset,
                               err == SSL_ERROR_SSL
                                   ? "TLS write: " + OpenSslError()
                                   : std::string("send failure: ") + std::strerror(errno));
        }
      }
    } else {
      n = ::send(c.fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        n = -1;
      } else if (n < 0) {
        return SocketFailure(TransportCause::kConnectionReset,
                             std::string("send failure: ") + std::strerror(errno));
      }
    }
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      *written += static_cast<std::uint64_t>(n);
      limits.Progress(static_cast<std::size_t>(n));
      continue;
    }
    if (const auto w = limits.WaitFor(c.fd, want); w != Limits::Wait::kReady) {
      return FromWait(w, limits, 0);
    }
  }
  return std::nullopt;
}

// --- response head and body framing ------------------------------------------------------------

struct Head {
  int status = 0;
  bool chunked = false;
  std::int64_t length = -1;
  bool close = false;
  bool gzip = false;
  bool no_body = false;
  std::string retry_after;
  std::string content_type;
};

// Parses one head (status line to the empty line). False if malformed.
bool ParseHead(std::string_view text, Head* head) {
  const auto eol = text.find("\r\n");
  const std::string_view status_line = text.substr(0, eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) return false;
  const bool http10 = status_line[7] == '0';
  if (std::from_chars(status_line.data() + 9, status_line.data() + 12, head->status).ec !=
      std::errc{}) {
    return false;
  }
  head->close = http10;
  std::string_view rest = eol == std::string_view::npos ? "" : text.substr(eol + 2);
  while (!rest.empty()) {
    const auto end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? "" : rest.substr(end + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsNoCase(name, "Content-Length")) {
      if (std::from_chars(value.data(), value.data() + value.size(), head->length).ec !=
          std::errc{}) {
        return false;
      }
    } else if (EqualsNoCase(name, "Transfer-Encoding")) {
      head->chunked = Lower(value).find("chunked") != std::string::npos;
    } else if (EqualsNoCase(name, "Connection")) {
      const std::string v = Lower(value);
      if (v.find("close") != std::string::npos) head->close = true;
      if (v.find("keep-alive") != std::string::npos) head->close = false;
    } else if (EqualsNoCase(name, "Content-Encoding")) {
      head->gzip = EqualsNoCase(value, "gzip") || EqualsNoCase(value, "x-gzip");
    } else if (EqualsNoCase(name, "Retry-After")) {
      head->retry_after = std::string(value);
    } else if (EqualsNoCase(name, "Content-Type")) {
      head->content_type = std::string(value);
    }
  }
  return true;
}

// Undoes the transfer framing (Content-Length, chunked, or up to the close) incrementally.
class BodyReader {
 public:
  void Reset(const Head& head, bool head_request) {
    if (head_request || head.no_body) {
      state_ = kDone;
    } else if (head.chunked) {
      state_ = kChunkSize;
    } else if (head.length >= 0) {
      state_ = kLength;
      remaining_ = static_cast<std::uint64_t>(head.length);
    } else {
      state_ = kUntilClose;
    }
  }
  bool done() const { return state_ == kDone; }
  bool until_close() const { return state_ == kUntilClose; }

  // The next piece of the body from the connection's buffer (a view into it, valid until the
  // next call), reading as needed; with wait = false, an empty piece when nothing is buffered.
  // Empty and done() at the end.
  std::optional<Failure> Next(Connection& c, Limits& limits, bool wait, std::string_view* piece,
                              std::uint64_t* received) {
    *piece = {};
    for (;;) {
      switch (state_) {
        case kDone:
          return std::nullopt;
        case kLength:
        case kChunkData:
        case kUntilClose: {
          if (state_ != kUntilClose && remaining_ == 0) {
            state_ = state_ == kLength ? kDone : kChunkEnd;
            continue;
          }
          if (c.available() > 0) {
            std::size_t n = c.available();
            if (state_ != kUntilClose)
              n = static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
            *piece = c.in.view().substr(c.pos, n);
            c.pos += n;
            if (state_ != kUntilClose) remaining_ -= n;
            return std::nullopt;
          }
          break;
        }
        case kChunkSize:
        case kChunkEnd:
        case kTrailer: {
          const auto eol = c.in.view().find("\r\n", c.pos);
          if (eol == std::string::npos) {
            if (c.available() > 4096) return Malformed("chunk framing line too long");
            break;
          }
          const std::string_view line = c.in.view().substr(c.pos, eol - c.pos);
          c.pos = eol + 2;
          if (state_ == kChunkEnd) {
            if (!line.empty()) return Malformed("chunk not followed by CRLF");
            state_ = kChunkSize;
          } else if (state_ == kTrailer) {
            if (line.empty()) state_ = kDone;
          } else {
            const std::string_view size = Trim(line.substr(0, line.find(';')));
            std::uint64_t n = 0;
            const auto r = std::from_chars(size.data(), size.data() + size.size(), n, 16);
            if (size.empty() || r.ec != std::errc{} || r.ptr != size.data() + size.size()) {
              return Malformed("bad chunk size");
            }
            remaining_ = n;
            state_ = n == 0 ? kTrailer : kChunkData;
          }
          continue;
        }
      }
      Io io = Io::kOk;
      if (auto f = Fill(c, limits, wait, &io, received)) return f;
      if (io == Io::kWouldBlock) return std::nullopt;
      if (io == Io::kEof) {
        if (state_ == kUntilClose) {
          state_ = kDone;
          return std::nullopt;
        }
        Failure f;
        f.cause = TransportCause::kConnectionReset;
        f.what = "connection closed before the end of the answer";
        return f;
      }
    }
  }

 private:
  static Failure Malformed(std::string what) {
    Failure f;
    f.what = "malformed answer: " + std::move(what);
    return f;
  }
  enum State { kDone, kLength, kChunkSize, kChunkData, kChunkEnd, kTrailer, kUntilClose };
  State state_ = kDone;
  std::uint64_t remaining_ = 0;
};

// Content-Encoding: gzip, inflated as it arrives.
class Inflater {
 public:
  Inflater() = default;
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater() {
    if (active_) inflateEnd(&z_);
  }
  void Start() {
    if (active_) inflateEnd(&z_);
    z_ = z_stream{};
    active_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;
  }
  // Appends the inflated bytes of `in` to *out, stopping once *out is over `limit` (0 = none;
  // the caller then fails the request) so that a small compressed body cannot make us hold an
  // unbounded inflated one.
  std::optional<Failure> Feed(std::string_view in, std::string* out, std::size_t limit) {
    if (!active_) return Bad("inflateInit2 failed");
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    while (z_.avail_in > 0 && !ended_ && (limit == 0 || out->size() <= limit)) {
      const std::size_t old = out->size();
      const std::size_t room = std::max<std::size_t>(in.size() * 4, 16384);
      out->resize(old + room);
      z_.next_out = reinterpret_cast<Bytef*>(out->data() + old);
      z_.avail_out = static_cast<uInt>(room);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      out->resize(old + room - z_.avail_out);
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Bad(z_.msg != nullptr ? z_.msg : "inflate failed");
      }
    }
    return std::nullopt;
  }

 private:
  static Failure Bad(std::string what) {
    Failure f;
    f.what = "error while processing content unencoding: " + std::move(what);
    return f;
  }
  z_stream z_{};
  bool active_ = false;
  bool ended_ = false;
};

bool IsReplayable(const HttpRequest& r) {
  // net/http's Request.isReplayable: the methods that do not change anything, or a request that
  // names an idempotency key.
  if (r.method == "GET" || r.method == "HEAD" || r.method == "OPTIONS" || r.method == "TRACE") {
    return true;
  }
  for (const auto& [name, value] : r.headers) {
    if (EqualsNoCase(name, "Idempotency-Key") || EqualsNoCase(name, "X-Idempotency-Key")) {
      return true;
    }
  }
  return false;
}

bool SendsBody(const HttpRequest& r) {
  return !r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH";
}

}  // namespace

struct Transport::Impl {
  RestConfig config;
  util::SslCtxPtr ctx;
  ProxySettings proxies;
  std::mutex pool_mu;
  std::vector<std::unique_ptr<Connection>> idle;
  std::mutex session_mu;
  std::map<std::string, util::SslSessionPtr> sessions;  // the last TLS session per endpoint

  // OpenSSL hands each new session (TLS 1.3: each ticket) here; the next connection to the same
  // endpoint resumes it instead of a full handshake.
  static int NewSession(SSL* ssl, SSL_SESSION* session) {
    auto* impl = static_cast<Impl*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    const auto* key = static_cast<const std::string*>(SSL_get_app_data(ssl));
    if (impl == nullptr || key == nullptr) return 0;
    std::lock_guard lock(impl->session_mu);
    impl->sessions[*key].reset(session);
    return 1;  // we own it now
  }

  util::SslSessionPtr Session(const std::string& key) {
    std::lock_guard lock(session_mu);
    auto it = sessions.find(key);
    if (it == sessions.end() || !it->second) return nullptr;
    SSL_SESSION_up_ref(it->second.get());
    return util::SslSessionPtr(it->second.get());
  }

  // A pooled connection to the endpoint that is still usable, or null.
  std::unique_ptr<Connection> Acquire(const std::string& key) {
    for (;;) {
      std::unique_ptr<Connection> c;
      {
        std::lock_guard lock(pool_mu);
        for (auto it = idle.rbegin(); it != idle.rend(); ++it) {
          if ((*it)->key == key) {
            c = std::move(*it);
            idle.erase(std::next(it).base());
            break;
          }
        }
      }
      if (!c) return nullptr;
      if (Alive(*c)) return c;
    }
  }

  // An idle connection is usable if it is young enough and has nothing to read: a readable idle
  // socket means the server closed it (EOF, a TLS close_notify) or sent something unasked. TLS
  // records that carry no data (a TLS 1.3 session ticket) are consumed here.
  static bool Alive(Connection& c) {
    if (Clock::now() - c.idle_since > kIdleConnectionTimeout) return false;
    // Records OpenSSL read ahead of the last answer are looked at like bytes in the socket.
    if (!c.ssl || !SSL_has_pending(c.ssl.get())) {
      pollfd p{c.fd, POLLIN, 0};
      const int n = ::poll(&p, 1, 0);
      if (n == 0) return true;
      if (n < 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 || !c.ssl) return false;
    }
    char byte = 0;
    ERR_clear_error();
    const int r = SSL_read(c.ssl.get(), &byte, 1);
    if (r > 0) return false;
    return SSL_get_error(c.ssl.get(), r) == SSL_ERROR_WANT_READ;
  }

  void Release(std::unique_ptr<Connection> c) {
    c->idle_since = Clock::now();
    c->reused = true;
    c->in.clear();
    c->pos = 0;
    std::lock_guard lock(pool_mu);
    if (idle.size() >= kMaxIdleConnections) idle.erase(idle.begin());  // the oldest
    idle.push_back(std::move(c));
  }

  // A new connection to the target (through its proxy if one applies), TLS established.
  std::optional<Failure> Dial(const Endpoint& target, Limits& limits,
                              std::unique_ptr<Connection>* out) {
    const Proxy* proxy = proxies.For(target);
    if (proxy != nullptr && !proxy->error.empty()) {
      Failure f;
      f.what = proxy->error;
      return f;
    }
    const Endpoint& hop = proxy != nullptr ? proxy->endpoint : target;
    limits.connecting = true;
    limits.connect_deadline = limits.connect_timeout.count() > 0
                                  ? Clock::now() + limits.connect_timeout
                                  : TimePoint::max();
    auto c = std::make_unique<Connection>();
    c->key = target.key;
    // The lookup counts against the connect timeout and ends on a stop request, as net/http's
    // dialer bounds it by the dial's deadline and context (pkg/client/host_lookup.h).
    auto dns_failure = [&](const std::string& why) {
      Failure f;
      f.cause = TransportCause::kDNS;
      f.what = std::string("could not resolve ") + (proxy != nullptr ? "proxy " : "host ") +
               hop.host + ": " + why;
      return f;
    };
    Result<HostLookup> lookup = HostLookup::Start(hop.host, hop.port);
    if (!lookup.ok()) return dns_failure(lookup.error().message);
    if (const auto w = limits.WaitFor(lookup->ready_fd(), POLLIN); w != Limits::Wait::kReady) {
      Failure f = FromWait(w, limits, 0);
      if (w == Limits::Wait::kConnectTimedOut) f.what = "resolving " + hop.host + " timed out";
      return f;
    }
    Result<AddrInfoList> addrs = lookup->Take();
    if (!addrs.ok()) return dns_failure(addrs.error().message);
    addrinfo* res = addrs->get();
    int last_errno = 0;
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        last_errno = errno;
        continue;
      }
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepAliveIdleSeconds, sizeof(int));
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepAliveIntervalSeconds, sizeof(int));
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof(int));
      c->fd = fd;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
      if (errno != EINPROGRESS) {
        last_errno = errno;
        ::close(fd);
        c->fd = -1;
        continue;
      }
      if (const auto w = limits.WaitFor(fd, POLLOUT); w != Limits::Wait::kReady) {
        return FromWait(w, limits, 0);
      }
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) break;
      last_errno = err;
      ::close(fd);
      c->fd = -1;
    }
    if (c->fd < 0) {
      Failure f;
      f.cause = TransportCause::kConnectionRefused;
      f.what = "failed to connect to " + hop.host + " port " + hop.port + ": " +
               std::strerror(last_errno);
      return f;
    }
    // Connected: the socket turns blocking, every I/O call but a RoundTrip's wait for its answer
    // says MSG_DONTWAIT, and that wait blocks for at most the receive timeout (Fill).
    ::fcntl(c->fd, F_SETFL, 0);
    const timeval receive_timeout{0, kBlockingReadMs * 1000};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof receive_timeout);
    if (proxy != nullptr && target.tls) {
      if (auto f = Tunnel(*c, target, *proxy, limits)) return f;
    }
    if (target.tls) {
      if (auto f = Handshake(*c, target, limits)) return f;
    }
    limits.connecting = false;
    *out = std::move(c);
    return std::nullopt;
  }

  // HTTP CONNECT through the proxy to the target (net/http's Transport.dialConn for an https
  // target behind an http proxy).
  static std::optional<Failure> Tunnel(Connection& c, const Endpoint& target, const Proxy& proxy,
                                       Limits& limits) {
    std::string req =
        "CONNECT " + target.authority + " HTTP/1.1\r\nHost: " + target.authority + "\r\n";
    if (!proxy.authorization.empty()) {
      req += "Proxy-Authorization: " + proxy.authorization + "\r\n";
    }
    req += "\r\n";
    std::uint64_t n = 0;
    if (auto f = WriteAll(c, req, limits, &n)) return f;
    for (;;) {
      const auto end = c.in.view().find("\r\n\r\n");
      if (end != std::string::npos) {
        Head head;
        if (!ParseHead(c.in.view().substr(0, end + 2), &head)) {
          Failure f;
          f.what = "malformed answer of the proxy to CONNECT";
          return f;
        }
        if (head.status / 100 != 2) {
          Failure f;
          f.what = "CONNECT tunnel failed, response " + std::to_string(head.status);
          return f;
        }
        c.in.clear();
        c.pos = 0;
        return std::nullopt;
      }
      Io io = Io::kOk;
      if (auto f = Fill(c, limits, true, &io, &n)) return f;
      if (io == Io::kEof || c.in.size() > kMaxHeadBytes) {
        Failure f;
        f.cause = TransportCause::kConnectionReset;
        f.what = "proxy closed the connection during CONNECT";
        return f;
      }
    }
  }

  std::optional<Failure> Handshake(Connection& c, const Endpoint& target, Limits& limits) {
    c.ssl.reset(SSL_new(ctx.get()));
    SSL* ssl = c.ssl.get();
    BIO* bio = BIO_new(SocketBioMethod());
    if (ssl == nullptr || bio == nullptr) {
      BIO_free(bio);
      Failure f;
      f.cause = TransportCause::kTLS;
      f.what = "TLS setup: " + OpenSslError();
      return f;
    }
    c.bio_target = {c.fd, &c.socket_drained, &c.blocking_read};
    BIO_set_data(bio, &c.bio_target);
    BIO_set_init(bio, 1);
    SSL_set_bio(ssl, bio, bio);  // one reference, owned by ssl
    SSL_set_app_data(ssl, &c.key);
    if (target.ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target.host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, target.host.c_str());
      SSL_set1_host(ssl, target.host.c_str());
    }
    if (util::SslSessionPtr session = Session(c.key)) SSL_set_session(ssl, session.get());
    for (;;) {
      ERR_clear_error();
      const int r = SSL_connect(ssl);
      if (r == 1) return std::nullopt;
      const int err = SSL_get_error(ssl, r);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        if (const auto w = limits.WaitFor(c.fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT);
            w != Limits::Wait::kReady) {
          return FromWait(w, limits, 0);
        }
        continue;
      }
      Failure f;
      f.cause = TransportCause::kTLS;
      const long verify = SSL_get_verify_result(ssl);
      f.what = verify != X509_V_OK
                   ? std::string("TLS: certificate verify failed: ") +
                         X509_verify_cert_error_string(verify)
                   : "TLS handshake: " +
                         (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0
                              ? std::string(errno != 0 ? std::strerror(errno) : "connection closed")
                              : OpenSslError());
      return f;
    }
  }

  // The request's head (and its body when small), for the target (origin form) or, through an
  // http proxy to an http target, in absolute form.
  std::string RequestHead(const HttpRequest& req, const ParsedUrl& url, bool gzip,
                          bool* body_inline) const {
    const Proxy* proxy = url.endpoint.tls ? nullptr : proxies.For(url.endpoint);
    std::string out;
    out.reserve(256 + req.url.size() + (req.body.size() <= kInlineBodyBytes ? req.body.size() : 0));
    out.append(req.method).append(" ");
    out.append(proxy != nullptr ? req.url : url.target);
    out.append(" HTTP/1.1\r\nHost: ").append(url.endpoint.authority).append("\r\n");
    if (proxy != nullptr && !proxy->authorization.empty()) {
      out.append("Proxy-Authorization: ").append(proxy->authorization).append("\r\n");
    }
    bool has_encoding = false;
    for (const auto& [name, value] : req.headers) {
      out.append(name).append(": ").append(value).append("\r\n");
      has_encoding = has_encoding || EqualsNoCase(name, "Accept-Encoding");
    }
    if (gzip && !has_encoding) out.append("Accept-Encoding: gzip\r\n");
    if (SendsBody(req)) {
      out.append("Content-Length: ").append(std::to_string(req.body.size())).append("\r\n");
    }
    out.append("\r\n");
    *body_inline = req.body.size() <= kInlineBodyBytes;
    if (*body_inline) out.append(req.body);
    return out;
  }
};

namespace {

// One request's exchange on one connection: send, read the head, then the body piece by piece.
// Shared by RoundTrip and HttpStream.
struct Exchange {
  std::shared_ptr<Transport::Impl> impl;
  const HttpRequest* request = nullptr;
  ParsedUrl url;
  bool gzip = false;
  Limits limits;
  std::unique_ptr<Connection> conn;
  Head head;
  BodyReader body;
  Inflater inflater;
  std::uint64_t received = 0;

  Error ToError(Failure f) const {
    if (f.error) return *f.error;
    if (f.canceled) return Error::Local(errors::reason::kCanceled, "request canceled");
    return Error::Transport(f.cause, request->method + " " + request->url + ": " + f.what);
  }

  // Sends the request and reads the answer's head. Like net/http's Transport (and libcurl), a
  // request that finds its reused keep-alive connection closed before any answer byte is sent
  // once more on a new connection — when nothing of it had been written, or it is replayable.
  std::optional<Failure> Start() {
    for (int attempt = 0;; ++attempt) {
      conn = attempt == 0 ? impl->Acquire(url.endpoint.key) : nullptr;
      if (!conn) {
        if (auto f = impl->Dial(url.endpoint, limits, &conn)) return f;
      }
      std::uint64_t written = 0;
      auto f = Send(&written);
      if (!f) f = ReadHead();
      if (!f) return std::nullopt;
      const bool resend = conn->reused && f->closed_before_answer && received == 0 &&
                          (written == 0 || IsReplayable(*request)) && attempt == 0;
      conn.reset();
      if (!resend) return f;
    }
  }

  std::optional<Failure> Send(std::uint64_t* written) {
    bool body_inline = false;
    const std::string head_text = impl->RequestHead(*request, url, gzip, &body_inline);
    if (auto f = WriteAll(*conn, head_text, limits, written)) return f;
    if (!body_inline) {
      if (auto f = WriteAll(*conn, request->body, limits, written)) return f;
    }
    // The answer is not there yet right after the request went out: the first read of it waits
    // for the socket first rather than find nothing (Connection::socket_drained).
    conn->socket_drained = true;
    return std::nullopt;
  }

  std::optional<Failure> ReadHead() {
    for (;;) {
      const auto end = conn->in.view().find("\r\n\r\n", conn->pos);
      if (end != std::string::npos) {
        head = Head{};
        if (!ParseHead(conn->in.view().substr(conn->pos, end + 2 - conn->pos), &head)) {
          Failure f;
          f.what = "malformed answer head";
          return f;
        }
        conn->pos = end + 4;
        if (head.status >= 100 && head.status < 200 && head.status != 101) continue;  // interim
        head.no_body = head.status == 204 || head.status == 304;
        body.Reset(head, request->method == "HEAD");
        if (head.gzip) inflater.Start();
        return std::nullopt;
      }
      if (conn->available() > kMaxHeadBytes) {
        Failure f;
        f.what = "answer head over " + std::to_string(kMaxHeadBytes) + " bytes";
        return f;
      }
      Io io = Io::kOk;
      if (auto f = Fill(*conn, limits, true, &io, &received)) {
        if (received > 0) f->closed_before_answer = false;
        return f;
      }
      if (io == Io::kEof) {
        Failure f;
        f.cause = TransportCause::kConnectionReset;
        f.what = received == 0 ? "empty reply from server"
                               : "connection closed in the middle of the answer head";
        f.closed_before_answer = received == 0;
        return f;
      }
    }
  }

  // Appends the next decoded body bytes to *out; *end at the end of the body.
  std::optional<Failure> NextBody(bool wait, std::string* out, bool* end, std::size_t limit = 0) {
    std::string_view piece;
    if (auto f = body.Next(*conn, limits, wait, &piece, &received)) return f;
    *end = body.done();
    if (head.gzip) return inflater.Feed(piece, out, limit);
    out->append(piece);
    return std::nullopt;
  }

  // After a complete body: back to the pool unless the server closes it.
  void Finish() {
    if (!head.close && body.done() && !body.until_close() && conn->available() == 0) {
      impl->Release(std::move(conn));
    }
    conn.reset();
  }
};

void InitLimits(Limits& l, const HttpRequest& req) {
  const TimePoint now = Clock::now();
  if (req.timeout.count() > 0) l.deadline = now + req.timeout;
  l.connect_timeout = req.connect_timeout;
  l.stall = req.stall_timeout;
  l.stall_rate = std::max(1L, req.stall_bytes_per_second);
  l.window_start = now;
}

}  // namespace

Result<std::shared_ptr<Transport>> Transport::Create(const RestConfig& config) {
  auto impl = std::make_shared<Impl>();
  impl->config = config;
  auto ctx = MakeTlsContext(config);
  if (!ctx.ok()) return ctx.error();
  impl->ctx = std::move(*ctx);
  SSL_CTX_set_app_data(impl->ctx.get(), impl.get());
  SSL_CTX_set_session_cache_mode(impl->ctx.get(),
                                 SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(impl->ctx.get(), &Impl::NewSession);
  // Read once, as net/http's ProxyFromEnvironment does.
  impl->proxies = ProxySettings::FromEnvironment();
  return std::make_shared<Transport>(Private{}, std::move(impl));
}

Transport::Transport(Private, std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

Result<HttpResponse> Transport::RoundTrip(const HttpRequest& request, std::stop_token stop) {
  Exchange x;
  x.impl = impl_;
  x.request = &request;
  auto url = ParseUrl(request.url);
  if (!url) {
    return Error::Transport(TransportCause::kOther,
                            request.method + " " + request.url + ": unsupported URL");
  }
  x.url = std::move(*url);
  x.gzip = !impl_->config.disable_compression;
  InitLimits(x.limits, request);
  x.limits.stop = std::move(stop);
  if (auto f = x.Start()) return x.ToError(std::move(*f));
  HttpResponse resp;
  resp.status = x.head.status;
  const bool streamed = request.body_sink != nullptr && x.head.status >= 200 && x.head.status < 300;
  if (streamed) {
    request.body_sink->Begin(x.head.content_type);
  } else if (x.head.length > 0 && !x.head.gzip &&
             (request.max_body_bytes == 0 ||
              static_cast<std::uint64_t>(x.head.length) <= request.max_body_bytes)) {
    resp.body.reserve(static_cast<std::size_t>(x.head.length) + kJsonPadding);
  }
  if (streamed && !x.head.gzip) {
    // Straight from the connection's buffer to the sink, no copy.
    while (!x.body.done()) {
      std::string_view piece;
      if (auto f = x.body.Next(*x.conn, x.limits, true, &piece, &x.received)) {
        return x.ToError(std::move(*f));
      }
      if (piece.empty()) continue;
      if (Status s = request.body_sink->Write(piece); !s.ok()) return s.error();
    }
  }
  std::string chunk;
  for (bool end = x.body.done(); !end;) {
    std::string* out = streamed ? &chunk : &resp.body;
    chunk.clear();
    if (auto f = x.NextBody(true, out, &end, streamed ? 0 : request.max_body_bytes)) {
      return x.ToError(std::move(*f));
    }
    if (streamed) {
      if (chunk.empty()) continue;
      if (Status s = request.body_sink->Write(chunk); !s.ok()) return s.error();
    } else if (request.max_body_bytes > 0 && resp.body.size() > request.max_body_bytes) {
      return Error::Transport(TransportCause::kTooLarge,
                              request.method + " " + request.url + ": response body over " +
                                  std::to_string(request.max_body_bytes) + " bytes");
    }
  }
  x.Finish();
  EnsurePadding(resp.body);
  resp.retry_after = std::move(x.head.retry_after);
  resp.content_type = std::move(x.head.content_type);
  return resp;
}

// --- streaming -------------------------------------------------------------------------------

struct HttpStream::State {
  HttpRequest request;
  std::string body;  // request.body's bytes
  Exchange x;
  int cancel_fd = -1;
  std::atomic<bool> canceled{false};
  std::atomic<int> status{0};
  std::optional<Error> setup_error;
  std::optional<Error> pending_error;
  bool started = false;
  bool done = false;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    x.conn.reset();
    if (cancel_fd >= 0) ::close(cancel_fd);
  }
};

std::unique_ptr<HttpStream> Transport::Stream(const HttpRequest& request) {
  auto s = std::make_unique<HttpStream::State>();
  s->request = request;
  s->body = std::string(request.body);
  s->request.body = s->body;
  s->x.impl = impl_;
  s->x.request = &s->request;
  if (auto url = ParseUrl(request.url)) {
    s->x.url = std::move(*url);
  } else {
    s->setup_error = Error::Transport(TransportCause::kOther,
                                      request.method + " " + request.url + ": unsupported URL");
  }
  // No gzip for streams, as client-go's watch requests get none from the API server either
  // (watch responses are not compressed); a gzip answer would still be inflated.
  s->x.gzip = false;
  s->cancel_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  s->x.limits.cancel_fd = s->cancel_fd;
  s->x.limits.canceled = &s->canceled;
  return std::make_unique<HttpStream>(HttpStream::Private{}, std::move(s));
}

HttpStream::HttpStream(Private, std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpStream::~HttpStream() = default;

Result<size_t> HttpStream::Read(std::string* out) {
  State& s = *state_;
  if (s.setup_error) return *s.setup_error;
  if (s.canceled.load()) return size_t{0};
  if (s.pending_error) {
    Error e = std::move(*s.pending_error);
    s.pending_error.reset();
    return e;
  }
  if (s.done) return size_t{0};
  if (!s.started) {
    s.started = true;
    InitLimits(s.x.limits, s.request);
    if (auto f = s.x.Start()) {
      s.done = true;
      if (f->canceled) return size_t{0};
      return s.x.ToError(std::move(*f));
    }
    s.status.store(s.x.head.status);
  }
  const std::size_t before = out->size();
  // Wait for the first bytes, then take what else is already there without waiting.
  for (;;) {
    const std::size_t mark = out->size();
    bool end = false;
    if (auto f = s.x.NextBody(out->size() == before, out, &end)) {
      s.done = true;
      if (f->canceled) return size_t{0};
      Error e = s.x.ToError(std::move(*f));
      if (out->size() == before) return e;
      s.pending_error = std::move(e);  // after the bytes that came before it
      return out->size() - before;
    }
    if (end) {
      s.done = true;
      s.x.Finish();
      return out->size() - before;
    }
    if (out->size() > before && out->size() == mark) return out->size() - before;
  }
}

int HttpStream::status() const {
  return state_->status.load();
}

std::string HttpStream::retry_after() const {
  return state_->x.head.retry_after;
}

std::string HttpStream::content_type() const {
  return state_->x.head.content_type;
}

void HttpStream::Cancel() {
  state_->canceled.store(true);
  if (state_->cancel_fd >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(state_->cancel_fd, &one, sizeof one);
  }
}

bool HttpStream::canceled() const {
  return state_->canceled.load();
}

}  // namespace kcm::client
