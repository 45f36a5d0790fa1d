#!/usr/bin/env bash
# Memory at scale: D Deployments × R replicas (default 5,000 × 10 = 5,000 ReplicaSets and 50,000
# pods), created and converged once, then our kube-controller-manager and upstream's started in
# turn on the same objects (deployment and replicaset controllers, same client flags). For each:
# time to "caches synced", peak RSS (VmHWM) from start to idle, and RSS once idle (the process's CPU
# stays under 2 % for 10 s; then sampled each second for IDLE_WINDOW_S, lowest / median / highest
# sample), as ours / upstream / ratio. The pods name a scheduler that does not
# exist, so kube-scheduler and KWOK stay idle and the API server holds plain pending pods.
#
# Usage: bench/daemon/scale_rss.sh [build-dir]
# Environment: D (5000), R (10), QPS / BURST for the measured runs (1000/1500), IDLE_WINDOW_S (150),
# KCM_TESTBED_DIR (state dir; a testbed already up there is reused, else one is started and stopped
# at the end), KCM_BENCH_KEEP=1 keeps the objects and the testbed for another run,
# KCM_BENCH_SETUP_ONLY=1 stops after creating and converging them.
# Another testbed can start from a kept one's objects without the ~20-minute setup:
# KCM_TESTBED_ETCD_SEED=<kept state dir, testbed down>/etcd (hack/testbed).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
D=${D:-5000}
R=${R:-10}
QPS=${QPS:-1000}
BURST=${BURST:-1500}
NODES=1
ns=bench-scale-rss
dir=${KCM_TESTBED_DIR:-/tmp/kcm-scale-rss}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
mkdir -p "$dir/logs"

# How many objects of a resource the namespace holds (a one-item page and its remainingItemCount,
# so that counting 50,000 pods does not list them all).
count() {
  $K get --raw "$1?limit=1" 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print(0); sys.exit()
print(len(d.get("items", [])) + d.get("metadata", {}).get("remainingItemCount", 0))'
}
pods=/api/v1/namespaces/$ns/pods
deployments=/apis/apps/v1/namespaces/$ns/deployments
# ReplicaSets whose status counts all R pods.
rs_full() {
  $K -n "$ns" get rs -o 'jsonpath={range .items[*]}{.status.replicas}{"\n"}{end}' 2>/dev/null |
    grep -cx "$R" || true
}

# ---- setup: create and converge once, with our daemon at a high rate limit ------------------
if [ "$(count "$deployments")" != "$D" ] || [ "$(count "$pods")" != "$((D * R))" ]; then
  $K create namespace "$ns" >/dev/null 2>&1 || true
  echo "setup: $D Deployments x $R replicas in $ns"
  for i in $(seq "$D"); do
    cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d$i, labels: {bench: scale-rss}}
spec:
  replicas: $R
  selector: {matchLabels: {app: d$i}}
  template:
    metadata: {labels: {app: d$i, tier: bench, team: kcm}}
    spec: {schedulerName: none, containers: [{name: c, image: registry.example/app:1.0}]}
YAML
  done | $K -n "$ns" create -f - >/dev/null 2>&1 || true
  "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
    --kube-api-qps=2000 --kube-api-burst=3000 >"$dir/logs/setup.log" 2>&1 &
  setup_pid=$!
  t0=$(now)
  until [ "$(rs_full)" = "$D" ]; do
    sleep 5
    echo "  $(count "$pods") pods, $(rs_full) full ReplicaSets after $(printf '%.0f' "$(echo "$(now) - $t0" | bc)") s"
  done
  kill -TERM "$setup_pid"; wait "$setup_pid" || true
  echo "setup done in $(printf '%.0f' "$(echo "$(now) - $t0" | bc)") s"
fi

[ "${KCM_BENCH_SETUP_ONLY:-0}" = 1 ] && exit 0

# ---- measured runs --------------------------------------------------------------------------
# Seconds from the first klog line of a log to its last "Caches are synced" line (upstream logs one
# per informer group; the controllers' come last).
synced_after() {
  python3 - "$1" <<'PY'
import re, sys
times, synced = [], None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^[IWEF]\d{4} (\d\d):(\d\d):(\d\d\.\d+)", line)
    if not m:
        continue
    t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    times.append(t)
    if "Caches are synced" in line:
        synced = t
print(f"{synced - times[0]:.2f}" if synced is not None and times else "nan")
PY
}

# measure <label> <command...>: prints "sync_s peak_kb idle_min_kb idle_median_kb idle_max_kb
# cpu_s". Once the process is idle its VmRSS is sampled every second for IDLE_WINDOW_S seconds: a Go
# process's RSS falls within minutes of going idle when its runtime scavenges the freed heap, so one
# sample reads upstream's steady state in one run and its scavenged state in the next. The default
# window spans the Go runtime's forced collection (every two minutes) and some scavenging after it.
IDLE_WINDOW_S=${IDLE_WINDOW_S:-150}
measure() {
  local label=$1; shift
  local log="$dir/logs/scale-rss-$label.log"
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_synced "$log"
  wait_idle "$pid"
  local cpu peak samples=()
  cpu=$(echo "$idle_ticks / $tick" | bc -l)
  for _ in $(seq "$IDLE_WINDOW_S"); do
    samples+=("$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")")
    sleep 1
  done
  peak=$(rss_kb "$pid")
  kill -TERM "$pid"; wait "$pid" || true
  read -r lo mid hi < <(printf '%s\n' "${samples[@]}" | sort -n |
    awk '{v[NR] = $1} END {print v[1], v[int((NR + 1) / 2)], v[NR]}')
  printf '%s %s %s %s %s %s\n' "$(synced_after "$log")" "$peak" "$lo" "$mid" "$hi" "$cpu"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
read -r o_sync o_peak o_lo o_mid o_hi o_cpu < <(measure ours "$ours" \
  --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST")
read -r u_sync u_peak u_lo u_mid u_hi u_cpu < <(measure upstream "$upstream" \
  --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST")

echo "$D Deployments, $D ReplicaSets, $((D * R)) pods cached; --kube-api-qps=$QPS --kube-api-burst=$BURST"
echo "load before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$o_sync" "$u_sync" "$o_peak" "$u_peak" "$o_lo" "$u_lo" "$o_mid" "$u_mid" "$o_hi" "$u_hi" \
  "$o_cpu" "$u_cpu" <<'PY'
import sys
(o_sync, u_sync, o_peak, u_peak, o_lo, u_lo, o_mid, u_mid, o_hi, u_hi, o_cpu,
 u_cpu) = map(float, sys.argv[1:])
print(f"{'figure':34} {'ours':>10} {'upstream':>10} {'ratio':>7}")
for name, o, u, unit in (("first log line -> synced", o_sync, u_sync, "s"),
                         ("peak RSS (start to idle)", o_peak / 1024, u_peak / 1024, "MiB"),
                         ("RSS idle, highest sample", o_hi / 1024, u_hi / 1024, "MiB"),
                         ("RSS idle, median sample", o_mid / 1024, u_mid / 1024, "MiB"),
                         ("RSS idle, lowest sample", o_lo / 1024, u_lo / 1024, "MiB"),
                         ("CPU start to idle", o_cpu, u_cpu, "s")):
    print(f"{name:34} {o:8.1f} {unit:<3} {u:8.1f} {unit:<3} {o / u if u else 0:7.3f}")
# The goal's reading, and the strict one: ours at its highest idle sample against upstream's
# lowest (after its runtime gave memory back).
print(f"strict idle ratio (ours highest / upstream lowest): {o_hi / u_lo:.3f}")
print(f"ours: peak / idle median = {o_peak / o_mid:.2f}; upstream: {u_peak / u_mid:.2f}")
PY
if [ "${KCM_BENCH_KEEP:-0}" != 1 ]; then
  $K delete namespace "$ns" --wait=false >/dev/null
  bench_testbed_down
fi
