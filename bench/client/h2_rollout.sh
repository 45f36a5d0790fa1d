#!/usr/bin/env bash
# Requests over h2 against HTTP/1.1 on the real API server (docs/design/client-transport.md,
# "Connections: HTTP/1.1 stays"). Both sides are built from the checkout's HEAD in a worktree of
# its own: first as it is (HTTP/1.1; its binary kept aside), then with bench/client/h2_requests.patch
# (an incremental build of two files), in which the requests multi's handles ask for h2 over TLS
# (CURL_HTTP_VERSION_2TLS, CURLOPT_PIPEWAIT) and CURLMOPT_MAX_HOST_CONNECTIONS caps them at KCM_H2
# connections a Transport; watches and streamed LISTs stay on HTTP/1.1. So the two differ by the
# patch alone, whatever the checkout's own build holds. Then bench/deployment/scale_bench.sh's
# rollout of our controller manager alone, alternating HTTP/1.1 and h2, ROUNDS times, on one
# testbed. Compare each h2 run's CPU with the HTTP/1.1 runs beside it.
#
# Usage: bench/client/h2_rollout.sh
# Environment: ROUNDS (2), KCM_H2 (h2 connections a Transport, 2), N / R / QPS / BURST (300 / 10 /
# 1000 / 1500), PERF_STAT (as scale_bench.sh), KCM_TESTBED_DIR (default /tmp/kcm-h2-bench; a
# testbed already up there is reused, else one is started and stopped at the end), KCM_H2_SRC (the
# worktree, default $KCM_TESTBED_DIR-src; removed at the end).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}
export KCM_H2=${KCM_H2:-2} N=${N:-300} R=${R:-10} QPS=${QPS:-1000} BURST=${BURST:-1500}
NODES=${NODES:-$((N * R / 100 + 5))}
dir=${KCM_TESTBED_DIR:-/tmp/kcm-h2-bench}
export KCM_TESTBED_DIR=$dir
src=${KCM_H2_SRC:-$dir-src}

cleanup() {
  git worktree remove --force "$src" 2>/dev/null || true
  # Defined once the builds are done and the library is sourced.
  if declare -F bench_testbed_down >/dev/null; then bench_testbed_down; fi
}
trap cleanup EXIT
git worktree add --detach "$src" HEAD >/dev/null
build_daemon() { (cd "$src" && KCM_BUILD_TARGETS=kube-controller-manager hack/build.sh build >/dev/null); }
# scale_bench.sh takes a build dir and runs <dir>/cmd/kube-controller-manager/kube-controller-manager.
h1=$src/h1-build
build_daemon
mkdir -p "$h1/cmd/kube-controller-manager"
cp "$src/build/cmd/kube-controller-manager/kube-controller-manager" "$h1/cmd/kube-controller-manager/"
git -C "$src" apply "$PWD/bench/client/h2_requests.patch"
build_daemon

# The h2 build; controller_bench.sh checks that its binary ($ours, unused here) exists.
build=$src/build
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
for round in $(seq "$ROUNDS"); do
  echo "== round $round: HTTP/1.1"
  env -u KCM_H2 SIDES=ours bench/deployment/scale_bench.sh "$h1"
  echo "== round $round: h2 on $KCM_H2 connections a Transport"
  SIDES=ours bench/deployment/scale_bench.sh "$build"
done
