#!/usr/bin/env bash
# Every benchmark figure of docs/benchmarks.md from one command: builds the benchmark targets,
# runs the chosen benchmarks one after the other (each side by side with its reference — upstream
# kube-controller-manager v1.37.2, client-go, or simdjson's DOM parse — in the same run, on the
# same machine), prints ours / reference / ratio for each with the load average, and keeps every
# raw output in the results directory.
#
# Usage: hack/bench.sh [--build DIR] [--out DIR] [BENCH...]
#   BENCH: decode memory informers replicaset deployment writes scale-rss latency, or `all`
#   (default: decode memory replicaset writes — the ones that fit in a few minutes).
# Sizes follow each script's environment (N, R, D, ITER, QPS, BURST); see docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
out=""
benches=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    all) benches=(decode memory informers replicaset deployment writes scale-rss latency); shift ;;
    *) benches+=("$1"); shift ;;
  esac
done
[ ${#benches[@]} -gt 0 ] || benches=(decode memory replicaset writes)
out=${out:-bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

log() { echo "[bench] $*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

targets=(kube-controller-manager)
for b in "${benches[@]}"; do
  case $b in
    decode) targets+=(api_decode_bench) ;;
    memory) targets+=(api_pod_memory) ;;
    informers) targets+=(pod_cache_rss create_pods) ;;
  esac
done
[ -f "$build/build.ninja" ] || hack/build.sh "$build" >/dev/null
cmake --build "$build" --target "${targets[@]}" >/dev/null

# ratio_of <ours> <reference>
ratio_of() { python3 -c "import sys; o,u=map(float,sys.argv[1:]); print(f'{o/u:.2f}' if u else '-')" "$1" "$2"; }

# Each run_<bench> writes its raw output to $out/<bench>.txt and prints its summary rows.
run_decode() {
  "$build/bench/api/api_decode_bench" --benchmark_min_time=2 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true >"$out/decode.txt" 2>&1
  # The benchmark prints its own ratios to simdjson's DOM parse after the table.
  sed -n '/^Same pod/,$p' "$out/decode.txt"
}
run_memory() {
  "$build/bench/api/api_pod_memory" >"$out/memory.txt" 2>&1
  cat "$out/memory.txt"
}
run_informers() {
  hack/bench-informers.sh "${N:-50000}" "${RUNS:-3}" >"$out/informers.txt" 2>&1
  grep -E 'format=|sync_s|bytes_per_pod|relist' "$out/informers.txt" || cat "$out/informers.txt"
}
# The scale benchmarks print one line per side: "<label> <figure> <value> s ...".
scale_rows() {
  python3 - "$1" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(ours|upstream)\s+(.*)$", line.strip())
    if not m:
        continue
    for name, value in re.findall(r"([a-z ]+?)\s+([0-9.]+)\s*(?:s|MiB)?(?=\s{2,}|$)", m.group(2)):
        rows.setdefault(name.strip(), {})[m.group(1)] = float(value)
print(f"{'figure':24} {'ours':>9} {'upstream':>9} {'ratio':>6}")
for name, v in rows.items():
    o, u = v.get("ours"), v.get("upstream")
    if o is None or u is None:
        continue
    print(f"{name:24} {o:9.2f} {u:9.2f} {o / u if u else 0:6.2f}")
PY
}
run_replicaset() {
  N=${N:-3000} QPS=${QPS:-100} BURST=${BURST:-150} bench/replicaset/scale_bench.sh "$build" \
    >"$out/replicaset.txt" 2>&1
  head -1 "$out/replicaset.txt"
  scale_rows "$out/replicaset.txt"
}
run_deployment() {
  N=${N:-1000} R=${R:-10} QPS=${QPS:-1000} BURST=${BURST:-1500} \
    bench/deployment/scale_bench.sh "$build" >"$out/deployment.txt" 2>&1
  head -1 "$out/deployment.txt"
  scale_rows "$out/deployment.txt"
}
run_writes() {
  bench/deployment/write_amplification.sh "$build" >"$out/writes.txt" 2>&1
  sed -n '/^write amplification/,/^logs, metrics/p' "$out/writes.txt"
}
run_scale-rss() {
  bench/daemon/scale_rss.sh "$build" >"$out/scale-rss.txt" 2>&1
  sed -n '/Deployments, .* ReplicaSets, .* pods cached/,$p' "$out/scale-rss.txt"
}
run_latency() {
  bench/replicaset/reaction_latency.sh "$build" >"$out/latency.txt" 2>&1
  sed -n '/^End to end/,$p' "$out/latency.txt"
}

summary=$out/summary.txt
{
  echo "hack/bench.sh ${benches[*]} at $(git rev-parse --short HEAD) on $(nproc) cores, $(date -u +%FT%TZ)"
} >"$summary"
for b in "${benches[@]}"; do
  if ! declare -F "run_$b" >/dev/null; then echo "unknown benchmark: $b" >&2; exit 2; fi
  log "$b (load $(load))"
  {
    echo
    echo "## $b (load before: $(load))"
    if ! "run_$b"; then echo "$b FAILED: see $out/$b.txt"; fi
    echo "(load after: $(load))"
  } | tee -a "$summary"
done
log "summary in $summary"
