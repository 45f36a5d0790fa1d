// ScriptedApiServer: a plain-HTTP "API server" for the daemon binary that answers every call
// validly — a small cluster whose ReplicaSets make the controllers create, delete and update —
// except one kind of call, which meets one hostile answer (a compromised endpoint, a broken
// proxy), scripted at the byte level. The hostile-peer matrix
// (hostile_api_server_e2e_test.cc) serves each Attack on each Call. Thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "test/unit/client/test_server.h"

namespace kcm::e2e {

// Every kind of call the daemon makes to its API server.
enum class Call {
  kHealthz,                 // GET /healthz, the daemon's wait for its API server at start
  kListPods,                // GET /api/v1/pods (protobuf asked for; decoded as it arrives)
  kListReplicaSets,         // GET /apis/apps/v1/replicasets (JSON, decoded as it arrives)
  kWatchPods,               // ?watch=true, protobuf asked for
  kWatchReplicaSets,        // ?watch=true, JSON
  kCreatePod,               // POST .../pods (the ReplicaSet controller's create)
  kUpdateReplicaSetStatus,  // PUT .../replicasets/<name>/status
  kDeletePod,               // DELETE .../pods/<name>
  kTokenReview,             // POST tokenreviews (delegated authentication of /metrics)
  kSubjectAccessReview,     // POST subjectaccessreviews (delegated authorization of /metrics)
  kLease,                   // GET, POST, PUT of the leader election Lease
};

// Every shape of hostile answer.
enum class Attack {
  kEndlessBody,       // 200, chunked, never ends
  kEndlessErrorBody,  // 500, chunked, never ends
  kGzipBomb,          // 200, 256 MiB inflated from 256 kB
  kEndlessInterim,    // 100 Continue without end
  kBadContentLength,  // "Content-Length: 12abc"
  kNegativeContentLength,
  kHugeContentLength,  // 1 TiB announced, a few bytes sent, held open
  kEndlessHead,        // header lines without end
  kEndlessFrame,       // one object (frame, LIST item) that never ends, in the encoding asked for
  kForgedText,         // 500 text/plain whose text forges log lines (newlines, NUL, ESC)
  kForgedStatus,       // 403 Status whose message forges log lines
};

std::string_view Name(Call call);
std::string_view Name(Attack attack);

// The text every forged answer carries, and what no line of the daemon's log may start with.
extern const std::string_view kForgedLogText;
extern const std::string_view kForgedLinePrefix;

// Which call a request is; nullopt for the others (discovery, events, deployments, ...).
std::optional<Call> Classify(const testing::RecordedRequest& request);

class ScriptedApiServer {
 public:
  ScriptedApiServer(Call attacked, Attack attack);

  std::string url() const { return server_.url(); }
  // Requests of the attacked kind received so far.
  std::size_t attacked_requests() const;
  // Every request so far, one "METHOD target" line each (for a failure's message).
  std::string Requests() const;

 private:
  void Serve(const testing::RecordedRequest& request, testing::Conn& conn) const;
  void Benign(const testing::RecordedRequest& request, Call call, testing::Conn& conn) const;
  void Hostile(const testing::RecordedRequest& request, testing::Conn& conn) const;

  Call attacked_;
  Attack attack_;
  testing::TestServer server_;  // last: its threads call Serve
};

}  // namespace kcm::e2e
