#!/usr/bin/env bash
# Differential check of the Deployment controller: runs one kubectl scenario (create, rolling
# update, undo, pause/resume, scale, a rollout that cannot progress) twice on a running testbed —
# once with our kube-controller-manager, once with upstream's (controllers deployment,replicaset)
# — and diffs what users see: Deployment annotations, status and conditions, ReplicaSet
# revisions/annotations/sizes (names normalized to their revision, times dropped) and events.
# Usage: KCM_TESTBED_DIR=/tmp/kcm-dep-tb bench/deployment/differential.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
state=${KCM_TESTBED_DIR:?set KCM_TESTBED_DIR to a running testbed}
source <(grep -E '^KCM_TESTBED_(KUBECTL|BIN_DIR)=' "$state/testbed.env")
out=$(mktemp -d)
k() { "$KCM_TESTBED_KUBECTL" --kubeconfig="$state/admin.kubeconfig" -n "$ns" "$@"; }

dump() {  # dump <stage>: the normalized view of the namespace
  { k get deployment web -o json; echo '@@'; k get rs -o json; } | python3 -c '
import json, re, sys
d, rs = sys.stdin.read().split("@@")
d, rs = json.loads(d), json.loads(rs)["items"]
names = {r["metadata"]["name"]: "RS@rev" + r["metadata"].get("annotations", {}).get("deployment.kubernetes.io/revision", "?") for r in rs}
def norm(s):
    for n, v in names.items(): s = s.replace(n, v)
    return s
ann = {k: v for k, v in d["metadata"].get("annotations", {}).items() if "last-applied" not in k}
st = {k: v for k, v in d["status"].items() if k != "conditions"}
conds = sorted((c["type"], c["status"], c["reason"], norm(c["message"])) for c in d["status"].get("conditions", []))
rsv = sorted((names[r["metadata"]["name"]], {k: v for k, v in r["metadata"].get("annotations", {}).items()}, r["spec"]["replicas"], r["status"].get("replicas", 0)) for r in rs)
print(json.dumps({"stage": sys.argv[1], "annotations": ann, "status": st, "conditions": conds, "replicasets": rsv}, sort_keys=True, indent=1))
' "$1"
}

scenario() {
  k create deployment web --image=img:1 --replicas=4 >/dev/null
  k patch deployment web -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":1}}}}' >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null; dump created
  k set image deployment/web img=img:2 >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null; dump updated
  k rollout undo deployment/web >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null; dump undone
  k rollout pause deployment/web >/dev/null
  k set image deployment/web img=img:3 >/dev/null
  until [ "$(k get deployment web -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}')" = DeploymentPaused ]; do sleep 0.5; done
  dump paused
  k rollout resume deployment/web >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null; dump resumed
  k scale deployment/web --replicas=6 >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null; dump scaled
  k patch deployment web -p '{"spec":{"progressDeadlineSeconds":5,"template":{"spec":{"nodeSelector":{"never":"x"}}}}}' >/dev/null
  k rollout status deployment/web --timeout=120s >/dev/null 2>&1 || true; dump stuck
  k rollout history deployment/web | sed 1d
  k get events -o json | python3 -c '
import json, sys, re
ev = json.load(sys.stdin)["items"]
rows = sorted(set((e["source"].get("component", ""), e["reason"], re.sub(r"web-[a-z0-9]{6,10}", "web-<hash>", e["message"])) for e in ev if e["involvedObject"]["kind"] == "Deployment"))
for r in rows: print(*r, sep=" | ")'
}

run() {  # run <ours|upstream>
  local mode=$1 pid
  ns=diff-$mode-$$
  if [ "$mode" = ours ]; then
    "$build/cmd/kube-controller-manager/kube-controller-manager" --kubeconfig="$state/controller-manager.kubeconfig" \
      --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 >"$out/$mode.log" 2>&1 &
  else
    "$KCM_TESTBED_BIN_DIR/kube-controller-manager" --kubeconfig="$state/admin.kubeconfig" \
      --authentication-kubeconfig="$state/admin.kubeconfig" --authorization-kubeconfig="$state/admin.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port=0 --controllers=deployment,replicaset --leader-elect=false \
      >"$out/$mode.log" 2>&1 &
  fi
  pid=$!
  "$KCM_TESTBED_KUBECTL" --kubeconfig="$state/admin.kubeconfig" create namespace "$ns" >/dev/null
  scenario >"$out/$mode.txt"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  k delete deployment web >/dev/null
}

run ours
run upstream
echo "outputs in $out"
if diff -u "$out/upstream.txt" "$out/ours.txt"; then echo "IDENTICAL"; fi
