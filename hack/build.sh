#!/usr/bin/env bash
# Configures and builds the project. Usage: hack/build.sh [build-dir] [extra cmake args...]
# Environment: KCM_SANITIZE=address|thread builds with sanitizers; KCM_JOBS=N parallel jobs
# (default: all cores); KCM_BUILD_TARGETS="t1 t2" builds only those targets (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kcm-ccache}
# Paths relative to the checkout, so a fresh clone elsewhere (CI) hits the same cache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
cmake -S . -B "$dir" -G Ninja -DKCM_SANITIZE="${KCM_SANITIZE:-}" "$@" >/dev/null
targets=()
for t in ${KCM_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "${KCM_JOBS:-$(nproc)}" "${targets[@]}"
