#!/usr/bin/env bash
# 0 → N ReplicaSet scale-up: our kube-controller-manager vs upstream's, each running only the
# replicaset controller, one after the other on the same testbed with the same client flags.
# Reports wall time until status.replicas = N (all pods created and observed) and until
# readyReplicas = N (scheduler + KWOK done too), and the controller process's CPU seconds
# (utime+stime from /proc) over that window.
#
# Usage: bench/replicaset/scale_bench.sh [build-dir]
# Environment: N (3000), QPS / BURST (--kube-api-qps/--kube-api-burst for both; 20/30 = upstream
# defaults), NODES (KWOK nodes, 110 pods each; default N/100+5), KCM_TESTBED_DIR (state dir; a
# testbed already up there is reused, else one is started and stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
N=${N:-3000}
QPS=${QPS:-20}
BURST=${BURST:-30}
NODES=${NODES:-$((N / 100 + 5))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-rs-bench}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
field() { $K -n "$1" get rs big -o "jsonpath={.status.$2}" 2>/dev/null || true; }

# run_one <label> <command...>: one measured scale-up in namespace bench-<label>.
run_one() {
  local label=$1; shift
  local ns="bench-$label" log="$dir/logs/bench-$label.log"
  $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_started "$log"
  local c0 t0 t_created="" t_ready=""
  c0=$(cpu_ticks "$pid"); t0=$(now)
  $K -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: big}
spec:
  replicas: $N
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: c, image: fake}]}
YAML
  while :; do
    if [ -z "$t_created" ] && [ "$(field "$ns" replicas)" = "$N" ]; then t_created=$(now); fi
    if [ "$(field "$ns" readyReplicas)" = "$N" ]; then
      t_ready=$(now)
      # Both counts can reach N in one status write, between our two reads.
      [ -n "$t_created" ] || t_created=$t_ready
      break
    fi
    if (( $(echo "$(now) - $t0 > 1200" | bc) )); then
      echo "$label: timed out" >&2
      t_created=${t_created:-$(now)}
      break
    fi
    sleep 0.5
  done
  local c1; c1=$(cpu_ticks "$pid")
  kill -TERM "$pid"; wait "$pid" || true
  printf '%-9s created %6.1f s   ready %6.1f s   cpu %6.2f s\n' "$label" \
    "$(echo "$t_created - $t0" | bc)" "$(echo "${t_ready:-$t0} - $t0" | bc)" \
    "$(echo "($c1 - $c0) / $tick" | bc -l)"
  delete_rs_and_pods "$ns" big
}

echo "0 -> $N replicas, --kube-api-qps=$QPS --kube-api-burst=$BURST, $NODES KWOK nodes"
run_one ours "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"
run_one upstream "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"

bench_testbed_down
