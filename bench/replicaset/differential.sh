#!/usr/bin/env bash
# Differential check: the same ReplicaSet scenario driven against our kube-controller-manager and
# against upstream's (each running only the replicaset controller, one after the other on one
# testbed, each in its own namespace); the observable results are normalized (generated pod
# names, timestamps, event counts) and diffed. Exit 0 when they match.
#
# Scenario: create 3 → scale 5 → scale 1 → an unschedulable matching orphan is adopted and
# (being unscheduled) deleted first → an exhausted ResourceQuota during a scale to 5
# (ReplicaFailure FailedCreate, Warning FailedCreate) → the quota raised (condition cleared).
# Recorded after each step: the RS status (replicas, fullyLabeled, ready, available,
# observedGeneration, conditions without times); at the end: the set of event type/reason/message
# on the RS and the pods' ownerReferences.
#
# Usage: bench/replicaset/differential.sh [build-dir]   (KCM_TESTBED_DIR as in scale_bench.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-rs-diff}
ours="$build/cmd/kube-controller-manager/kube-controller-manager"
[ -x "$ours" ] || { echo "build $ours first" >&2; exit 1; }
started=0
if [ ! -f "$dir/testbed.env" ] || ! KCM_TESTBED_DIR=$dir hack/testbed status >/dev/null 2>&1; then
  KCM_TESTBED_DIR=$dir hack/testbed up >/dev/null
  started=1
fi
# shellcheck disable=SC1091
source "$dir/testbed.env"
K="$KCM_TESTBED_KUBECTL --kubeconfig=$KCM_TESTBED_ADMIN_KUBECONFIG"
out=$(mktemp -d)
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
norm() { sed -E 's/web-[a-z0-9]{5}/web-XXXXX/g; s/"lastTransitionTime":"[^"]*",?//g'; }

# wait_for <ns> <jsonpath> <value>
wait_for() {
  for _ in $(seq 1200); do
    [ "$($K -n "$1" get rs web -o "jsonpath=$2" 2>/dev/null)" = "$3" ] && return 0
    sleep 0.25
  done
  echo "timed out waiting for $2 = $3 in $1" >&2
  return 1
}
status() {
  $K -n "$1" get rs web -o jsonpath='{.status}' | norm
  echo
}
ready_at() {  # <ns> <n>: status settled at n ready and available
  wait_for "$1" '{.status.replicas}' "$2"
  wait_for "$1" '{.status.readyReplicas}' "$2"
  wait_for "$1" '{.status.availableReplicas}' "$2"
  wait_for "$1" '{.status.observedGeneration}' "$($K -n "$1" get rs web -o 'jsonpath={.metadata.generation}')"
}

scenario() {
  local ns=$1
  $K -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: front}, annotations: {keep: me}}
    spec: {containers: [{name: c, image: fake}]}
YAML
  ready_at "$ns" 3; echo "after create 3: $(status "$ns")"
  $K -n "$ns" scale rs web --replicas=5 >/dev/null; ready_at "$ns" 5
  echo "after scale 5: $(status "$ns")"
  $K -n "$ns" scale rs web --replicas=1 >/dev/null; ready_at "$ns" 1
  echo "after scale 1: $(status "$ns")"
  $K -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: orphan, labels: {app: web}}
spec: {nodeSelector: {no-such: node}, containers: [{name: c, image: fake}]}
YAML
  for _ in $(seq 400); do
    $K -n "$ns" get pod orphan >/dev/null 2>&1 || break
    [ -n "$($K -n "$ns" get pod orphan -o jsonpath='{.metadata.deletionTimestamp}')" ] && break
    sleep 0.25
  done
  ready_at "$ns" 1; echo "after orphan: $(status "$ns")"
  local used; used=$($K -n "$ns" get pods --no-headers | wc -l)
  $K -n "$ns" create quota q --hard=pods=$((used + 1)) >/dev/null
  $K -n "$ns" patch quota q --subresource=status --type=merge \
    -p "{\"status\":{\"hard\":{\"pods\":\"$((used + 1))\"},\"used\":{\"pods\":\"$used\"}}}" >/dev/null
  $K -n "$ns" scale rs web --replicas=5 >/dev/null
  wait_for "$ns" '{.status.conditions[0].reason}' FailedCreate
  wait_for "$ns" '{.status.replicas}' 2
  wait_for "$ns" '{.status.readyReplicas}' 2
  wait_for "$ns" '{.status.availableReplicas}' 2
  echo "quota exhausted: $(status "$ns")"
  $K -n "$ns" patch quota q --type=merge -p '{"spec":{"hard":{"pods":"100"}}}' >/dev/null
  $K -n "$ns" patch quota q --subresource=status --type=merge \
    -p '{"status":{"hard":{"pods":"100"}}}' >/dev/null
  ready_at "$ns" 5
  wait_for "$ns" '{.status.conditions}' ''
  echo "quota raised: $(status "$ns")"
  sleep 2  # let the event recorders flush
  echo "events:"
  $K -n "$ns" get events --field-selector involvedObject.name=web \
    -o jsonpath='{range .items[*]}{.source.component} {.type} {.reason} {.message}{"\n"}{end}' |
    sed -E 's/^\(combined from similar events\): //; s/ \(combined from similar events\): / /' |
    norm | sort -u
  echo "owner kinds of live pods:"
  $K -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].controller}{"\n"}{end}' | sort | uniq -c
}

run() {  # run <label> <command...>
  local label=$1; shift
  local ns="diff-$label" log="$dir/logs/diff-$label.log"
  $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  scenario "$ns" >"$out/$label.txt"
  kill -TERM "$pid"; wait "$pid" || true
  $K -n "$ns" delete rs web --wait=false >/dev/null
  $K delete --raw "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null
}

run ours "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)"
run upstream "$KCM_TESTBED_BIN_DIR/kube-controller-manager" \
  --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)"
if [ "$started" = 1 ]; then KCM_TESTBED_DIR=$dir hack/testbed down >/dev/null; fi

echo "=== ours ==="; cat "$out/ours.txt"
if diff -u "$out/upstream.txt" "$out/ours.txt"; then
  echo "=== ours and upstream match ==="
else
  echo "=== DIFFERENCES (- upstream, + ours) ==="
  exit 1
fi
