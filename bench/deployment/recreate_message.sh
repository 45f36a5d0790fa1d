#!/usr/bin/env bash
# The Progressing message after Recreate rollouts: one Deployment of REPLICAS (3), strategy
# Recreate, ROUNDS (20) image changes, `kubectl rollout status` after each; a round is "stale" when
# the Progressing condition's message does not name the new ReplicaSet (it kept the old one's
# "has successfully progressed"). Runs ours or upstream's controller manager (controllers
# deployment,replicaset) on a testbed.
# Usage: bench/deployment/recreate_message.sh <ours|upstream> [build-dir]
# Environment: ROUNDS (20), REPLICAS (3), NODES (3), KCM_TESTBED_DIR (default
# /tmp/kcm-recreate-bench; reused when up, else started and stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:?usage: $0 <ours|upstream> [build-dir]}
build=${2:-build}
ROUNDS=${ROUNDS:-20}
REPLICAS=${REPLICAS:-3}
NODES=${NODES:-3}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-recreate-bench}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
ns=recreate-$mode-$$
k="$K -n $ns"
$K create namespace "$ns" >/dev/null
port=$(free_port)
log=$(mktemp)
if [ "$mode" = ours ]; then
  "$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --bind-address=127.0.0.1 \
    --secure-port="$port" --leader-elect=false --controllers=deployment,replicaset >"$log" 2>&1 &
else
  "$upstream" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authentication-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" \
    --authorization-kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" --bind-address=127.0.0.1 \
    --secure-port="$port" --leader-elect=false --controllers=deployment,replicaset >"$log" 2>&1 &
fi
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; bench_testbed_down' EXIT
$k create deployment web --image=img:0 --replicas="$REPLICAS" >/dev/null
$k patch deployment web -p '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}' >/dev/null
$k rollout status deployment/web --timeout=120s >/dev/null
stale=0
for i in $(seq "$ROUNDS"); do
  $k set image deployment/web img="img:$i" >/dev/null
  $k rollout status deployment/web --timeout=120s >/dev/null
  sleep 0.5  # the status write after the last pod turned available
  new_rs=$($k get rs -o json | python3 -c "
import json, sys
print(next(r['metadata']['name'] for r in json.load(sys.stdin)['items']
           if r['spec']['template']['spec']['containers'][0]['image'] == 'img:$i'))")
  msg=$($k get deployment web -o jsonpath='{.status.conditions[?(@.type=="Progressing")].message}')
  case "$msg" in
    *"\"$new_rs\""*) ;;
    *) stale=$((stale + 1)); echo "round $i: new ReplicaSet $new_rs, Progressing: $msg" ;;
  esac
done
echo "$mode: $stale of $ROUNDS Recreate rounds ended with a stale Progressing message (namespace $ns, log $log)"
