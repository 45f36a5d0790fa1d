#!/usr/bin/env bash
# Write amplification: how many writes each controller manager sends to reach the same end state,
# ours vs upstream's (controllers deployment,replicaset), one after the other on one testbed whose
# kube-apiserver audits every write of pods, ReplicaSets, Deployments and events
# (KCM_TESTBED_AUDIT=writes). The scenario is the shape of upstream's e2e case "iterative rollouts
# should eventually progress": a Deployment of 8 patched ITER times to 7 replicas and a new
# template at once (each patch waits for the rollout), then a rolling update paused and resumed.
# Rows: writes per kind counted from the audit log (the controller manager's requests only, by
# user agent, in the run's namespace), 409 conflicts, and failed syncs (workqueue_retries_total of
# the deployment and replicaset queues, scraped from each daemon's /metrics before it stops).
#
# Usage: bench/deployment/write_amplification.sh [build-dir]
# Environment: ITER (12), NODES (3), KCM_TESTBED_DIR (default /tmp/kcm-wa-bench; a testbed already
# up there is reused only if it audits writes, else one is started and stopped at the end);
# WA_BODIES=1 audits ReplicaSet and Deployment writes with their bodies (KCM_TESTBED_AUDIT=
# writes-bodies, applies to a testbed this script starts) and keeps each run's audit lines in
# <out>/<ours|upstream>.audit for bench/deployment/rs_write_diff.py; WA_OURS_ARGS: extra flags for
# ours (e.g. --kube-api-qps=10 to see how the counts move with its pace).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ITER=${ITER:-12}
NODES=${NODES:-3}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-wa-bench}
if [ -f "$dir/audit-policy.yaml" ] && ! grep -q '"update"' "$dir/audit-policy.yaml"; then
  echo "$dir runs a testbed without write auditing; use another KCM_TESTBED_DIR" >&2
  exit 1
fi
export KCM_TESTBED_AUDIT=writes
[ "${WA_BODIES:-0}" = 1 ] && export KCM_TESTBED_AUDIT=writes-bodies
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
audit="$dir/logs/audit.log"
out=$(mktemp -d)

scenario() {  # scenario <namespace>
  local k="$K -n $1"
  $k create deployment web --image=img:0 --replicas=8 >/dev/null
  $k rollout status deployment/web --timeout=180s >/dev/null
  for i in $(seq "$ITER"); do
    $k patch deployment web --type=strategic -p \
      "{\"spec\":{\"replicas\":$((7 + i % 2)),\"template\":{\"spec\":{\"containers\":[{\"name\":\"img\",\"image\":\"img:$i\"}]}}}}" \
      >/dev/null
    $k rollout status deployment/web --timeout=180s >/dev/null
  done
  $k set image deployment/web img=img:paused >/dev/null
  $k rollout pause deployment/web >/dev/null
  sleep 1
  $k rollout resume deployment/web >/dev/null
  $k rollout status deployment/web --timeout=180s >/dev/null
}

# metric <page> <series>: the value of one sample (0 when absent).
metric() { awk -v s="$2" '$1 == s {print $2; found=1} END {if (!found) print 0}' "$1"; }

run() {  # run <ours|upstream> <command...>
  local mode=$1 ns=wa-$1-$$ port
  shift
  port=$(free_port)
  $K create namespace "$ns" >/dev/null
  "$@" --bind-address=127.0.0.1 --secure-port="$port" --leader-elect=false \
    --controllers=deployment,replicaset >"$out/$mode.log" 2>&1 &
  local pid=$!
  wait_started "$out/$mode.log"
  local t0 c0
  t0=$(now)
  c0=$(cpu_ticks "$pid")
  scenario "$ns"
  sleep 3  # let the last status writes and events land
  curl -sk -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" "https://127.0.0.1:$port/metrics" \
    >"$out/$mode.metrics"
  echo "$(echo "$(now) - $t0" | bc) $(echo "($(cpu_ticks "$pid") - $c0) / $tick" | bc -l)" \
    >"$out/$mode.time"
  kill -TERM "$pid"
  wait "$pid" || true
  sleep 2  # the audit log is written in blocking mode; let the last lines flush
  python3 - "$audit" "$ns" "$out/$mode.audit" "${WA_BODIES:-0}" >"$out/$mode.counts" <<'PY'
import collections, json, sys
audit, ns, keep_path, keep = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
rows = collections.Counter()
kept = open(keep_path, "w") if keep else None
for line in open(audit):
    e = json.loads(line)
    ref = e.get("objectRef", {})
    if ref.get("namespace") != ns or not e.get("userAgent", "").startswith("kube-controller-manager"):
        continue
    if kept:
        kept.write(line)
    res = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
    verb = e["verb"]
    if verb == "patch" and res in ("replicasets", "deployments"):
        verb = "update"  # spec/metadata writes, whichever verb the implementation picked
    if res == "events":
        verb = "create" if verb == "create" else "patch"
    rows[f"{res} {verb}"] += 1
    if e.get("responseStatus", {}).get("code") == 409:
        rows["409 conflicts"] += 1
for k, v in sorted(rows.items()):
    print(f"{k}\t{v}")
PY
  for q in deployment replicaset; do
    printf 'failed syncs (%s queue)\t%s\n' "$q" \
      "$(metric "$out/$mode.metrics" "workqueue_retries_total{name=\"$q\"}")" >>"$out/$mode.counts"
  done
  $K delete namespace "$ns" --wait=false >/dev/null
}

# shellcheck disable=SC2086 # WA_OURS_ARGS is a list of flags
run ours "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" ${WA_OURS_ARGS:-}
run upstream "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG"

echo "write amplification, ITER=$ITER (8 -> 7/8 + new template), then pause/resume; load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
def load(mode):
    d = {}
    for line in open(f"{out}/{mode}.counts"):
        k, v = line.rstrip("\n").split("\t")
        d[k] = float(v)
    return d
ours, up = load("ours"), load("upstream")
print(f"{'row':42} {'ours':>8} {'upstream':>9} {'ratio':>7}")
for k in sorted(set(ours) | set(up)):
    o, u = ours.get(k, 0), up.get(k, 0)
    ratio = f"{o / u:.2f}" if u else ("-" if o == 0 else "inf")
    print(f"{k:42} {o:8.0f} {u:9.0f} {ratio:>7}")
for mode in ("ours", "upstream"):
    wall, cpu = open(f"{out}/{mode}.time").read().split()
    print(f"{mode}: scenario {float(wall):.1f} s wall, {float(cpu):.2f} CPU-s")
PY
echo "logs, metrics and counts in $out"
bench_testbed_down
