#include "test/e2e/daemon/scripted_api_server.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>

#include "pkg/api/json.h"

namespace kcm::e2e {
namespace {

using testing::Conn;
using testing::RecordedRequest;

using namespace std::string_view_literals;

// A peer's bytes are written until the client gives up (WriteAll fails), the server stops, or
// this many, so that no answer runs without end if the daemon never stopped reading.
constexpr std::size_t kMaxEndlessBytes = std::size_t{2} << 30;

const std::string kJson = "application/json";

// The cluster the benign answers describe, in namespace "default": ReplicaSet "grow" wants one
// pod and has none (a create), "shrink" wants none and has one (a delete), "settle" has a spec
// its status has not observed (a status update); the first two have a status that stays up to
// date while their writes succeed (the watches stay silent), so only "settle" updates it.
std::string ReplicaSet(std::string_view name, int replicas, int generation, int status_replicas) {
  const std::string n(name);
  return R"({"metadata":{"name":")" + n + R"(","namespace":"default","uid":"rs-uid-)" + n +
         R"(","resourceVersion":"60","generation":)" + std::to_string(generation) +
         R"(,"creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"replicas":)" +
         std::to_string(replicas) + R"(,"selector":{"matchLabels":{"app":")" + n +
         R"("}},"template":{"metadata":{"labels":{"app":")" + n +
         R"("}},"spec":{"containers":[{"name":"c","image":"pause"}]}}},"status":{"replicas":)" +
         std::to_string(status_replicas) + R"(,"fullyLabeledReplicas":)" +
         std::to_string(status_replicas) + R"(,"terminatingReplicas":0,"observedGeneration":1}})";
}

const std::map<std::string, std::string, std::less<>>& ReplicaSets() {
  static const std::map<std::string, std::string, std::less<>> objects = {
      {"grow", ReplicaSet("grow", 1, 1, 0)},
      {"shrink", ReplicaSet("shrink", 0, 1, 1)},
      {"settle", ReplicaSet("settle", 0, 2, 0)}};
  return objects;
}

std::string ReplicaSetList() {
  std::string items;
  for (const auto& [name, object] : ReplicaSets()) items += (items.empty() ? "" : ",") + object;
  return R"({"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"100"},"items":[)" +
         items + "]}";
}

std::string PodList() {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[)"
         R"({"metadata":{"name":"shrink-a","namespace":"default","uid":"pod-uid-a","resourceVersion":"50",)"
         R"("labels":{"app":"shrink"},"creationTimestamp":"2026-01-01T00:00:00Z","ownerReferences":[)"
         R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":"shrink","uid":"rs-uid-shrink",)"
         R"("controller":true,"blockOwnerDeletion":true}]},"spec":{"nodeName":"n1","containers":)"
         R"([{"name":"c","image":"pause"}]},"status":{"phase":"Running"}}]})";
}

// A Status answer; `message` is escaped as JSON the way the daemon's own writer escapes strings.
std::string Status(int code, std::string_view reason, std::string_view message) {
  std::string out =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)";
  api::json::AppendQuoted(message, &out);
  out += R"(,"reason":")" + std::string(reason) + R"(","code":)" + std::to_string(code) + "}";
  return out;
}

bool IsWatch(const RecordedRequest& r) {
  return r.query.find("watch=true") != std::string::npos ||
         r.query.find("watch=1") != std::string::npos;
}

bool AsksProtobuf(const RecordedRequest& r) {
  return r.Header("accept").find("protobuf") != std::string::npos;
}

// A path of the form prefix + one or more segments + suffix, e.g. "/api/v1/namespaces/" "x"
// "/pods".
bool Matches(std::string_view path, std::string_view prefix, std::string_view suffix) {
  return path.size() > prefix.size() + suffix.size() && path.starts_with(prefix) &&
         path.ends_with(suffix);
}

// Writes `head` and then `fill` over and over (chunked when `chunked`) until the client stops
// reading.
void Endless(Conn& c, const std::string& head, std::string_view first, bool chunked) {
  if (!c.WriteAll(head)) return;
  const std::string fill(64 << 10, 'a');
  auto write = [&](std::string_view data) {
    if (!chunked) return c.WriteAll(data);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return c.WriteAll(std::string(size) + std::string(data) + "\r\n");
  };
  if (!first.empty() && !write(first)) return;
  for (std::size_t sent = 0; sent < kMaxEndlessBytes && write(fill); sent += fill.size()) {
  }
}

const std::string& GzipBomb() {
  static const std::string bomb = testing::GzipBomb(std::size_t{256} << 20);
  return bomb;
}

}  // namespace

const std::string_view kForgedLogText =
    "oops\nE1206 00:00:00.000000 1 forged.go:1] FORGED-LINE\0\x1b[31m red\r\n"
    "W1206 00:00:00.000000 1 forged.go:2] FORGED-TWO\xe2\x80\xa8\xc2\x85\xff"sv;
const std::string_view kForgedLinePrefix = "forged.go:"sv;

std::string_view Name(Call call) {
  switch (call) {
    case Call::kHealthz:
      return "Healthz";
    case Call::kListPods:
      return "ListPods";
    case Call::kListReplicaSets:
      return "ListReplicaSets";
    case Call::kWatchPods:
      return "WatchPods";
    case Call::kWatchReplicaSets:
      return "WatchReplicaSets";
    case Call::kCreatePod:
      return "CreatePod";
    case Call::kUpdateReplicaSetStatus:
      return "UpdateReplicaSetStatus";
    case Call::kDeletePod:
      return "DeletePod";
    case Call::kTokenReview:
      return "TokenReview";
    case Call::kSubjectAccessReview:
      return "SubjectAccessReview";
    case Call::kLease:
      return "Lease";
  }
  return "?";
}

std::string_view Name(Attack attack) {
  switch (attack) {
    case Attack::kEndlessBody:
      return "EndlessBody";
    case Attack::kEndlessErrorBody:
      return "EndlessErrorBody";
    case Attack::kGzipBomb:
      return "GzipBomb";
    case Attack::kEndlessInterim:
      return "EndlessInterim";
    case Attack::kBadContentLength:
      return "BadContentLength";
    case Attack::kNegativeContentLength:
      return "NegativeContentLength";
    case Attack::kHugeContentLength:
      return "HugeContentLength";
    case Attack::kEndlessHead:
      return "EndlessHead";
    case Attack::kEndlessFrame:
      return "EndlessFrame";
    case Attack::kForgedText:
      return "ForgedText";
    case Attack::kForgedStatus:
      return "ForgedStatus";
  }
  return "?";
}

std::optional<Call> Classify(const RecordedRequest& r) {
  const std::string_view path = r.path;
  if (r.method == "GET" && path == "/healthz") return Call::kHealthz;
  if (r.method == "GET" && path == "/api/v1/pods") {
    return IsWatch(r) ? Call::kWatchPods : Call::kListPods;
  }
  if (r.method == "GET" && path == "/apis/apps/v1/replicasets") {
    return IsWatch(r) ? Call::kWatchReplicaSets : Call::kListReplicaSets;
  }
  if (r.method == "POST" && Matches(path, "/api/v1/namespaces/", "/pods")) return Call::kCreatePod;
  if (r.method == "DELETE" && Matches(path, "/api/v1/namespaces/", "") &&
      path.find("/pods/") != std::string_view::npos) {
    return Call::kDeletePod;
  }
  if (r.method == "PUT" && Matches(path, "/apis/apps/v1/namespaces/", "/status") &&
      path.find("/replicasets/") != std::string_view::npos) {
    return Call::kUpdateReplicaSetStatus;
  }
  if (r.method == "POST" && path == "/apis/authentication.k8s.io/v1/tokenreviews") {
    return Call::kTokenReview;
  }
  if (r.method == "POST" && path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
    return Call::kSubjectAccessReview;
  }
  if (path.starts_with("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")) {
    return Call::kLease;
  }
  return std::nullopt;
}

ScriptedApiServer::ScriptedApiServer(Call attacked, Attack attack)
    : attacked_(attacked),
      attack_(attack),
      server_([this](const RecordedRequest& r, Conn& c) { Serve(r, c); }) {
  if (attack_ == Attack::kGzipBomb) GzipBomb();  // made before the first request waits on it
}

std::size_t ScriptedApiServer::attacked_requests() const {
  const auto requests = server_.requests();
  return static_cast<std::size_t>(std::count_if(requests.begin(), requests.end(),
                                                [&](auto& r) { return Classify(r) == attacked_; }));
}

std::string ScriptedApiServer::Requests() const {
  std::string out;
  for (const auto& r : server_.requests()) out += r.method + " " + r.target + "\n";
  return out;
}

void ScriptedApiServer::Serve(const RecordedRequest& r, Conn& c) const {
  const std::optional<Call> call = Classify(r);
  if (call == attacked_) {
    Hostile(r, c);
  } else if (call) {
    Benign(r, *call, c);
  } else if (r.method == "GET" && r.path == "/apis/apps/v1/deployments") {
    if (IsWatch(r)) {
      c.StartChunked(200, {{"Content-Type", kJson}});
      c.HoldOpen();
    } else {
      c.Respond(200, R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":)"
                     R"({"resourceVersion":"100"},"items":[]})");
    }
  } else if (r.method == "GET" &&
             Matches(r.path, "/apis/apps/v1/namespaces/default/replicasets/", "")) {
    // What the ReplicaSet controller reads again before it retries a status update.
    const auto it = ReplicaSets().find(std::string_view(r.path).substr(r.path.rfind('/') + 1));
    if (it != ReplicaSets().end()) {
      c.Respond(200, it->second);
    } else {
      c.Respond(404, Status(404, "NotFound", "replicasets not found"));
    }
  } else if (r.method == "POST" && r.path.ends_with("/events")) {
    c.Respond(201, r.body);
  } else {
    c.Respond(404, Status(404, "NotFound", "the server could not find the requested resource"));
  }
}

void ScriptedApiServer::Benign(const RecordedRequest& r, Call call, Conn& c) const {
  switch (call) {
    case Call::kHealthz:
      c.Respond(200, "ok", {{"Content-Type", "text/plain"}});
      return;
    case Call::kListPods:
      c.Respond(200, PodList());
      return;
    case Call::kListReplicaSets:
      c.Respond(200, ReplicaSetList());
      return;
    case Call::kWatchPods:
    case Call::kWatchReplicaSets:
      c.StartChunked(200, {{"Content-Type", kJson}});
      c.HoldOpen();
      return;
    case Call::kCreatePod:
      c.Respond(201, r.body);
      return;
    case Call::kUpdateReplicaSetStatus:
      c.Respond(200, r.body);
      return;
    case Call::kDeletePod:
      c.Respond(200, R"({"kind":"Status","apiVersion":"v1","status":"Success"})");
      return;
    case Call::kTokenReview:
      c.Respond(201, R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",)"
                     R"("status":{"authenticated":true,"user":{"username":"admin",)"
                     R"("groups":["system:masters"]}}})");
      return;
    case Call::kSubjectAccessReview:
      c.Respond(201, R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",)"
                     R"("status":{"allowed":true}})");
      return;
    case Call::kLease:
      c.Respond(404, Status(404, "NotFound", "leases not served"));
      return;
  }
}

void ScriptedApiServer::Hostile(const RecordedRequest& r, Conn& c) const {
  const std::string ok_head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  switch (attack_) {
    case Attack::kEndlessBody:
      Endless(c, ok_head, "", /*chunked=*/true);
      return;
    case Attack::kEndlessErrorBody:
      Endless(c,
              "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
              "Transfer-Encoding: chunked\r\n\r\n",
              "", /*chunked=*/true);
      return;
    case Attack::kGzipBomb:
      c.Respond(200, GzipBomb(), {{"Content-Encoding", "gzip"}});
      return;
    case Attack::kEndlessInterim:
      for (int i = 0; i < 1000000 && c.WriteAll("HTTP/1.1 100 Continue\r\n\r\n"); ++i) {
      }
      return;
    case Attack::kBadContentLength:
      c.WriteAll(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12abc\r\n\r\n{}");
      c.HoldOpen();
      return;
    case Attack::kNegativeContentLength:
      c.WriteAll(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}");
      c.HoldOpen();
      return;
    case Attack::kHugeContentLength:
      c.WriteAll(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
          "1099511627776\r\n\r\n{");
      c.HoldOpen();
      return;
    case Attack::kEndlessHead: {
      if (!c.WriteAll("HTTP/1.1 200 OK\r\n")) return;
      const std::string line = "X-Filler: " + std::string(4000, 'a') + "\r\n";
      for (int i = 0; i < 100000 && c.WriteAll(line); ++i) {
      }
      return;
    }
    case Attack::kEndlessFrame:
      if (attacked_ == Call::kWatchPods && AsksProtobuf(r)) {
        // A length-delimited frame announcing 2 GiB - 1 bytes, then bytes without end.
        Endless(c,
                "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.kubernetes.protobuf;"
                "stream=watch\r\nTransfer-Encoding: chunked\r\n\r\n",
                "\x7f\xff\xff\xff"sv, /*chunked=*/true);
      } else if (attacked_ == Call::kWatchPods || attacked_ == Call::kWatchReplicaSets) {
        Endless(c, ok_head, R"({"type":"ADDED","object":{"metadata":{"name":")", true);
      } else if (attacked_ == Call::kListPods || attacked_ == Call::kListReplicaSets) {
        Endless(c, ok_head,
                R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},)"
                R"("items":[{"metadata":{"name":")",
                true);
      } else {
        Endless(c, ok_head, R"({"metadata":{"name":")", true);
      }
      return;
    case Attack::kForgedText:
      c.Respond(500, kForgedLogText, {{"Content-Type", "text/plain"}});
      return;
    case Attack::kForgedStatus:
      // JSON cannot carry the text's last byte, which is not UTF-8; the rest it carries escaped,
      // to come out of the Status decoder as the raw characters.
      c.Respond(403, Status(403, "Forbidden", kForgedLogText.substr(0, kForgedLogText.size() - 1)));
      return;
  }
}

}  // namespace kcm::e2e
