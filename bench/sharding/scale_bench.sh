#!/usr/bin/env bash
# One replica against three namespace-sharded replicas of our kube-controller-manager, one after
# the other on the same testbed, on a load shaped like clusterloader2's load test
# (clusterloader2/testing/load/config.yaml): NS namespaces holding Deployments of 250, 30 and 5
# replicas, a quarter of the pods in the big ones, a quarter in the medium ones and half in the
# small ones, all created at once. Run "single" is one replica with `--leader-elect=true
# --sharding=none`; run "sharded" is REPLICAS replicas started with the same flags and
# `--sharding=namespace`. Both run the deployment and replicaset controllers with the daemon's
# default --kube-api-qps / --kube-api-burst (20 / 30), the admin kubeconfig (the testbed's
# RBAC-limited user may use only the single leader-election Lease, not the sharding Leases), and
# their own Lease name. Between the runs the workload (Deployments, ReplicaSets, pods: the testbed
# runs no garbage collector) is deleted and the same Deployments are created again in the same
# namespaces, so both runs do the same work.
#
# For each run: time from the create to every Deployment complete (spec.replicas available and
# updated, no extra pods, generation observed, Progressing reason NewReplicaSetAvailable); pods
# created per second (pods / that time, and pods / the time to the last pod's creationTimestamp);
# per replica, CPU seconds (utime + stime from /proc) over that window, peak RSS (VmHWM) and
# threads at its end; the API requests of all replicas over that window, by method (rest_client_requests_total); the time for one fixed small
# Deployment scaled up by SCALE_BY to be complete again with its replica alive. For the sharded run
# also, per replica, controller_sharding_namespaces from its /metrics and the benchmark's namespaces
# and pods it serves (FNV-1a 64 of each namespace name against the ranges of the Lease
# `<name>-shards`' annotation kube-controller-manager-cpp/shard-map), and whether the API server
# filtered its informers (controller_sharding_server_side_filtering), and how many ranges it serves
# (from its log: each a source of its one set of controllers' informers); and two failover
# times, from the signal to a Deployment in one of the victim's namespaces, scaled up by SCALE_BY
# right after the signal, being complete again: kill -9 of the replica serving most of the
# benchmark's namespaces (its ranges wait for its member Lease to expire, 15 s), then, once the map
# no longer names it, SIGTERM of the one serving most of them among the rest (it hands its ranges
# over as it stops). CPU and RSS are read before the failovers. Replicas balance namespaces by
# count, the cluster's other namespaces (kube-system, default, …) included, not by pods: with few
# benchmark namespaces a replica may serve none of them. The table's ratio is sharded / single.
#
# With SAMPLE_S set, a sampler writes one line every SAMPLE_S seconds of each converge window to
# <logs>/<run>.samples and the table prints them: seconds since the create; pods stored (the
# remainingItemCount of a one-item LIST of all pods: the cluster holds no other pods); pods bound
# by kube-scheduler (scheduler_schedule_attempts_total{result="scheduled"} since the window
# began); pods available (the sum of the Deployments' status.availableReplicas at the last
# convergence check, which lists them anyway: at most POLL_S old); CPU seconds since
# the window began of kube-apiserver, etcd, kube-scheduler, KWOK and all replicas; and each one's
# RSS (MiB, now). Which stage falls behind, and which process fills the cores, is what bounds a run
# on this test bed (docs/benchmarks/sharding.md). FAILOVERS=0 skips the two failovers.
#
# Environment: NS (30 namespaces), PODS (3000: total pods; BIG = PODS/1000 Deployments of 250, then
# MEDIUM = the rest / 90 of 30 and SMALL = what is left / 5 of 5: the counts clusterloader2 gives
# one namespace of 3,000 pods; BIG, MEDIUM, SMALL set the counts directly), REPLICAS (3), SCALE_BY
# (5), NODES (KWOK nodes, 110 pods each; default PODS/100+5), RUNS ("single sharded"; one of them to
# run only that one), QPS / BURST (unset: the daemon's defaults, 20 / 30), TIMEOUT_S (1800: longest
# wait for convergence), POLL_S (1: seconds between convergence checks, each a kubectl list of the
# Deployments, ≈ 0.1 s of CPU), KCM_TESTBED_DIR (state dir; a testbed already up there is reused,
# else one is started and stopped at the end), SAMPLE_S (unset: no sampler; see above), FAILOVERS
# (1), CREATE_JOBS (1: kubectl processes creating the Deployments at once; one kubectl adds about
# 6 a second on a loaded test bed, so 16,400 Deployments of a 150,000-pod run take it 45 minutes).
#
# Usage: bench/sharding/scale_bench.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
NS=${NS:-30}
PODS=${PODS:-3000}
BIG=${BIG:-$((PODS / 1000))}
MEDIUM=${MEDIUM:-$(((PODS - 250 * BIG) / 90))}
SMALL=${SMALL:-$(((PODS - 250 * BIG - 30 * MEDIUM) / 5))}
REPLICAS=${REPLICAS:-3}
SCALE_BY=${SCALE_BY:-5}
NODES=${NODES:-$((PODS / 100 + 5))}
RUNS=${RUNS:-single sharded}
TIMEOUT_S=${TIMEOUT_S:-1800}
POLL_S=${POLL_S:-1}
SAMPLE_S=${SAMPLE_S:-0}
FAILOVERS=${FAILOVERS:-1}
CREATE_JOBS=${CREATE_JOBS:-1}
# The verbs rest_client_requests_total counts by (a watch is not counted there).
methods="GET POST PUT PATCH DELETE"
dir=${KCM_TESTBED_DIR:-/tmp/kcm-sharding-bench}
total_pods=$((250 * BIG + 30 * MEDIUM + 5 * SMALL))
selector=bench=sharding-scale
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
# shellcheck source=bench/lib/sharding_bench.sh
source bench/lib/sharding_bench.sh
bench_testbed_up
mkdir -p "$dir/logs"
work=$(mktemp -d "$dir/logs/sharding-scale.XXXXXX")
results=$work/results

# Replicas this script started and has not reaped yet (its only background jobs), stopped by pid
# if it ends early.
cleanup() {
  local p
  for p in $(jobs -p); do kill -TERM "$p" 2>/dev/null || true; done
  for p in $(jobs -p); do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# ---- the workload: namespaces shard-load-1 … shard-load-NS, Deployments spread over them -------
# Largest first, each to the namespace with the fewest pods so far, so namespaces hold about the
# same number of pods. Writes the manifest, split into CREATE_JOBS parts (workload.<k>.yaml: every
# CREATE_JOBS-th Deployment, in the same order), and a listing "<namespace> <name> <replicas>".
python3 - "$NS" "$BIG" "$MEDIUM" "$SMALL" "$work/workload" "$work/workload.txt" "$CREATE_JOBS" <<'PY'
import sys
ns, big, medium, small = map(int, sys.argv[1:5])
jobs = int(sys.argv[7])
pods = [0] * ns
deployments = []
for kind, size, count in (("big", 250, big), ("medium", 30, medium), ("small", 5, small)):
    for i in range(1, count + 1):
        n = min(range(ns), key=lambda k: (pods[k], k))
        pods[n] += size
        deployments.append((f"shard-load-{n + 1}", f"{kind}-{i}", size))
parts = [open(f"{sys.argv[5]}.{k}.yaml", "w") for k in range(jobs)]
with open(sys.argv[6], "w") as t:
    for index, (namespace, name, size) in enumerate(deployments):
        t.write(f"{namespace} {name} {size}\n")
        parts[index % jobs].write(f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}, labels: {{bench: sharding-scale, group: load}}}}
spec:
  replicas: {size}
  selector: {{matchLabels: {{name: {name}}}}}
  template:
    metadata: {{labels: {{name: {name}, bench: sharding-scale, group: load}}}}
    spec: {{containers: [{{name: c, image: fake}}]}}
""")
for part in parts:
    part.close()
PY
deployments=$(wc -l <"$work/workload.txt")
for i in $(seq "$NS"); do
  $K get namespace "shard-load-$i" >/dev/null 2>&1 || $K create namespace "shard-load-$i" >/dev/null
done
# The Deployment whose scale-up both runs time with its replica alive.
read -r probe_ns probe_name < <(awk '!first {first = $1 " " $2} $3 == 5 && !small {small = $1 " " $2}
  END {print small ? small : first}' "$work/workload.txt")

# ---- helpers ----------------------------------------------------------------------------------
# Deployments (of the listing, or the one named) whose rollout is complete; see the header.
complete_filter='$1 == $2 && $1 == $3 && $1 == $4 && $5 == $6 && $7 == "NewReplicaSetAvailable"'
deployment_fields='{.spec.replicas} {.status.availableReplicas} {.status.updatedReplicas} {.status.replicas} {.metadata.generation} {.status.observedGeneration} {.status.conditions[?(@.type=="Progressing")].reason}'
# complete_all [file]: prints how many; with a file, also writes there the sum of the Deployments'
# available replicas (the sampler's, from the same listing). The polls below are bounded in time
# (a stalled API server counts as none complete and leaves the last sum), so TIMEOUT_S still ends
# the wait.
complete_all() {
  $K get --request-timeout=60s deployments -A -l "$selector" \
    -o "jsonpath={range .items[*]}$deployment_fields{\"\\n\"}{end}" \
    2>/dev/null | awk -v out="${1:+$1.tmp}" "$complete_filter {n++} {a += \$2}
      END {print n + 0; if (out != \"\" && NR > 0) print a + 0 >out}"
  # Renamed into place: the sampler reading it at the same moment sees the old sum or the new,
  # never an empty file.
  if [ -n "${1:-}" ] && [ -e "$1.tmp" ]; then mv -f "$1.tmp" "$1"; fi
}
complete_one() {
  $K -n "$1" get --request-timeout=60s deployment "$2" -o "jsonpath=$deployment_fields" 2>/dev/null |
    awk "$complete_filter {ok = 1} END {exit !ok}"
}
# scale_and_wait <ns> <name> [command to run first]: runs the command, scales the Deployment up
# by SCALE_BY and prints the seconds from just before the command until it is complete again.
scale_and_wait() {
  local ns=$1 name=$2 replicas t0
  shift 2
  replicas=$($K -n "$ns" get deployment "$name" -o 'jsonpath={.spec.replicas}')
  t0=$(now)
  if [ $# -gt 0 ]; then "$@"; fi
  $K -n "$ns" scale deployment "$name" --replicas=$((replicas + SCALE_BY)) >/dev/null
  until complete_one "$ns" "$name"; do
    if (($(echo "$(now) - $t0 > 300" | bc))); then
      echo "  $ns/$name not complete after 300 s" >&2
      echo nan
      return
    fi
    sleep 0.2
  done
  printf '%.2f\n' "$(echo "$(now) - $t0" | bc)"
}
# owners <map json> <identity...>: "<replica index> <namespaces> <pods>" for each replica (the
# benchmark's namespaces and pods whose namespace hashes into a range it owns), then
# "<index> <namespace>" lines for each benchmark namespace, by owner. FNV-1a 64 of the name, as
# api::ShardHash and the API server's shardSelector compute it.
owners() {
  python3 - "$1" "$work/workload.txt" "${@:2}" <<'PY'
import json, sys
ranges = json.loads(sys.argv[1])["ranges"]
ids = sys.argv[3:]
pods = {}
for line in open(sys.argv[2]):
    ns, _, size = line.split()
    pods[ns] = pods.get(ns, 0) + int(size)
def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
def owner(ns):
    h = fnv1a64(ns)
    for r in ranges:
        if int(r["start"], 16) <= h < int(r["end"], 16):
            return r.get("owner", "")
    return ""
by = {}
for ns in sorted(pods):
    o = owner(ns)
    by.setdefault(ids.index(o) if o in ids else -1, []).append(ns)
for i in range(len(ids)):
    print("share", i, len(by.get(i, [])), sum(pods[n] for n in by.get(i, [])))
for i, names in sorted(by.items()):
    for n in names:
        print("ns", i, n)
PY
}
# Starts one replica; appends its pid, metrics port, log and identity to the arrays below.
rep_pid=() rep_port=() rep_log=() rep_id=()
start_replica() {
  local label=$1 sharding=$2 port log
  port=$(free_port)
  log="$work/$label.log"
  local flags=()
  [ -n "${QPS:-}" ] && flags+=(--kube-api-qps="$QPS")
  [ -n "${BURST:-}" ] && flags+=(--kube-api-burst="$BURST")
  "$ours" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=deployment,replicaset \
    --leader-elect=true --leader-elect-resource-name="$lease" --sharding="$sharding" \
    --bind-address=127.0.0.1 --secure-port="$port" "${flags[@]}" >"$log" 2>&1 &
  rep_pid+=($!) rep_port+=("$port") rep_log+=("$log")
}
# Each replica's identity, from its log line "Sharding by namespace" identity="<identity>".
read_identities() {
  local i
  rep_id=()
  for i in "${!rep_log[@]}"; do rep_id+=("$(replica_identity "${rep_log[$i]}")"); done
}
# Deletes the workload and waits (≤ 5 min) until no pod of it is left.
delete_workload() {
  local i
  $K delete deployments,replicasets -A -l "$selector" --wait=false >/dev/null 2>&1 || true
  for i in $(seq "$NS"); do
    $K delete --raw "/api/v1/namespaces/shard-load-$i/pods?gracePeriodSeconds=0&labelSelector=$selector" \
      >/dev/null 2>&1 || true
  done
  for i in $(seq 600); do
    [ "$($K get pods -A -l "$selector" --no-headers 2>/dev/null | wc -l)" = 0 ] && return 0
    if ((i % 40 == 0)); then
      for j in $(seq "$NS"); do
        $K delete --raw "/api/v1/namespaces/shard-load-$j/pods?gracePeriodSeconds=0&labelSelector=$selector" \
          >/dev/null 2>&1 || true
      done
    fi
    sleep 0.5
  done
}
# sample <run> <t0>: the sampler (see the header), until killed.
sample() {
  local run=$1 t0=$2 c pid line stored scheduled available s0
  local components=(kube-apiserver etcd kube-scheduler kwok) pids=() c0=()
  for c in "${components[@]}"; do pids+=("$(cut -d' ' -f1 "$dir/pids/$c")"); done
  pids+=("${rep_pid[@]}")
  for pid in "${pids[@]}"; do c0+=("$(cpu_ticks "$pid" 2>/dev/null || echo 0)"); done
  s0=$(metric "$KCM_TESTBED_SCHEDULER_PORT" scheduler_schedule_attempts_total 'result="scheduled"')
  {
    printf 's stored bound available'
    printf ' cpu_s:%s' "${components[@]}" replicas
    printf ' rss_mib:%s' "${components[@]}" replicas
    echo
  } >"$work/$run.samples"
  while :; do
    sleep "$SAMPLE_S"
    stored=$($K get --request-timeout=30s --raw '/api/v1/pods?limit=1' 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["items"]) + int(d["metadata"].get("remainingItemCount", 0)))' 2>/dev/null || echo -)
    scheduled=$(metric "$KCM_TESTBED_SCHEDULER_PORT" scheduler_schedule_attempts_total 'result="scheduled"')
    available=$(cat "$work/$run.available" 2>/dev/null || echo -)
    line="$(printf '%.0f' "$(echo "$(now) - $t0" | bc)") $stored $((${scheduled:-0} - ${s0:-0})) $available"
    # Ticks and KiB per process, then seconds and MiB with the replicas summed.
    local ticks=() kib=() i
    for i in "${!pids[@]}"; do
      ticks+=("$(($(cpu_ticks "${pids[$i]}" 2>/dev/null || echo "${c0[$i]}") - c0[i]))")
      kib+=("$(awk '/VmRSS/ {print $2}' "/proc/${pids[$i]}/status" 2>/dev/null || echo 0)")
    done
    echo "$line $(echo "${ticks[*]}" | awk -v n=${#components[@]} -v hz="$tick" '{
        for (i = 1; i <= n; i++) printf "%.1f ", $i / hz
        for (i = n + 1; i <= NF; i++) r += $i; printf "%.1f", r / hz }') $(echo "${kib[*]}" |
      awk -v n=${#components[@]} '{
        for (i = 1; i <= n; i++) printf "%d ", $i / 1024
        for (i = n + 1; i <= NF; i++) r += $i; printf "%d", r / 1024 }')" >>"$work/$run.samples"
  done
}
# Creates the workload, waits for every Deployment to be complete and records the run's figures
# as "<run>.<key> <value>" lines in $results.
converge() {
  local run=$1 c0=() t0 t_done="" i c1 rss r last m
  local -A req0=() requests=()
  for i in "${!rep_pid[@]}"; do
    c0+=("$(cpu_ticks "${rep_pid[$i]}")")
    for m in $methods; do
      r=$(metric "${rep_port[$i]}" rest_client_requests_total "method=\"$m\"")
      req0[$i.$m]=${r:-0}
    done
  done
  t0=$(now)
  local sampler=""
  if [ "$SAMPLE_S" != 0 ]; then
    sample "$run" "$t0" &
    sampler=$!
  fi
  # One kubectl per part, at once (each creates its Deployments one after another).
  local creators=() k
  for ((k = 0; k < CREATE_JOBS; k++)); do
    [ -s "$work/workload.$k.yaml" ] || continue # more jobs than Deployments
    $K create -f "$work/workload.$k.yaml" >/dev/null &
    creators+=($!)
  done
  for k in "${creators[@]}"; do wait "$k"; done
  while :; do
    if [ "$(complete_all "$work/$run.available")" = "$deployments" ]; then t_done=$(now); break; fi
    if (($(echo "$(now) - $t0 > $TIMEOUT_S" | bc))); then
      echo "  $run: timed out at $(complete_all) of $deployments Deployments complete" >&2
      t_done=$(now)
      break
    fi
    sleep "$POLL_S"
  done
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
  fi
  for i in "${!rep_pid[@]}"; do
    c1=$(cpu_ticks "${rep_pid[$i]}") rss=$(rss_kb "${rep_pid[$i]}")
    echo "$run.cpu.$i $(echo "($c1 - ${c0[$i]}) / $tick" | bc -l)" >>"$results"
    echo "$run.rss.$i $((rss / 1024))" >>"$results"
    echo "$run.threads.$i $(awk '/^Threads/ {print $2}' "/proc/${rep_pid[$i]}/status")" >>"$results"
    # Over the window only, by method: which kind of request a sharded run sends more of.
    for m in $methods; do
      r=$(metric "${rep_port[$i]}" rest_client_requests_total "method=\"$m\"")
      requests[$m]=$((${requests[$m]:-0} + ${r:-0} - ${req0[$i.$m]}))
    done
    # The ranges a replica serves: each a source of its controllers' informers (ServedRanges).
    if [ "$run" = sharded ]; then
      echo "$run.stacks.$i $(awk '/\] "Serving shard ranges" / {n++}
        /\] "Stopping shard ranges" / {n--} END {print n + 0}' "${rep_log[$i]}")" >>"$results"
    fi
  done
  last=$($K get pods -A -l "$selector" -o 'jsonpath={range .items[*]}{.metadata.creationTimestamp}{"\n"}{end}' |
    sort | tail -1)
  {
    echo "$run.converge $(echo "$t_done - $t0" | bc)"
    echo "$run.pods $($K get pods -A -l "$selector" --no-headers | wc -l)"
    echo "$run.last_create $(($(date -d "$last" +%s) - ${t0%.*}))"
    for m in $methods; do echo "$run.requests.$m ${requests[$m]}"; done
  } >>"$results"
  # The window move_report.py counts the moves of (the map follows the work as the pods appear).
  printf '%s moves\n%s end\n' "$t0" "$t_done" >"$work/events"
}

# ---- the runs ---------------------------------------------------------------------------------
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "sharding scale: $NS namespaces, $deployments Deployments ($BIG x 250, $MEDIUM x 30," \
  "$SMALL x 5 = $total_pods pods), $NODES KWOK nodes," \
  "--kube-api-qps=${QPS:-default} --kube-api-burst=${BURST:-default}"
echo "load at start $load_start"
: >"$results"
delete_workload

if [[ " $RUNS " == *" single "* ]]; then
  lease=scale-bench-single
  rep_pid=() rep_port=() rep_log=()
  echo "single: start $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
  start_replica single none
  wait_started "${rep_log[0]}"
  sleep 1
  converge single
  echo "single.alive_scale $(scale_and_wait "$probe_ns" "$probe_name")" >>"$results"
  kill -TERM "${rep_pid[0]}"; wait "${rep_pid[0]}" || true
  delete_workload
fi

if [[ " $RUNS " == *" sharded "* ]]; then
  lease=scale-bench-sharded
  rep_pid=() rep_port=() rep_log=()
  echo "sharded: start $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for i in $(seq "$REPLICAS"); do start_replica "sharded-$i" namespace; done
  read_identities
  live=()
  for i in "${!rep_pid[@]}"; do live+=("$i"); done
  wait_balanced "${live[@]}"
  sleep 1
  converge sharded
  # The ranges moved while converging: how long each moved namespace went unserved, by the same
  # report as move_bench.sh's (its re-list part needs an audit log, not taken here). Read now,
  # before the failovers: a call still running has no successor yet to be paired with.
  for i in $(seq "$NS"); do echo "shard-load-$i"; done >"$work/namespaces"
  : >"$work/objects"
  python3 bench/sharding/move_report.py "$work" "$work/no-audit-log" "${rep_log[@]}" >"$work/moves"
  map=$(shard_map)
  for i in "${!rep_pid[@]}"; do
    echo "sharded.namespaces.$i $(metric "${rep_port[$i]}" controller_sharding_namespaces)" >>"$results"
    echo "sharded.filtering.$i $(metric "${rep_port[$i]}" controller_sharding_server_side_filtering)" \
      >>"$results"
  done
  owners "$map" "${rep_id[@]}" | awk '$1 == "share" {
    print "sharded.load_namespaces." $2, $3; print "sharded.load_pods." $2, $4 }' >>"$results"
  echo "sharded.alive_scale $(scale_and_wait "$probe_ns" "$probe_name")" >>"$results"

  # failover <signal> <live replica...>: kills the live replica that serves most of the benchmark's
  # namespaces with the signal, times a scale-up in one of them and takes it off `live`.
  failover() {
    local sig=$1 victim ns name
    shift
    victim=$(owners "$(shard_map)" "${rep_id[@]}" | awk -v live=" $* " '$1 == "share" &&
      index(live, " " $2 " ") && (best == "" || $3 > most) {best = $2; most = $3} END {print best}')
    ns=$(owners "$(shard_map)" "${rep_id[@]}" |
      awk -v v="$victim" '$1 == "ns" && $2 == v && !ns {ns = $3} END {print ns}')
    if [ -z "$ns" ]; then
      echo "  replica $victim serves none of the benchmark's namespaces" >&2
      echo "sharded.failover_$sig nan" >>"$results"
      return
    fi
    # A small Deployment there (each namespace has one unless SMALL < NS), else any.
    name=$(awk -v n="$ns" '$1 == n && (!best || $3 < size) {best = $2; size = $3} END {print best}' \
      "$work/workload.txt")
    echo "  $sig replica $victim (${rep_id[$victim]}), scale $ns/$name by $SCALE_BY"
    echo "sharded.failover_$sig $(scale_and_wait "$ns" "$name" kill "-$sig" "${rep_pid[$victim]}")" >>"$results"
    wait "${rep_pid[$victim]}" 2>/dev/null || true
    echo "sharded.failover_${sig}_ns replica $victim, $ns/$name" >>"$results"
    local rest=() i
    for i in "${live[@]}"; do [ "$i" = "$victim" ] || rest+=("$i"); done
    live=("${rest[@]}")
    wait_gone_from_map "$victim"
  }
  if [ "$FAILOVERS" = 1 ] && [ "$REPLICAS" -ge 2 ]; then
    failover KILL "${live[@]}"
    if [ "$REPLICAS" -ge 3 ]; then
      wait_balanced "${live[@]}"
      failover TERM "${live[@]}"
    fi
  fi
  for i in "${!rep_pid[@]}"; do kill -TERM "${rep_pid[$i]}" 2>/dev/null || true; done
  for i in "${!rep_pid[@]}"; do wait "${rep_pid[$i]}" 2>/dev/null || true; done
  delete_workload
fi
$K -n kube-system delete lease scale-bench-single scale-bench-sharded scale-bench-sharded-shards \
  --ignore-not-found >/dev/null 2>&1 || true

# ---- the table --------------------------------------------------------------------------------
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "logs in $work"
for run in single sharded; do
  if [ -s "$work/$run.samples" ]; then
    echo "$run: samples every $SAMPLE_S s"
    column -t "$work/$run.samples"
  fi
done
if [ -s "$work/moves" ]; then
  echo "sharded: namespaces moved while converging"
  cat "$work/moves"
fi
python3 - "$results" "$REPLICAS" "$total_pods" <<'PY'
import sys
values = {}
for line in open(sys.argv[1]):
    key, _, value = line.strip().partition(" ")
    values[key] = value
replicas, total_pods = int(sys.argv[2]), int(sys.argv[3])
def num(key):
    try:
        return float(values[key])
    except (KeyError, ValueError):
        return None
def per(run, what):
    return [num(f"{run}.{what}.{i}") for i in range(replicas if run == "sharded" else 1)]
def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"
def ratio(a, b):
    return "-" if a is None or b is None or a == 0 else f"{b / a:.2f}"
rows = []
def row(name, a, b, shown_a=None, shown_b=None, digits=1):
    rows.append((name, shown_a if shown_a is not None else fmt(a, digits),
                 shown_b if shown_b is not None else fmt(b, digits), ratio(a, b)))
def listed(vs, digits=1):
    return " / ".join(fmt(v, digits) for v in vs) if any(v is not None for v in vs) else "-"
def total(vs):
    vs = [v for v in vs if v is not None]
    return sum(vs) if vs else None
def peak(vs):
    vs = [v for v in vs if v is not None]
    return max(vs) if vs else None
rate = {}
window = {}
for run in ("single", "sharded"):
    t, pods, last = num(f"{run}.converge"), num(f"{run}.pods"), num(f"{run}.last_create")
    rate[run] = pods / t if t and pods is not None else None
    window[run] = pods / last if last and pods is not None else None
row("time to converge (s)", num("single.converge"), num("sharded.converge"))
row("pods created", num("single.pods"), num("sharded.pods"), digits=0)
row("pod creations / s (pods / time to converge)", rate["single"], rate["sharded"])
row("pod creations / s (to last pod created)", window["single"], window["sharded"])
cs, cd = per("single", "cpu"), per("sharded", "cpu")
row("CPU s over the window, all replicas", total(cs), total(cd), digits=2)
row("CPU s, per replica (ratio: busiest)", peak(cs), peak(cd), listed(cs, 2), listed(cd, 2), 2)
rs, rd = per("single", "rss"), per("sharded", "rss")
row("peak RSS MiB, per replica (ratio: largest)", peak(rs), peak(rd), listed(rs, 0), listed(rd, 0), 0)
row("peak RSS MiB, all replicas", total(rs), total(rd), digits=0)
ts, td = per("single", "threads"), per("sharded", "threads")
row("threads per replica at convergence (ratio: most)", peak(ts), peak(td), listed(ts, 0),
    listed(td, 0), 0)
methods = ("GET", "POST", "PUT", "PATCH", "DELETE")
def requests(run, methods):
    return total([num(f"{run}.requests.{m}") for m in methods])
row("API requests over the window, all replicas", requests("single", methods),
    requests("sharded", methods), digits=0)
for m in methods:
    row(f"  of which {m}", requests("single", [m]), requests("sharded", [m]), digits=0)
row("namespaces served (controller_sharding_namespaces)", None, None, "all",
    listed(per("sharded", "namespaces"), 0))
row("ranges served (a source of the informers each)", None, None, "-",
    listed(per("sharded", "stacks"), 0))
row("server-side filtering (controller_sharding_server_side_filtering)", None, None, "-",
    listed(per("sharded", "filtering"), 0))
row("benchmark namespaces served, by the shard map", None, None, "all",
    listed(per("sharded", "load_namespaces"), 0))
row("benchmark pods served, by the shard map", None, None, f"{total_pods:,}",
    listed(per("sharded", "load_pods"), 0))
row(f"scale-up of one Deployment, replica alive (s)", num("single.alive_scale"),
    num("sharded.alive_scale"), digits=2)
row("failover, kill -9 -> scaled Deployment complete (s)", None, num("sharded.failover_KILL"),
    "-", digits=2)
row("failover, SIGTERM -> scaled Deployment complete (s)", None, num("sharded.failover_TERM"),
    "-", digits=2)
width = max(len(r[0]) for r in rows)
wa = max(len(r[1]) for r in rows + [("", "1 replica", "", "")])
wb = max(len(r[2]) for r in rows + [("", "", f"{replicas} sharded", "")])
print(f"ratio = {replicas} sharded / 1 replica; per-replica figures of the sharded run before the failovers")
print(f"{'metric':{width}}  {'1 replica':>{wa}}  {f'{replicas} sharded':>{wb}}  ratio")
for name, a, b, r in rows:
    print(f"{name:{width}}  {a:>{wa}}  {b:>{wb}}  {r:>5}")
for sig in ("KILL", "TERM"):
    if f"sharded.failover_{sig}_ns" in values:
        print(f"failover {sig}: {values[f'sharded.failover_{sig}_ns']} scaled")
PY
bench_testbed_down
