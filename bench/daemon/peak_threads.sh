#!/usr/bin/env bash
# Threads at peak while pod creates queue behind the client's rate limiter: our
# kube-controller-manager with default client flags (--kube-api-qps 20, --kube-api-burst 30,
# default worker counts), RS ReplicaSets of N / RS replicas each created at once, so up to RS
# workers' syncs queue up to 500 creates each (the burst) at qps 20. Prints the threads once idle (before the ReplicaSet), the most
# seen while its pods were created (/proc/<pid>/status "Threads", sampled every 20 ms) and the
# seconds until all N pods existed, and the peak RSS (VmHWM) at that point. BEFORE=<another kube-controller-manager binary> measures that
# one too, after ours, in the same run. The pods name a scheduler that does not exist, so
# kube-scheduler and KWOK stay idle.
#
# Usage: bench/daemon/peak_threads.sh [build-dir]
# Environment: N (1000), RS (1), BEFORE, KCM_TESTBED_DIR (a testbed already up there is reused, else one
# is started and stopped at the end).
# shellcheck source=bench/lib/controller_bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-testbed}
NODES=${NODES:-3}
N=${N:-1000}
RS=${RS:-1}
source bench/lib/controller_bench.sh
bench_testbed_up
trap bench_testbed_down EXIT

pod_count() { $K -n "$1" get pods --no-headers 2>/dev/null | wc -l; }

# measure <label> <binary>: prints "<idle threads> <peak threads> <seconds to N pods> <peak RSS
# in KiB>".
measure() {
  local label=$1 bin=$2 ns log pid idle peak t0 cur done_at hwm
  ns="threads-$label-$$"
  log="$dir/logs/peak-threads-$label.log"
  $K create namespace "$ns" >/dev/null
  : >"$log"  # there before wait_started reads it
  "$bin" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" >"$log" 2>&1 &
  pid=$!
  wait_started "$log"
  wait_idle "$pid"
  idle=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
  peak=$idle
  for r in $(seq "$RS"); do
    cat <<YAML
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: big$r}
spec:
  replicas: $((N / RS))
  selector: {matchLabels: {app: big$r}}
  template:
    metadata: {labels: {app: big$r}}
    spec: {schedulerName: none, containers: [{name: c, image: registry.example/app:1.0}]}
YAML
  done | $K -n "$ns" create -f - >/dev/null
  t0=$(now)
  done_at=""
  local i=0
  while [ -z "$done_at" ]; do
    cur=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
    [ "$cur" -gt "$peak" ] && peak=$cur
    sleep 0.02
    i=$((i + 1))
    if [ $((i % 100)) = 0 ]; then
      [ "$(pod_count "$ns")" -ge $((N / RS * RS)) ] && done_at=$(now)
      [ "$(echo "$(now) - $t0 > 300" | bc)" = 1 ] && done_at=$(now)
    fi
  done
  hwm=$(rss_kb "$pid")
  kill -TERM "$pid"
  wait "$pid" || true
  for r in $(seq "$RS"); do delete_rs_and_pods "$ns" "big$r"; done
  $K delete namespace "$ns" --wait=false >/dev/null
  printf '%s %s %.1f %s\n' "$idle" "$peak" "$(echo "$done_at - $t0" | bc)" "$hwm"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r o_idle o_peak o_secs o_hwm < <(measure ours "$ours")
printf '%-8s idle %4s threads, peak %4s threads, %s pods in %s s, peak RSS %s KiB\n' ours \
  "$o_idle" "$o_peak" "$N" "$o_secs" "$o_hwm"
if [ -n "${BEFORE:-}" ]; then
  read -r b_idle b_peak b_secs b_hwm < <(measure before "$BEFORE")
  printf '%-8s idle %4s threads, peak %4s threads, %s pods in %s s, peak RSS %s KiB\n' before \
    "$b_idle" "$b_peak" "$N" "$b_secs" "$b_hwm"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
