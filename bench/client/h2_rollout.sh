#!/usr/bin/env bash
# Requests over h2 against HTTP/1.1 on the real API server (docs/design/client-transport.md,
# "Connections: HTTP/1.1 stays"). Builds the checkout's HEAD with bench/client/h2_requests.patch in
# a worktree of its own: the requests multi's handles ask for h2 over TLS (CURL_HTTP_VERSION_2TLS,
# CURLOPT_PIPEWAIT) and CURLMOPT_MAX_HOST_CONNECTIONS caps them at KCM_H2 connections a Transport;
# watches and streamed LISTs stay on HTTP/1.1. Then bench/deployment/scale_bench.sh's rollout of our
# controller manager alone, alternating: the given build (HTTP/1.1), the patched one (h2), ROUNDS
# times, on one testbed. Compare each h2 run's CPU with the HTTP/1.1 runs beside it.
#
# Usage: bench/client/h2_rollout.sh [build-dir]
# Environment: ROUNDS (2), KCM_H2 (h2 connections a Transport, 2), N / R / QPS / BURST (300 / 10 /
# 1000 / 1500), PERF_STAT (as scale_bench.sh), KCM_TESTBED_DIR (default /tmp/kcm-h2-bench; a
# testbed already up there is reused, else one is started and stopped at the end), KCM_H2_SRC (the
# worktree, default $KCM_TESTBED_DIR-src; removed at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
ROUNDS=${ROUNDS:-2}
export KCM_H2=${KCM_H2:-2} N=${N:-300} R=${R:-10} QPS=${QPS:-1000} BURST=${BURST:-1500}
NODES=${NODES:-$((N * R / 100 + 5))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-h2-bench}
export KCM_TESTBED_DIR=$dir
src=${KCM_H2_SRC:-$dir-src}
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh

cleanup() {
  git worktree remove --force "$src" 2>/dev/null || true
  bench_testbed_down
}
trap cleanup EXIT
git worktree add --detach "$src" HEAD >/dev/null
git -C "$src" apply "$PWD/bench/client/h2_requests.patch"
(cd "$src" && KCM_BUILD_TARGETS=kube-controller-manager hack/build.sh build >/dev/null)

bench_testbed_up
for round in $(seq "$ROUNDS"); do
  echo "== round $round: HTTP/1.1 ($build)"
  env -u KCM_H2 SIDES=ours bench/deployment/scale_bench.sh "$build"
  echo "== round $round: h2 on $KCM_H2 connections a Transport ($src/build)"
  SIDES=ours bench/deployment/scale_bench.sh "$src/build"
done
