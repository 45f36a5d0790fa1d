#!/usr/bin/env bash
# Informer benchmark (P2, P6, P8), ours and client-go's side by side against one real
# kube-apiserver: fills a namespace with N pods (our client, QPS lifted, pods no scheduler or
# KWOK node takes), then runs, alternately and each in a fresh process, bench/informers'
# pod_cache_rss (C++) and bench/informers/go (client-go v0.37.2) R times: initial sync seconds,
# RSS, bytes per cached pod, and peak RSS during a relist forced by a 410 on the watch.
#
# Usage: hack/bench-informers.sh [N=10000] [R=3]
# Environment:
#   KCM_TESTBED_DIR_EXISTING  use this running testbed (else one is started and stopped here)
#   KCM_BENCH_BUILD_DIR       CMake build dir (default build-inf; configured if missing)
#   KCM_BENCH_NAMESPACE       namespace for the pods (default bench-informers-<N>)
#   KCM_BENCH_KEEP_PODS=1     leave the pods (a later run with the same N reuses them)
#   KCM_BENCH_GO_FLAGS        extra flags for the Go program (e.g. -strip-managed-fields)
#   KCM_BENCH_GO_WATCHLIST    client-go WatchListClient gate (default false: both sides LIST)
#   KCM_BENCH_OURS_FORMATS    formats our informer reads pods in, each run (default
#                             "protobuf json"); client-go reads its default (protobuf). Every
#                             output line names its format.
#   KCM_BENCH_OURS_FLAGS      extra flags for pod_cache_rss (e.g. --watch-list=1)
#   KCM_BENCH_SERVER_SEND=0   skip timing the server's own send of the LIST (curl)
#   KCM_BENCH_SKIP_CREATE=1   the N pods are there already (a KCM_BENCH_KEEP_PODS=1 run made
#                             them): skip create_pods, whose top-up costs one request per pod
#
# Each round ends with one line `round=i ...`: ours (the first format of the round) against the
# API server's protobuf send of the informers' first request, timed by curl in the same round
# (--http2, gzip as both informers ask for, and identity), and against client-go: the targets
# "initial sync <= 1.2 x the API server's protobuf send time" and "<= 1/2 of client-go's".
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-10000}
runs=${2:-3}
build=${KCM_BENCH_BUILD_DIR:-$repo/build-inf}
# Absolute: the Go program is built from its own directory (below).
mkdir -p "$build"
build=$(cd "$build" && pwd)
ns=${KCM_BENCH_NAMESPACE:-bench-informers-$n}
log() { printf '[bench-informers] %s\n' "$*" >&2; }

# ---- binaries -------------------------------------------------------------------------------
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target pod_cache_rss create_pods >/dev/null
ours=$build/bench/informers/pod_cache_rss
creator=$build/bench/informers/create_pods

# In the build dir, so that checkouts benchmarking at once do not overwrite each other's.
gobin=${KCM_BENCH_GO_BIN:-$build/bench/informers/pod-cache-rss-go}
mkdir -p "$(dirname "$gobin")"
# Only the Go module proxy is needed (and only on the first build).
(cd "$repo/bench/informers/go" && GOFLAGS=-mod=mod go build -o "$gobin" .)

# ---- testbed --------------------------------------------------------------------------------
owned=""
if [ -n "${KCM_TESTBED_DIR_EXISTING:-}" ]; then
  state=$KCM_TESTBED_DIR_EXISTING
else
  state=$(mktemp -d "${TMPDIR:-/tmp}/kcm-bench-informers.XXXXXX")
  owned=$state
  KCM_TESTBED_DIR=$state KCM_TESTBED_NODES=1 KCM_TESTBED_OWNER_PID=$$ "$repo/hack/testbed" up
fi
cleanup() {
  # A testbed of our own is purged below, pods and all: deleting 50,000 pods first would send as
  # many DELETEs and hold the machine for minutes.
  if [ -z "$owned" ] && [ "${KCM_BENCH_KEEP_PODS:-0}" != 1 ] && [ -f "$state/admin.kubeconfig" ]; then
    local kubectl
    kubectl=$(sed -n 's/^KCM_TESTBED_KUBECTL=//p' "$state/testbed.env")
    "$kubectl" --kubeconfig="$state/admin.kubeconfig" -n "$ns" delete pods --all --grace-period=0 \
      --wait=false >/dev/null 2>&1 || true
  fi
  if [ -n "$owned" ]; then KCM_TESTBED_DIR=$owned "$repo/hack/testbed" down --purge >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
kubeconfig=$state/admin.kubeconfig

# ---- setup ----------------------------------------------------------------------------------
if [ "${KCM_BENCH_SKIP_CREATE:-0}" = 1 ]; then
  log "using the pods already in namespace $ns"
else
  log "creating $n pods in namespace $ns"
  "$creator" --kubeconfig="$kubeconfig" --namespace="$ns" --count="$n" --threads=32
fi

# ---- the server's own send ------------------------------------------------------------------
# The informers' first request (RV=0 from the watch cache, limit ignored there), as protobuf, to
# /dev/null: the floor of an initial sync. Credentials from the kubeconfig (the testbed's admin).
server=$(sed -n 's/^ *server: *//p' "$kubeconfig" | head -1)
token=$(sed -n 's/^ *token: *//p' "$kubeconfig" | head -1)
cafile=$state/ca.crt
if [ ! -f "$cafile" ]; then
  cafile=$(mktemp)
  sed -n 's/^ *certificate-authority-data: *//p' "$kubeconfig" | head -1 | base64 -d >"$cafile"
fi
send_time() {  # $1: extra curl flag (--compressed or none)
  # shellcheck disable=SC2086
  curl -s --http2 $1 --cacert "$cafile" -H "Authorization: Bearer $token" \
    -H 'Accept: application/vnd.kubernetes.protobuf' -o /dev/null -w '%{time_total}' \
    "$server/api/v1/namespaces/$ns/pods?limit=500&resourceVersion=0" || echo nan
}
field() { sed -n "s/.*[ ^]$1=\([^ ]*\).*/\1/p" <<<" $2" | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "nan"; else printf "%.2f", a / b }'; }

# ---- runs -----------------------------------------------------------------------------------
log "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= runs; i++)); do
  first=""
  for format in ${KCM_BENCH_OURS_FORMATS:-protobuf json}; do
    case $format in
      protobuf) ct=application/vnd.kubernetes.protobuf ;;
      json) ct=application/json ;;
      *) echo "unknown format $format" >&2; exit 2 ;;
    esac
    # shellcheck disable=SC2086
    out=$("$ours" --kubeconfig="$kubeconfig" --namespace="$ns" --expect="$n" --content-type="$ct" ${KCM_BENCH_OURS_FLAGS:-})
    echo "$out"
    [ -n "$first" ] || first=$out
  done
  # shellcheck disable=SC2086
  goout=$(KUBE_FEATURE_WatchListClient=${KCM_BENCH_GO_WATCHLIST:-false} "$gobin" -kubeconfig="$kubeconfig" -namespace="$ns" -expect="$n" ${KCM_BENCH_GO_FLAGS:-})
  echo "$goout"
  ours_s=$(field sync_s "$first")
  go_s=$(field sync_s "$goout")
  line="round=$i ours_format=$(field format "$first") ours_sync_s=$ours_s client_go_sync_s=$go_s ours_over_client_go=$(ratio "$ours_s" "$go_s")"
  if [ "${KCM_BENCH_SERVER_SEND:-1}" != 0 ]; then
    gz=$(send_time --compressed)
    id=$(send_time "")
    line+=" server_send_gzip_s=$gz server_send_identity_s=$id ours_over_send_gzip=$(ratio "$ours_s" "$gz") ours_over_send_identity=$(ratio "$ours_s" "$id")"
  fi
  echo "$line load=$(cut -d' ' -f1 /proc/loadavg)"
done
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
