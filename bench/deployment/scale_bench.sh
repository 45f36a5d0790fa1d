#!/usr/bin/env bash
# N Deployments × R replicas created at once: our kube-controller-manager vs upstream's, each
# running the deployment and replicaset controllers, one after the other on the same testbed with
# the same client flags. Reports wall time until every Deployment has availableReplicas = R (and
# its Progressing condition NewReplicaSetAvailable) and the controller process's CPU seconds
# (utime+stime from /proc, and each apart: user / system) and peak RSS over that window.
#
# Usage: bench/deployment/scale_bench.sh [build-dir]
# Environment: N (1000), R (10), QPS / BURST (--kube-api-qps/--kube-api-burst for both; 20/30 =
# upstream defaults), NODES (KWOK nodes, 110 pods each; default N*R/100+5), KCM_TESTBED_DIR (state
# dir; a testbed already up there is reused, else one is started and stopped at the end),
# PERF_OUT (a file: record ours with `perf record --call-graph dwarf` over the measured window;
# 499 samples a second of CPU time, or each occurrence of PERF_EVENT if set, e.g.
# PERF_EVENT=syscalls:sys_enter_futex for where the futex calls come from),
# PERF_STAT=1 (count each side's context switches, CPU migrations and page faults over the
# measured window with `perf stat`, threads created during it included, also per pod created,
# N*R), SYSCALL_STAT=1 (with PERF_STAT: its system calls too, all and those of SYSCALLS by name;
# the syscall tracepoints slow every call, so the CPU figures of such a run are not comparable
# with one without), PERF_STAT_EVENTS (more events for PERF_STAT, e.g. uprobes from
# `perf probe -x <binary>`), SIDES ("ours upstream"; one of them to run only that side),
# WATCH_CPU=1 (beside each side's controller, over the same window, bench/informers/watch_cpu: our
# informers for the three kinds and their handler → queue → worker hand-off, without controllers,
# and its client-go twin bench/informers/go/watchcpu: what each watch side alone costs for the
# events that side's rollout makes), WATCH_FLOOR=1 (beside it, the transport under that watch
# side: `watch_cpu --workers=0`, the same informers with handlers that only count (no queue, no
# workers), `watch_cpu --raw=true`, our client reading the same three watch streams and dropping
# each frame undecoded, and three curl processes reading them over HTTP/1.1 and TLS into /dev/null,
# pods as protobuf and the apps kinds as JSON like ours: reads and TLS with no decode, store or
# hand-off; their CPU, context switches and, for curl, the bytes its sockets received).
# Each side's API requests from its start to the end of the window, by method
# (rest_client_requests_total from its /metrics, read just before it stops), follow its CPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
N=${N:-1000}
R=${R:-10}
QPS=${QPS:-20}
BURST=${BURST:-30}
NODES=${NODES:-$((N * R / 100 + 5))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-dep-bench}
# The calls either side makes most (a `perf trace -s` of both at 150 x 10): our client's and Go's
# network I/O, waits and wake-ups, sleeps, memory.
SYSCALLS=${SYSCALLS:-futex recvfrom sendto poll ppoll read write epoll_pwait nanosleep clock_nanosleep sched_yield getpid tgkill rt_sigreturn madvise mmap munmap}
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
  echo "$label: start $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
  # Already there when the testbed is reused (KCM_TESTBED_DIR of an earlier run).
  $K get namespace "$ns" >/dev/null 2>&1 || $K create namespace "$ns" >/dev/null
  "$@" >"$log" 2>&1 &
  local pid=$!
  wait_started "$log"
  # The workers' threads start just after the log line that wait_started sees: perf -p follows
  # the threads created after it attached, but misses one created while it attaches (and all that
  # thread creates later: the pod creates' pool threads), so it would count half of some runs.
  sleep 1
  local c0 t0 t_done="" perf_pid="" stat_pid="" stat_out="$dir/logs/perf-stat-$label.txt"
  if [ "$label" = ours ] && [ -n "${PERF_OUT:-}" ]; then
    local what=(-F 499)
    [ -n "${PERF_EVENT:-}" ] && what=(-e "$PERF_EVENT" -c 1)
    perf record -q "${what[@]}" --call-graph dwarf,16384 -p "$pid" -o "$PERF_OUT" 2>/dev/null &
    perf_pid=$!
  fi
  if [ -n "${PERF_STAT:-}" ]; then
    local events=context-switches,cpu-migrations,page-faults sc
    if [ -n "${SYSCALL_STAT:-}" ]; then
      events+=",raw_syscalls:sys_enter"
      for sc in $SYSCALLS; do events+=",syscalls:sys_enter_$sc"; done
    fi
    [ -n "${PERF_STAT_EVENTS:-}" ] && events+=",$PERF_STAT_EVENTS"
    perf stat -x, -e "$events" -p "$pid" -o "$stat_out" 2>/dev/null &
    stat_pid=$!
  fi
  local watch_pid="" watch_out="$dir/logs/watch-cpu-$label.txt"
  rm -f "$watch_out" "$watch_out".*
  if [ -n "${WATCH_CPU:-}" ]; then
    "$build/bench/informers/watch_cpu" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" \
      >"$watch_out" 2>"$watch_out.err" &
    watch_pid=$!
    "$watch_go" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" >"$watch_out.go" 2>"$watch_out.go.err" &
    watch_pid+=" $!"
    for _ in $(seq 300); do
      grep -q synced "$watch_out.err" && grep -q synced "$watch_out.go.err" && break
      sleep 0.1
    done
  fi
  local floor_pids="" floor_c0=0 floor_b0=0 floor_s0=0 f
  if [ -n "${WATCH_FLOOR:-}" ]; then
    # One resourceVersion for all three (etcd's revision is global), so none replays old objects.
    local rv stream
    rv=$($K get --raw '/api/v1/pods?limit=1' |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
    for stream in "/api/v1/pods|application/vnd.kubernetes.protobuf;stream=watch" \
      "/apis/apps/v1/replicasets|application/json" "/apis/apps/v1/deployments|application/json"; do
      curl -sk -N --http1.1 -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" \
        -H "Accept: ${stream#*|}" -o /dev/null \
        "$KCM_TESTBED_SERVER${stream%%|*}?watch=1&allowWatchBookmarks=true&resourceVersion=$rv" &
      floor_pids+=" $!"
    done
    "$build/bench/informers/watch_cpu" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --raw=true \
      >"$watch_out.raw" 2>"$watch_out.raw.err" &
    watch_pid+=" $!"
    "$build/bench/informers/watch_cpu" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --workers=0 \
      >"$watch_out.noqueue" 2>"$watch_out.noqueue.err" &
    watch_pid+=" $!"
    for _ in $(seq 300); do
      grep -q synced "$watch_out.raw.err" && grep -q synced "$watch_out.noqueue.err" && break
      sleep 0.1
    done
    sleep 1
    for f in $floor_pids; do
      floor_c0=$((floor_c0 + $(cpu_ticks "$f"))) floor_b0=$((floor_b0 + $(read_bytes "$f")))
      floor_s0=$((floor_s0 + $(switches "$f")))
    done
  fi
  local u0 s0 u1 s1
  read -r u0 s0 < <(user_system_ticks "$pid")
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
  local requests
  requests=$(curl -sk -H "Authorization: Bearer $KCM_TESTBED_ADMIN_TOKEN" \
    "https://127.0.0.1:$metrics_port/metrics" 2>/dev/null | awk '
      /^rest_client_requests_total\{/ {
        m = $0; sub(/.*method="/, "", m); sub(/".*/, "", m); n[m] += $NF; all += $NF }
      END { for (k in n) line = line sprintf(" %s %d", k, n[k]); if (all) printf "%d (%s )", all, line }')
  read -r u1 s1 < <(user_system_ticks "$pid")
  local floor_c1=0 floor_b1=0 floor_s1=0
  if [ -n "$floor_pids" ]; then
    for f in $floor_pids; do
      floor_c1=$((floor_c1 + $(cpu_ticks "$f"))) floor_b1=$((floor_b1 + $(read_bytes "$f")))
      floor_s1=$((floor_s1 + $(switches "$f")))
    done
    # shellcheck disable=SC2086 # three pids
    kill -TERM $floor_pids 2>/dev/null || true
    wait $floor_pids || true
  fi
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  if [ -n "$stat_pid" ]; then kill -INT "$stat_pid"; wait "$stat_pid" || true; fi
  if [ -n "$watch_pid" ]; then
    # shellcheck disable=SC2086 # two pids; one may have ended already (it failed to sync)
    kill -TERM $watch_pid 2>/dev/null || true
    wait $watch_pid || true
  fi
  kill -TERM "$pid"; wait "$pid" || true
  printf '%-9s complete %6.1f s   cpu %6.2f s   peak rss %5d MiB\n' "$label" \
    "$(echo "${t_done:-$(now)} - $t0" | bc)" "$(echo "($c1 - $c0) / $tick" | bc -l)" "$((rss / 1024))"
  printf '          user %.2f s   system %.2f s   (system %.0f %%)\n' "$(echo "($u1 - $u0) / $tick" | bc -l)" \
    "$(echo "($s1 - $s0) / $tick" | bc -l)" "$(echo "100 * ($s1 - $s0) / ($u1 - $u0 + $s1 - $s0 + 0.0001)" | bc -l)"
  [ -n "$requests" ] && echo "          API requests $requests"
  if [ -n "$watch_pid" ]; then
    cat "$watch_out" "$watch_out.go" "$watch_out.noqueue" "$watch_out.raw" "$watch_out.err" \
      "$watch_out.go.err" "$watch_out.noqueue.err" "$watch_out.raw.err" 2>/dev/null |
      grep -v ': synced$' | sed 's/^/          beside it: /' || true
  fi
  if [ -n "$floor_pids" ]; then
    printf '          beside it: watch floor (3 x curl, HTTP/1.1 + TLS, no decode) cpu %.2f s, %s bytes, %s context switches\n' \
      "$(echo "($floor_c1 - $floor_c0) / $tick" | bc -l)" "$((floor_b1 - floor_b0))" "$((floor_s1 - floor_s0))"
  fi
  if [ -n "$stat_pid" ]; then
    # Counts that perf could not take (a tracepoint missing) read "<not supported>": left out.
    awk -F, -v pods=$((N * R)) '$1 ~ /^[0-9]+$/ {
        name = $3; sub(/^syscalls:sys_enter_/, "", name); sub(/^raw_syscalls:sys_enter$/, "syscalls (all)", name)
        if (name ~ /context-switches|cpu-migrations|page-faults|syscalls \(all\)|:/) printf "          %s %s (%.1f per pod)\n", name, $1, $1 / pods
        else if ($1 > 0) { n++; names[n] = name; count[n] = $1 }
      }
      END { line = ""
        # Largest first (mawk has no asorti).
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (count[j] > count[i]) {
          t = names[i]; names[i] = names[j]; names[j] = t; t = count[i]; count[i] = count[j]; count[j] = t }
        for (i = 1; i <= n; i++) line = line sprintf(" %s %.1f", names[i], count[i] / pods)
        if (line != "") printf "          per pod:%s\n", line
      }' "$stat_out"
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

# Bytes a process's TCP connections have received (the kernel's count: a TLS stream's encrypted
# bytes; /proc/<pid>/io's rchar leaves out recv()).
read_bytes() {
  ss -tinpH | awk -v pid="pid=$1," 'index($0, pid) { take = 1; next }
    take { for (i = 1; i <= NF; i++) if ($i ~ /^bytes_received:/) { sub(/.*:/, "", $i); b += $i }; take = 0 }
    END { print b + 0 }'
}
# Context switches of a process's main thread, voluntary and not (curl has one thread).
switches() { awk '/ctxt_switches/ {n += $2} END {print n + 0}' "/proc/$1/status"; }
# utime and stime of a process, in clock ticks.
user_system_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

if [ -n "${WATCH_CPU:-}" ]; then
  watch_go="$(cd "$build" && pwd)/bench/informers/watch-cpu-go"
  (cd bench/informers/go && GOFLAGS=-mod=mod go build -o "$watch_go" ./watchcpu)
fi
echo "$N Deployments x $R replicas, --kube-api-qps=$QPS --kube-api-burst=$BURST, $NODES KWOK nodes"
SIDES=${SIDES:-ours upstream}
metrics_port=$(free_port)
[[ " $SIDES " == *" ours "* ]] && run_one ours "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$metrics_port" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"
metrics_port=$(free_port)
[[ " $SIDES " == *" upstream "* ]] && run_one upstream "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
  --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --controllers=deployment,replicaset \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$metrics_port" \
  --kube-api-qps="$QPS" --kube-api-burst="$BURST"

bench_testbed_down
