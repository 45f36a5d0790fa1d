#!/usr/bin/env bash
# How much of each controller manager's log is in klog's structured form, ours and upstream's on
# the same steps in one run: start it with --v=4 and the same flags, apply
# hack/sample-deployment.yaml in a namespace of its own, wait for `kubectl rollout status`, let it
# settle 3 s, stop it with SIGTERM, and count its lines with hack/count-structured-log.py
# (upstream's startup `FLAG: --x="y"` dump, a line per flag, also counted apart).
#
# Usage: bench/daemon/structured_log.sh [build-dir]
# Environment: KCM_TESTBED_DIR (default /tmp/kcm-structured-log; a testbed already up there is
# reused), KCM_STRUCTURED_LOG_FORMAT=json to run both with --logging-format=json.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
NODES=1
dir=${KCM_TESTBED_DIR:-/tmp/kcm-structured-log}
format=${KCM_STRUCTURED_LOG_FORMAT:-text}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
trap bench_testbed_down EXIT
out="$dir/logs"
mkdir -p "$out"

# run_one NAME BINARY LEASE: one start, rollout and stop; prints its log's path.
run_one() {
  local name=$1 binary=$2 lease=$3 ns log pid
  ns="structured-log-$name-$(date +%s%N | tail -c 7)"
  log="$out/structured-log-$name.log"
  : >"$log"
  "$binary" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --bind-address=127.0.0.1 --secure-port="$(free_port)" \
    --controllers=deployment,replicaset --leader-elect-resource-name="$lease" \
    --logging-format="$format" --v=4 >"$log" 2>&1 &
  pid=$!
  wait_started "$log"
  sed "s/kcm-demo/$ns/" hack/sample-deployment.yaml | $K apply -f - >/dev/null
  $K -n "$ns" rollout status deployment/hello --timeout=120s >/dev/null
  sleep 3
  kill -TERM "$pid"
  wait "$pid" || true
  echo "$log"
}

count() { python3 hack/count-structured-log.py "$1" | tail -1; }
flag_lines() { grep -cE '^I[0-9]{4} [0-9:.]+ +[0-9]+ flags.go:[0-9]+\] FLAG: ' "$1" || true; }

ours_log=$(run_one ours "$ours" kube-controller-manager-cpp-structured-log)
upstream_log=$(run_one upstream "$upstream" kube-controller-manager-structured-log)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  format: $format  (--v=4, sample Deployment rolled out, then SIGTERM)"
echo "ours:     $(count "$ours_log")  log: $ours_log"
echo "upstream: $(count "$upstream_log")  of which FLAG: lines $(flag_lines "$upstream_log")  log: $upstream_log"
echo "unstructured lines of ours (hack/count-structured-log.py --list):"
python3 hack/count-structured-log.py "$ours_log" --list | sed -n '2,$p' | head -20
