#!/usr/bin/env bash
# Reaction latency of the replicaset controller, ours vs upstream's, in one run on one testbed:
# a ReplicaSet of R pods, pods deleted (grace period 0) at a fixed rate, and for each delete the
# time from sending it to seeing a replacement pod in a watch (bench/replicaset/go: pod-churn).
# Each controller runs alone (ours, then upstream's) with the same client flags; at every rate
# it prints p50/p90/p99 for both, the ratio, and `uptime`'s load average. For ours it also reads
# controller_reaction_duration_seconds{controller="replicaset"} from /metrics before and after
# each rate and prints the p99 of the difference (bucket bound, interpolated as Prometheus'
# histogram_quantile does).
#
# Usage: bench/replicaset/reaction_latency.sh [build-dir]
# Environment: RATES ("20 200", deletes/s), SAMPLES (600 deletes per rate), R (500 replicas, so
# that the deleter rarely runs out of live pods; "skipped" counts ticks when it did), QPS / BURST
# (1000/1500: both controllers' --kube-api-qps/--kube-api-burst; at upstream's 20/30 the client
# limiter, not the controller, decides latency at 200/s), NODES (KWOK nodes, 110 pods each;
# default R/100+3), KCM_TESTBED_DIR (a testbed already up there is reused, else one is started
# and stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
RATES=${RATES:-20 200}
SAMPLES=${SAMPLES:-600}
R=${R:-500}
QPS=${QPS:-1000}
BURST=${BURST:-1500}
NODES=${NODES:-$((R / 100 + 3))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-rs-latency}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
mkdir -p "$dir/logs"
churn="$dir/pod-churn"
(cd bench/replicaset/go && GOFLAGS=-mod=mod go build -o "$churn" .)
field() { $K -n "$1" get rs big -o "jsonpath={.status.$2}" 2>/dev/null || true; }
load() { uptime | sed 's/.*load average: //'; }

# Our histogram's buckets as "le count" lines.
scrape() {
  curl -sk -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" "https://127.0.0.1:$1/metrics" |
    sed -n 's/^controller_reaction_duration_seconds_bucket{controller="replicaset",le="\([^"]*\)"} \(.*\)$/\1 \2/p'
}
# p99 in ms of the difference of two scrapes (files of "le count").
hist_p99() {
  join <(sort "$1") <(sort "$2") | awk '{ le = ($1 == "+Inf") ? 1e9 : $1; print le, $3 - $2 }' |
    sort -g | awk '{ le[NR] = $1; c[NR] = $2 } END {
      total = c[NR]; if (total == 0) { print "n/a"; exit }
      target = 0.99 * total; prev_le = 0; prev_c = 0
      for (i = 1; i <= NR; i++) {
        if (c[i] >= target) {
          if (le[i] == 1e9) { printf "> %.1f (n=%d)\n", prev_le * 1000, total; exit }
          v = prev_le + (le[i] - prev_le) * (target - prev_c) / (c[i] - prev_c)
          printf "%.1f (n=%d)\n", v * 1000, total; exit
        }
        prev_le = le[i]; prev_c = c[i]
      }
    }'
}

declare -A result hist
# run_one <label> <metrics-port|""> <command...>
run_one() {
  local label=$1 port=$2; shift 2
  local ns="lat-$label-$(date +%s)" log="$dir/logs/latency-$label.log"
  $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_started "$log"
  $K -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: big}
spec:
  replicas: $R
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: c, image: fake}]}
YAML
  # Start from a quiet state: every pod scheduled and Ready (KWOK), the status writes done.
  for _ in $(seq 1200); do
    [ "$(field "$ns" readyReplicas)" = "$R" ] && break
    sleep 0.2
  done
  sleep 3
  local rate
  for rate in $RATES; do
    [ -n "$port" ] && scrape "$port" >"$dir/hist-before"
    local l0 out; l0=$(load)
    out=$("$churn" -kubeconfig "$KCM_TESTBED_ADMIN_KUBECONFIG" -namespace "$ns" \
      -selector app=big -rate "$rate" -n "$SAMPLES")
    result[$label,$rate]="$out load $l0"
    if [ -n "$port" ]; then
      scrape "$port" >"$dir/hist-after"
      # The whole scrape, for finding where the time goes (workqueue_*, rest_client_*).
      curl -sk -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" \
        "https://127.0.0.1:$port/metrics" >"$dir/logs/metrics-$label-$rate.txt"
      hist[$rate]=$(hist_p99 "$dir/hist-before" "$dir/hist-after")
    fi
    echo "$label $rate/s: $out (load $l0)"
    sleep 3
  done
  kill -TERM "$pid"; wait "$pid" || true
  delete_rs_and_pods "$ns" big
}

echo "ReplicaSet of $R, $SAMPLES deletes per rate, --kube-api-qps=$QPS --kube-api-burst=$BURST"
port=$(free_port)
run_one ours "$port" "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$port" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"
run_one upstream "" "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"

get() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" ${result[$1]}"; }
echo
printf '%-7s %-24s %-24s %-16s %s\n' "rate" "ours p50/p90/p99 ms" "upstream p50/p90/p99 ms" \
  "p99 ours/upst" "our histogram p99 ms"
for rate in $RATES; do
  o=ours,$rate u=upstream,$rate
  printf '%-7s %-24s %-24s %-16s %s\n' "$rate/s" \
    "$(get "$o" p50)/$(get "$o" p90)/$(get "$o" p99)" \
    "$(get "$u" p50)/$(get "$u" p90)/$(get "$u" p99)" \
    "$(echo "scale=2; $(get "$o" p99) / $(get "$u" p99)" | bc)" "${hist[$rate]:-n/a}"
done
echo "load average at the end: $(load)"
bench_testbed_down
