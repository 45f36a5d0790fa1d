#!/usr/bin/env bash
# How long a namespace goes unserved when its range moves between namespace-sharded replicas of
# our kube-controller-manager, and what the new owner lists to take it over
# (docs/design/sharding.md, "Handing a range over").
#
# REPLICAS replicas run with `--sharding=namespace` on NS namespaces of one Deployment of
# PODS_PER_NS pods each. Then CYCLES times: the replicas in turn get SIGTERM (it stops its serve
# calls and hands its ranges to the others: "leave" moves) and, once the map no longer names it and
# every namespace is served again, a fresh replica is started (the coordinator asks the others to
# hand it a share after three retry periods of imbalance: "rebalance" moves). Then KILL_CYCLES
# times the same with kill -9 instead of SIGTERM ("kill" moves: the ranges wait for the member
# Lease to expire).
#
# From the replicas' logs (same clock, same machine): each served range's "Serving shard ranges",
# "Caches are synced", "Stopping shard ranges" and "Stopped shard ranges" lines, matched by their
# shardSelector. A replica serves a namespace from its call's "Caches are synced" (its controllers'
# informers hold the range; the workers start then) until its "Stopping shard ranges" (the call's
# token is cancelled: its writers are fenced). A namespace is unserved between one call's stopping
# (or the kill -9) and the next call's synced; when the next call is another replica's, that is a
# move. Each move is split into its parts: the old call's stop (Stopping -> Stopped: its thread
# joined), the hand-over (Stopped -> the new owner's Serving: the map written, seen, acted on) and
# the start (Serving -> Caches are synced: the new call's LISTs and sync). The check of the
# guarantee: no call of another replica starts (Serving) before the previous call of the namespace
# has stopped (Stopped), or before the kill. A range a replica keeps but whose call it stopped
# because part of the call moved is "kept, restarted": reported apart.
#
# Re-list cost: the testbed's audit log (KCM_TESTBED_AUDIT=lists: every LIST of pods, ReplicaSets
# and Deployments) is read for the replicas' LISTs while the moves run; each is matched to the
# served range whose selector it carries, and counted with the objects of the namespaces that
# selector holds (pods, ReplicaSets, Deployments, counted once the workload converged), against
# the cluster's whole count. A LIST without shardSelector would be a whole-cluster list.
#
# Usage: bench/sharding/move_bench.sh [build-dir]
# Environment: NS (24), PODS_PER_NS (10), REPLICAS (3), CYCLES (30), KILL_CYCLES (3), NODES (KWOK
# nodes, 110 pods each; default NS*PODS_PER_NS/100+3), RETRY_PERIOD / LEASE_DURATION /
# RENEW_DEADLINE (unset: the daemon's defaults 2s / 15s / 10s), KCM_TESTBED_DIR (state dir; a
# testbed already up there is reused — started with KCM_TESTBED_AUDIT=lists for the re-list
# figures — else one is started with it and stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
NS=${NS:-24}
PODS_PER_NS=${PODS_PER_NS:-10}
REPLICAS=${REPLICAS:-3}
CYCLES=${CYCLES:-30}
KILL_CYCLES=${KILL_CYCLES:-3}
NODES=${NODES:-$((NS * PODS_PER_NS / 100 + 3))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-sharding-move-bench}
selector=bench=sharding-move
lease=move-bench
export TZ=UTC # the replicas' klog headers and this script's clock agree
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
# shellcheck source=bench/lib/sharding_bench.sh
source bench/lib/sharding_bench.sh
KCM_TESTBED_AUDIT=${KCM_TESTBED_AUDIT:-lists} bench_testbed_up
audit=$dir/logs/audit.log
mkdir -p "$dir/logs"
work=$(mktemp -d "$dir/logs/sharding-move.XXXXXX")
events=$work/events # "<epoch s> term|kill|start <replica index>", this script's own
: >"$events"

cleanup() {
  local p
  for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null || true; done
  for p in $(jobs -p); do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# ---- the replicas (the shard map and its waits: bench/lib/sharding_bench.sh) ------------------
rep_pid=() rep_port=() rep_log=() rep_id=()
start_replica() {
  local i=${#rep_pid[@]} port log flags=()
  port=$(free_port)
  log="$work/replica-$i.log"
  [ -n "${RETRY_PERIOD:-}" ] && flags+=(--leader-elect-retry-period="$RETRY_PERIOD")
  [ -n "${LEASE_DURATION:-}" ] && flags+=(--leader-elect-lease-duration="$LEASE_DURATION")
  [ -n "${RENEW_DEADLINE:-}" ] && flags+=(--leader-elect-renew-deadline="$RENEW_DEADLINE")
  echo "$(now) start $i" >>"$events"
  : >"$log"
  "$ours" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=deployment,replicaset \
    --leader-elect=true --leader-elect-resource-name="$lease" --sharding=namespace \
    --bind-address=127.0.0.1 --secure-port="$port" "${flags[@]}" >"$log" 2>&1 &
  rep_pid+=($!) rep_port+=("$port") rep_log+=("$log")
  rep_id+=("$(replica_identity "$log")")
}
# Waits (≤ 10 s) until every live replica's served ranges have synced: as many "Caches are synced"
# lines as "Serving shard ranges" lines in its log.
wait_synced_calls() {
  local i s c
  for _ in $(seq 100); do
    local ok=1
    for i in "$@"; do
      s=$(grep -c '"Serving shard ranges"' "${rep_log[$i]}" || true)
      c=$(grep -c '"Caches are synced" shardSelector' "${rep_log[$i]}" || true)
      [ "$s" = "$c" ] || ok=0
    done
    [ "$ok" = 1 ] && return 0
    sleep 0.1
  done
}

# ---- the workload --------------------------------------------------------------------------------
for i in $(seq "$NS"); do
  $K get namespace "move-$i" >/dev/null 2>&1 || $K create namespace "move-$i" >/dev/null
  cat <<EOF
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: move-$i, labels: {bench: sharding-move}}
spec:
  replicas: $PODS_PER_NS
  selector: {matchLabels: {name: app}}
  template:
    metadata: {labels: {name: app, bench: sharding-move}}
    spec: {containers: [{name: c, image: fake}]}
EOF
done >"$work/workload.yaml"

# The Leases of an earlier run (its map would name replicas gone).
delete_leases() {
  $K -n kube-system get leases -o name | grep -E "/$lease(-shards|-member-.*)?\$" |
    xargs -r $K -n kube-system delete >/dev/null 2>&1 || true
}
delete_leases
echo "sharding moves: $NS namespaces x $PODS_PER_NS pods, $REPLICAS replicas, $CYCLES leave+join" \
  "cycles, $KILL_CYCLES kill -9 cycles, $NODES KWOK nodes"
echo "start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPLICAS"); do start_replica; done
live=()
for i in "${!rep_pid[@]}"; do live+=("$i"); done
wait_balanced "${live[@]}"
$K apply -f "$work/workload.yaml" >/dev/null
for _ in $(seq 600); do
  ready=$($K get deployments -A -l "$selector" -o 'jsonpath={range .items[*]}{.status.availableReplicas}{"\n"}{end}' |
    awk -v n="$PODS_PER_NS" '$1 == n' | wc -l)
  [ "$ready" = "$NS" ] && break
  sleep 1
done
echo "workload converged: $ready of $NS Deployments available"
# "<resource> <namespace> <objects>" of pods, ReplicaSets and Deployments, for the re-list figures.
for r in pods replicasets deployments; do
  $K get "$r" -A --no-headers -o custom-columns=NS:.metadata.namespace | sort | uniq -c |
    awk -v r="$r" '{print r, $2, $1}'
done >"$work/objects"
$K get namespaces --no-headers -o custom-columns=N:.metadata.name >"$work/namespaces"
sleep 2
t_moves=$(now)
echo "$t_moves moves" >>"$events"
load_moves=$(cut -d' ' -f1-3 /proc/loadavg)

# cycle <signal> <n>: n times, the next live replica in turn gets the signal, then a fresh one joins.
cycle() {
  local sig=$1 n=$2 c victim rest i
  for c in $(seq "$n"); do
    victim=${live[0]}
    echo "$(now) ${sig,,} $victim" >>"$events"
    kill "-$sig" "${rep_pid[$victim]}"
    wait "${rep_pid[$victim]}" 2>/dev/null || true
    rest=()
    for i in "${live[@]}"; do [ "$i" = "$victim" ] || rest+=("$i"); done
    live=("${rest[@]}")
    wait_gone_from_map "$victim"
    wait_balanced "${live[@]}"
    wait_synced_calls "${live[@]}"
    start_replica
    live+=($((${#rep_pid[@]} - 1)))
    wait_balanced "${live[@]}"
    wait_synced_calls "${live[@]}"
    sleep 0.5
    printf '  %s cycle %d/%d done, load %s\n' "$sig" "$c" "$n" "$(cut -d' ' -f1 /proc/loadavg)"
  done
}
cycle TERM "$CYCLES"
load_graceful=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$(now) kills" >>"$events"
cycle KILL "$KILL_CYCLES"
t_end=$(now)
echo "$t_end end" >>"$events"
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
for i in "${live[@]}"; do kill -TERM "${rep_pid[$i]}" 2>/dev/null || true; done
for i in "${live[@]}"; do wait "${rep_pid[$i]}" 2>/dev/null || true; done
$K delete deployments,replicasets -A -l "$selector" --wait=false >/dev/null 2>&1 || true
for i in $(seq "$NS"); do
  $K delete --raw "/api/v1/namespaces/move-$i/pods?gracePeriodSeconds=0" >/dev/null 2>&1 || true
done
delete_leases

echo "load: moves start $load_moves, after the graceful moves $load_graceful, end $load_end"
echo "logs in $work"
# The re-list figures count the objects of the selected namespaces: true when the server filters.
echo "replicas told the API server filters by shardSelector: $(grep -l 'The API server filters lists and watches by shardSelector' "${rep_log[@]}" | wc -l) of ${#rep_log[@]};" \
  "told it ignores it: $(grep -l 'ignores shardSelector' "${rep_log[@]}" | wc -l)"
[ -f "$audit" ] || echo "no audit log at $audit: start the testbed with KCM_TESTBED_AUDIT=lists for the re-list figures"
python3 bench/sharding/move_report.py "$work" "$audit" "${rep_log[@]}"
bench_testbed_down
