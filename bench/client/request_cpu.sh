#!/usr/bin/env bash
# The client's CPU per API request, ours beside references, alternating in rounds on one testbed:
#   rest       ours as the controllers use it (RestClient over the Transport);
#   transport  the Transport alone (the same requests, built by the benchmark; `curl` in a
#              request_cpu built while the Transport was libcurl);
#   go-h2      client-go, its default HTTP/2 (bench/client/go);
#   go-http1   client-go with ALPN limited to HTTP/1.1;
#   before-M   mode M of another request_cpu binary, $BEFORE (e.g. one built before a change).
# Each run: K requests (an Event create then a GET of it) from T threads; the figure is the
# process's CPU (user + system) per request. Prints every run, then per mode the median over the
# rounds and its ratio to `rest`, with the load average before and after.
#
# Usage: bench/client/request_cpu.sh [build-dir]   (a testbed must be up: hack/testbed up)
# Environment: ROUNDS (5), COUNT (2000), THREADS (10), MODES (rest transport go-h2 go-http1),
# BEFORE (a request_cpu binary for before-M modes), KCM_TESTBED_DIR (the testbed's state dir,
# default /tmp/kcm-testbed).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-2000}
THREADS=${THREADS:-10}
MODES=${MODES:-rest transport go-h2 go-http1}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-testbed}
kubeconfig=$dir/admin.kubeconfig
[ -f "$kubeconfig" ] || { echo "no testbed at $dir (hack/testbed up)" >&2; exit 1; }
gobin=$dir/request-cpu-go
(cd bench/client/go && GOFLAGS=-mod=mod go build -o "$gobin" .)
load() { sed 's/ [0-9]*\/.*//' /proc/loadavg; }
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "start $(date -u +%FT%TZ) load $(load)"
for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    args=(--kubeconfig="$kubeconfig" --count="$COUNT" --threads="$THREADS")
    case $mode in
      go-h2) line=$("$gobin" "${args[@]/#--/-}") ;;
      go-http1) line=$("$gobin" "${args[@]/#--/-}" -http1) ;;
      before-*) line=$("${BEFORE:?BEFORE=<request_cpu binary>}" "${args[@]}" --transport="${mode#before-}") ;;
      *) line=$("$build/bench/client/request_cpu" "${args[@]}" --transport="$mode") ;;
    esac
    us=$(sed -n 's/.*cpu\/request \([0-9.]*\) us.*/\1/p' <<<"$line")
    echo "round $round $mode: $line load $(load)"
    echo "$mode $us" >>"$results"
  done
done
echo "end $(date -u +%FT%TZ) load $(load)"
median() { grep "^$1 " "$results" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ref=$(median rest)
printf '%-10s %14s %10s   (median of %d rounds; per run: min..max)\n' mode "us/request" "/ rest" "$ROUNDS"
for mode in $MODES; do
  m=$(median "$mode")
  range=$(grep "^$mode " "$results" | awk '{print $2}' | sort -n | sed -n '1p;$p' | paste -sd' ' | sed 's/ /../')
  printf '%-10s %14.1f %10.2f   %s\n' "$mode" "$m" "$(awk -v a="$m" -v b="$ref" 'BEGIN {print a / b}')" "$range"
done
