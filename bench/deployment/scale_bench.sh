#!/usr/bin/env bash
# N Deployments × R replicas created at once: our kube-controller-manager vs upstream's, each
# running the deployment and replicaset controllers, one after the other on the same testbed with
# the same client flags. Reports wall time until every Deployment has availableReplicas = R (and
# its Progressing condition NewReplicaSetAvailable) and the controller process's CPU seconds
# (utime+stime from /proc) and peak RSS over that window.
#
# Usage: bench/deployment/scale_bench.sh [build-dir]
# Environment: N (1000), R (10), QPS / BURST (--kube-api-qps/--kube-api-burst for both; 20/30 =
# upstream defaults), NODES (KWOK nodes, 110 pods each; default N*R/100+5), KCM_TESTBED_DIR (state
# dir; a testbed already up there is reused, else one is started and stopped at the end),
# PERF_OUT (a file: record ours with `perf record --call-graph dwarf` over the measured window),
# PERF_STAT=1 (count each side's context switches and CPU migrations over the measured window with
# `perf stat`, threads created during it included).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
N=${N:-1000}
R=${R:-10}
QPS=${QPS:-20}
BURST=${BURST:-30}
NODES=${NODES:-$((N * R / 100 + 5))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-dep-bench}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
# How many Deployments of the namespace are complete (R available, rollout finished).
complete() {
  $K -n "$1" get deployments -o \
    'jsonpath={range .items[*]}{.status.availableReplicas}/{.status.conditions[?(@.type=="Progressing")].reason}{"\n"}{end}' \
    2>/dev/null | grep -cx "$R/NewReplicaSetAvailable" || true
}

# run_one <label> <command...>: one measured scale-up in namespace bench-<label>.
run_one() {
  local label=$1; shift
  local ns="bench-$label" log="$dir/logs/bench-$label.log"
  # Already there when the testbed is reused (KCM_TESTBED_DIR of an earlier run).
  $K get namespace "$ns" >/dev/null 2>&1 || $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_started "$log"
  local c0 t0 t_done="" perf_pid="" stat_pid="" stat_out="$dir/logs/perf-stat-$label.txt"
  if [ "$label" = ours ] && [ -n "${PERF_OUT:-}" ]; then
    perf record -q -F 499 --call-graph dwarf,16384 -p "$pid" -o "$PERF_OUT" 2>/dev/null &
    perf_pid=$!
  fi
  if [ -n "${PERF_STAT:-}" ]; then
    perf stat -x, -e context-switches,cpu-migrations -p "$pid" -o "$stat_out" 2>/dev/null &
    stat_pid=$!
  fi
  c0=$(cpu_ticks "$pid"); t0=$(now)
  for i in $(seq "$N"); do
    cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d$i}
spec:
  replicas: $R
  selector: {matchLabels: {app: d$i}}
  template:
    metadata: {labels: {app: d$i}}
    spec: {containers: [{name: c, image: fake}]}
YAML
  done | $K -n "$ns" apply -f - >/dev/null
  while :; do
    if [ "$(complete "$ns")" = "$N" ]; then t_done=$(now); break; fi
    if (( $(echo "$(now) - $t0 > 1800" | bc) )); then
      echo "$label: timed out at $(complete "$ns") complete" >&2
      break
    fi
    sleep 2
  done
  local c1 rss; c1=$(cpu_ticks "$pid"); rss=$(rss_kb "$pid")
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  if [ -n "$stat_pid" ]; then kill -INT "$stat_pid"; wait "$stat_pid" || true; fi
  kill -TERM "$pid"; wait "$pid" || true
  printf '%-9s complete %6.1f s   cpu %6.2f s   peak rss %5d MiB\n' "$label" \
    "$(echo "${t_done:-$(now)} - $t0" | bc)" "$(echo "($c1 - $c0) / $tick" | bc -l)" "$((rss / 1024))"
  if [ -n "$stat_pid" ]; then
    awk -F, '$3 ~ /context-switches|cpu-migrations/ {printf "          %s %s\n", $3, $1}' "$stat_out"
  fi
  # Clean up before the next run so it schedules onto empty nodes.
  $K -n "$ns" delete deployments,rs --all --wait=false >/dev/null
  # A 10,000-pod collection delete can outlive the HTTP/2 stream; the wait below covers it.
  $K delete --raw "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
  for i in $(seq 600); do
    [ "$($K -n "$ns" get pods --no-headers 2>/dev/null | wc -l)" = 0 ] && break
    # A collection delete that failed part-way (a timeout at load) leaves pods behind: ask again.
    if (( i % 40 == 0 )); then
      $K delete --raw "/api/v1/namespaces/$ns/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
    fi
    sleep 0.5
  done
}

echo "$N Deployments x $R replicas, --kube-api-qps=$QPS --kube-api-burst=$BURST, $NODES KWOK nodes"
run_one ours "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"
run_one upstream "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"

bench_testbed_down
