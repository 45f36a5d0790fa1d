#!/usr/bin/env bash
# Reaction latency of the replicaset controller, ours vs upstream's, in one run on one testbed:
# ReplicaSets of pods, pods deleted (grace period 0) at a fixed rate, and for each delete the time
# from sending it to seeing a replacement pod in a watch (bench/replicaset/go: pod-churn). Two
# shapes by default, the same number of pods: one ReplicaSet of 500 (every delete hits the same
# workqueue key, which one worker holds at a time: this measures the API server's round trips as
# much as the controller) and 50 ReplicaSets of 10, deletes round-robin over them (each key gets
# 1/50 of the events). Each controller runs alone (ours, then upstream's) with the same client
# flags; for every shape and rate it prints p50/p90/p99 for both, the ratio, and `uptime`'s load
# average. For ours it also reads /metrics before and after each rate and prints, from the
# difference, the p99 (bucket bound interpolated as Prometheus' histogram_quantile does) and count
# of controller_reaction_duration_seconds (event → first write, waits included),
# controller_reaction_sli_duration_seconds (the controller's own part) and
# controller_reaction_wait_duration_seconds{reason} (docs/operating.md), and where the window's
# time went: the API round trips (rest_client_request_duration_seconds) and the workqueue's
# summed queue wait against its work. The same window figures, and the mean of the workqueue's
# queue wait (workqueue_queue_duration_seconds: add -> a worker takes it; its buckets are decades,
# too coarse for a p99), for upstream's too, from its /metrics: the part of a reaction both sides
# spend waiting for a free worker.
#
# Usage: bench/replicaset/reaction_latency.sh [build-dir]
# Environment: SHAPES ("1x500 50x10": ReplicaSets x replicas each), RATES ("20 200", deletes/s),
# SAMPLES (600 deletes per rate; "skipped" counts ticks when no pod was live), QPS / BURST
# (1000/1500: both controllers' --kube-api-qps/--kube-api-burst; at upstream's 20/30 the client
# limiter, not the controller, decides latency at 200/s), WORKERS (both controllers'
# --concurrent-replicaset-syncs; unset = each one's default, 5), NODES (KWOK nodes, 110 pods
# each; default pods/100+3), KCM_TESTBED_DIR (a testbed already up there is reused, else one is
# started and stopped at the end), BEFORE (a second build dir of ours, e.g. before a change: run
# as "before" right after ours on every shape, same flags, and shown beside it).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
SHAPES=${SHAPES:-1x500 50x10}
RATES=${RATES:-20 200}
SAMPLES=${SAMPLES:-600}
QPS=${QPS:-1000}
BURST=${BURST:-1500}
max_pods=0
for shape in $SHAPES; do
  pods=$((${shape%x*} * ${shape#*x}))
  [ "$pods" -gt "$max_pods" ] && max_pods=$pods
done
NODES=${NODES:-$((max_pods / 100 + 3))}
worker_flag=()
[ -n "${WORKERS:-}" ] && worker_flag=(--concurrent-replicaset-syncs="$WORKERS")
dir=${KCM_TESTBED_DIR:-/tmp/kcm-rs-latency}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
before_bin=
if [ -n "${BEFORE:-}" ]; then
  before_bin="$BEFORE/cmd/kube-controller-manager/kube-controller-manager"
  [ -x "$before_bin" ] || { echo "build $before_bin first" >&2; exit 1; }
fi
bench_testbed_up
mkdir -p "$dir/logs"
churn="$dir/pod-churn"
(cd bench/replicaset/go && GOFLAGS=-mod=mod go build -o "$churn" .)
# Sum of readyReplicas over the ReplicaSets of a namespace.
ready_sum() {
  $K -n "$1" get rs -o 'jsonpath={range .items[*]}{.status.readyReplicas}{"\n"}{end}' 2>/dev/null |
    awk '{ s += $1 } END { print s + 0 }'
}
load() { uptime | sed 's/.*load average: //'; }

# A controller manager's /metrics, the whole scrape.
scrape() {
  curl -sk -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" "https://127.0.0.1:$1/metrics"
}
# One histogram's buckets from a scrape file as "le count" lines: <file> <family> <extra labels>.
buckets() {
  sed -n "s/^$2_bucket{controller=\"replicaset\",$3le=\"\([^\"]*\)\"} \(.*\)\$/\1 \2/p" "$1"
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

# The p99 (and count) of one histogram between two scrape files: <before> <after> <family>
# <extra labels>.
hist_diff_p99() {
  buckets "$1" "$3" "${4:-}" >"$dir/hist-before"
  buckets "$2" "$3" "${4:-}" >"$dir/hist-after"
  hist_p99 "$dir/hist-before" "$dir/hist-after"
}

# The change of a series (summed over the lines that match the extended regex) between two
# scrape files: <before> <after> <regex>.
delta() {
  awk -v re="^$3 " 'FNR == 1 { f++ } $0 ~ re { v[f] += $NF } END { printf "%.6f\n", v[2] - v[1] }' \
    "$1" "$2"
}
# "n / mean ms" of a histogram or summary series pair between two scrape files: <before> <after>
# <family> <label regex>.
mean_ms() {
  local n sum
  n=$(delta "$1" "$2" "$3_count[{]$4[}]")
  sum=$(delta "$1" "$2" "$3_sum[{]$4[}]")
  awk -v n="$n" -v s="$sum" 'BEGIN { if (n > 0) printf "%d / %.1f\n", n, s / n * 1000; else print "0" }'
}

declare -A result hist
# run_one <label> <shape> <metrics-port|""> <command...>
run_one() {
  local label=$1 shape=$2 port=$3; shift 3
  local n_rs=${shape%x*} per_rs=${shape#*x}
  local total=$((n_rs * per_rs)) group=()
  [ "$n_rs" -gt 1 ] && group=(-group-label rs)
  local ns="lat-$label-$n_rs-$(date +%s)" log="$dir/logs/latency-$label-$shape.log"
  $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_started "$log"
  local i
  for i in $(seq 0 $((n_rs - 1))); do
    cat <<YAML
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs-$i}
spec:
  replicas: $per_rs
  selector: {matchLabels: {app: lat, rs: rs-$i}}
  template:
    metadata: {labels: {app: lat, rs: rs-$i}}
    spec: {containers: [{name: c, image: fake}]}
YAML
  done | $K -n "$ns" apply -f - >/dev/null
  # Start from a quiet state: every pod scheduled and Ready (KWOK), the status writes done.
  for _ in $(seq 1200); do
    [ "$(ready_sum "$ns")" = "$total" ] && break
    sleep 0.2
  done
  sleep 3
  local rate
  for rate in $RATES; do
    [ -n "$port" ] && scrape "$port" >"$dir/scrape-before"
    local l0 out; l0=$(load)
    out=$("$churn" -kubeconfig "$KCM_TESTBED_ADMIN_KUBECONFIG" -namespace "$ns" \
      -selector app=lat -rate "$rate" -n "$SAMPLES" "${group[@]}")
    result[$label,$shape,$rate]="$out load=${l0// /}"
    if [ -n "$port" ]; then
      # The whole scrape is kept, for finding where the time goes (workqueue_*, rest_client_*).
      local after="$dir/logs/metrics-$label-$shape-$rate.txt"
      scrape "$port" >"$after"
      local b="$dir/scrape-before" k=$label,$shape,$rate
      hist[$k,total]=$(hist_diff_p99 "$b" "$after" controller_reaction_duration_seconds)
      hist[$k,sli]=$(hist_diff_p99 "$b" "$after" controller_reaction_sli_duration_seconds)
      local reason
      for reason in key_in_flight stale_cache retry_backoff; do
        hist[$k,$reason]=$(hist_diff_p99 "$b" "$after" controller_reaction_wait_duration_seconds \
          "reason=\"$reason\",")
      done
      # Where the time went in the window: the API round trips, and the workqueue's waits
      # (queue: add -> a worker takes it, in-flight waits included) against its work, in s.
      hist[$k,post]=$(mean_ms "$b" "$after" rest_client_request_duration_seconds '.*verb="POST".*')
      hist[$k,put]=$(mean_ms "$b" "$after" rest_client_request_duration_seconds '.*verb="PUT".*')
      hist[$k,queue]=$(delta "$b" "$after" 'workqueue_queue_duration_seconds_sum[{]name="replicaset"[}]')
      hist[$k,work]=$(delta "$b" "$after" 'workqueue_work_duration_seconds_sum[{]name="replicaset"[}]')
      hist[$k,sli_mean]=$(mean_ms "$b" "$after" controller_reaction_sli_duration_seconds \
        'controller="replicaset"')
      # The same family and label on both sides (upstream's workqueue metrics have the queue's
      # name as their only label).
      hist[$k,queue_mean]=$(mean_ms "$b" "$after" workqueue_queue_duration_seconds 'name="replicaset"')
    fi
    echo "$label $shape $rate/s: $out (load $l0)"
    sleep 3
  done
  kill -TERM "$pid"; wait "$pid" || true
  delete_rs_and_pods "$ns" --all
}

echo "shapes (ReplicaSets x replicas) $SHAPES, $SAMPLES deletes per rate," \
  "--kube-api-qps=$QPS --kube-api-burst=$BURST ${worker_flag[*]}"
ours_labels=(ours)
[ -n "$before_bin" ] && ours_labels+=(before)
for shape in $SHAPES; do
  for label in "${ours_labels[@]}"; do
    bin=$ours
    [ "$label" = before ] && bin=$before_bin
    port=$(free_port)
    run_one "$label" "$shape" "$port" "$bin" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" \
      --controllers=replicaset --leader-elect=false --bind-address=127.0.0.1 \
      --secure-port="$port" --kube-api-qps="$QPS" --kube-api-burst="$BURST" "${worker_flag[@]}"
  done
  port=$(free_port)
  run_one upstream "$shape" "$port" "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=replicaset \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port="$port" \
    --kube-api-qps="$QPS" --kube-api-burst="$BURST" "${worker_flag[@]}"
done

get() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" ${result[$1]}"; }
echo
echo "End to end (delete sent -> replacement seen), ms; load = 1/5/15-min load average at the start"
printf '%-8s %-7s %-7s %-22s %-22s %-8s %-17s %s\n' "ours" "shape" "rate" "ours p50/p90/p99" \
  "upstream p50/p90/p99" "p99 o/u" "load ours" "load upstream"
for label in "${ours_labels[@]}"; do
  for shape in $SHAPES; do
    for rate in $RATES; do
      o=$label,$shape,$rate u=upstream,$shape,$rate
      printf '%-8s %-7s %-7s %-22s %-22s %-8s %-17s %s\n' "$label" "$shape" "$rate/s" \
        "$(get "$o" p50)/$(get "$o" p90)/$(get "$o" p99)" \
        "$(get "$u" p50)/$(get "$u" p90)/$(get "$u" p99)" \
        "$(echo "scale=2; $(get "$o" p99) / $(get "$u" p99)" | bc)" \
        "$(get "$o" load)" "$(get "$u" load)"
    done
  done
done
echo
echo "Ours, from /metrics: p99 ms (n) of event -> first write (all), its SLI part (own), the waits"
printf '%-8s %-7s %-7s %-18s %-18s %-18s %-18s %s\n' "ours" "shape" "rate" "all" "own (sli)" \
  "key_in_flight" "stale_cache" "retry_backoff"
for label in "${ours_labels[@]}"; do
  for shape in $SHAPES; do
    for rate in $RATES; do
      k=$label,$shape,$rate
      printf '%-8s %-7s %-7s %-18s %-18s %-18s %-18s %s\n' "$label" "$shape" "$rate/s" \
        "${hist[$k,total]:-n/a}" "${hist[$k,sli]:-n/a}" "${hist[$k,key_in_flight]:-n/a}" \
        "${hist[$k,stale_cache]:-n/a}" "${hist[$k,retry_backoff]:-n/a}"
    done
  done
done
echo
echo "Each side, in each window: POSTs (pods and Events) and PUTs (n / mean round trip ms), workqueue"
echo "queue wait and work (summed s), queue wait (n / mean ms), SLI (n / mean ms; ours only)"
printf '%-8s %-7s %-7s %-16s %-16s %-10s %-10s %-18s %s\n' "side" "shape" "rate" "POST" "PUT" \
  "queue s" "work s" "queue wait" "sli"
for label in "${ours_labels[@]}" upstream; do
  for shape in $SHAPES; do
    for rate in $RATES; do
      k=$label,$shape,$rate
      printf '%-8s %-7s %-7s %-16s %-16s %-10.1f %-10.1f %-18s %s\n' "$label" "$shape" "$rate/s" \
        "${hist[$k,post]:-n/a}" "${hist[$k,put]:-n/a}" "${hist[$k,queue]:-0}" \
        "${hist[$k,work]:-0}" "${hist[$k,queue_mean]:-n/a}" "${hist[$k,sli_mean]:-n/a}"
    done
  done
done
echo "load average at the end: $(load)"
bench_testbed_down
