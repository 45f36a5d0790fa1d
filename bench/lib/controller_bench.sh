# Shared by the controller scale benchmarks (bench/replicaset, bench/deployment); source it from
# the repository root after setting `build`, `dir` (testbed state dir) and `NODES`.
# Provides: $ours, $upstream, $K (kubectl as admin), $tick, bench_testbed_up, bench_testbed_down,
# free_port, cpu_ticks <pid>, rss_kb <pid> (peak), now, wait_started <log>, wait_synced <log>,
# wait_idle <pid> (sets $idle_ticks), delete_rs_and_pods <ns> <rs>.

ours="$build/cmd/kube-controller-manager/kube-controller-manager"
[ -x "$ours" ] || { echo "build $ours first" >&2; exit 1; }

bench_started_testbed=0
# Reuses a testbed already up in $dir, else starts one with $NODES KWOK nodes.
bench_testbed_up() {
  if [ ! -f "$dir/testbed.env" ] || ! KCM_TESTBED_DIR=$dir hack/testbed status >/dev/null 2>&1; then
    KCM_TESTBED_NODES=$NODES KCM_TESTBED_DIR=$dir hack/testbed up >/dev/null
    bench_started_testbed=1
  fi
  # shellcheck disable=SC1091
  source "$dir/testbed.env"
  K="$KCM_TESTBED_KUBECTL --kubeconfig=$KCM_TESTBED_ADMIN_KUBECONFIG"
  upstream="$KCM_TESTBED_BIN_DIR/kube-controller-manager"
  tick=$(getconf CLK_TCK)
}
# Stops the testbed only if bench_testbed_up started it.
bench_testbed_down() {
  if [ "$bench_started_testbed" = 1 ]; then KCM_TESTBED_DIR=$dir hack/testbed down >/dev/null; fi
}

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }
# Waits (≤ 60 s) until a controller manager's log shows its workers started: ours logs
# "Starting workers", upstream "Caches are synced" once its informers have synced.
wait_started() {
  for _ in $(seq 600); do
    grep -qE 'Starting workers|Caches are synced' "$1" && break
    sleep 0.1
  done
}
# Waits (≤ 5 min) until a controller manager's log shows "Caches are synced" (ours logs it once,
# upstream once per informer group).
wait_synced() {
  for _ in $(seq 3000); do
    grep -qE 'Caches are synced' "$1" && break
    sleep 0.1
  done
}
# Waits until process <pid> is idle: under 2 % of a core for 10 s in a row (at most 10 minutes).
# Sets idle_ticks to its CPU time then, in clock ticks ($tick per second).
wait_idle() {
  local quiet=0 prev cur
  prev=$(cpu_ticks "$1")
  cur=$prev
  for _ in $(seq 600); do
    sleep 1
    cur=$(cpu_ticks "$1")
    if (((cur - prev) * 100 < 2 * tick)); then quiet=$((quiet + 1)); else quiet=0; fi
    prev=$cur
    [ "$quiet" -ge 10 ] && break
  done
  idle_ticks=$cur
}
# Deletes ReplicaSet <rs> in <ns> and all pods there at once, then waits (≤ 5 min) until they are
# gone: no namespace or garbage collector runs on the testbed, and the next run needs empty nodes.
delete_rs_and_pods() {
  $K -n "$1" delete rs "$2" --wait=false >/dev/null
  $K delete --raw "/api/v1/namespaces/$1/pods?gracePeriodSeconds=0" >/dev/null
  for _ in $(seq 600); do
    [ "$($K -n "$1" get pods --no-headers 2>/dev/null | wc -l)" = 0 ] && break
    sleep 0.5
  done
}
