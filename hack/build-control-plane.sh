#!/usr/bin/env bash
# Builds the control plane that hack/testbed runs, from the upstream Go modules, into a cache
# outside the repository:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kcm-control-plane/<versions>-<recipe hash>/bin/
#     kube-apiserver kube-scheduler kube-controller-manager kubectl   (k8s.io/kubernetes)
#     etcd etcdctl                                                     (go.etcd.io/etcd)
#     kwok                                                             (sigs.k8s.io/kwok)
#   .../share/kwok.yaml: kwok's Stage config, taken from the pinned kwok module
# Versions are pinned in hack/control-plane-versions.sh. The cache key is the versions plus a
# hash of this script and the versions file, so a changed recipe builds into a new directory;
# a complete cache entry is reused as is (the second run takes well under a second).
#
# Usage: hack/build-control-plane.sh            build if needed; last stdout line = bin dir
#        hack/build-control-plane.sh --bin-dir  print the bin dir; exit 1 if not built yet
# Progress goes to stderr; each component's go output goes to <cache entry>/logs/<name>.log.
# Environment: KCM_CP_BUILD_TIMEOUT (seconds per go build, default 3600),
#              KCM_CP_FETCH_TIMEOUT (seconds per module download, default 600),
#              KCM_CP_JOBS (go build -p, default: number of CPUs, at most 2).
#
# Why etcd is built and not taken from Debian: Debian 12 ships etcd-server/etcd-client 3.4.23,
# and Kubernetes 1.37's API server expects etcd 3.5+/3.6+ features (watch progress requests used
# by consistent reads from cache, etcd's /readyz-style health). The 3.7 series is what upstream
# tests 1.37 against, so we build go.etcd.io/etcd/server/v3 and etcdctl/v3 at one pinned version.
#
# Why a wrapper module for Kubernetes: k8s.io/kubernetes's go.mod replaces its staging modules
# (k8s.io/api, k8s.io/client-go, ...) with local paths, so `go install pkg@version` refuses it.
# We generate a go.mod in the cache that requires k8s.io/kubernetes and replaces each staging
# module with its published v0.<minor>.<patch> twin, then `go build` the commands from there.
# etcd's server and etcdctl modules have the same kind of local replaces, so they get a wrapper
# module too; KWOK gets one for uniformity.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/control-plane-versions.sh
source "$here/control-plane-versions.sh"

log() { printf '[build-control-plane] %s\n' "$*" >&2; }
die() { printf '[build-control-plane] ERROR: %s\n' "$*" >&2; exit 1; }

mode=build
case "${1:-}" in
  "") ;;
  --bin-dir) mode=print ;;
  -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
  *) die "unknown argument '$1' (try --help)" ;;
esac

k8s_ver=$KCM_CP_KUBERNETES_VERSION
etcd_ver=$KCM_CP_ETCD_VERSION
kwok_ver=$KCM_CP_KWOK_VERSION

recipe_hash=$(cat "$0" "$here/control-plane-versions.sh" | sha256sum | cut -c1-12)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/kcm-control-plane
entry=$cache_root/k8s-${k8s_ver}_etcd-${etcd_ver}_kwok-${kwok_ver}_${recipe_hash}
bin=$entry/bin
binaries=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd etcdctl kwok)

complete() {
  [ -f "$entry/complete" ] && [ -f "$entry/share/kwok.yaml" ] || return 1
  local b
  for b in "${binaries[@]}"; do [ -x "$bin/$b" ] || return 1; done
}

if [ "$mode" = print ]; then
  complete || die "control plane not built yet; run hack/build-control-plane.sh"
  echo "$bin"
  exit 0
fi

if complete; then
  log "using cached control plane in $bin"
  echo "$bin"
  exit 0
fi

# --- preconditions -------------------------------------------------------------------------
GO=${GO:-}
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO=$(command -v go)
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
  else die "no Go toolchain found (need Go >= 1.26 as 'go' on PATH or /usr/local/go/bin/go); cannot build kube-apiserver, etcd or kwok"
  fi
fi
command -v "$GO" >/dev/null 2>&1 ||
  die "no Go toolchain at '$GO' (need Go >= 1.26); cannot build kube-apiserver, etcd or kwok"
go_version=$("$GO" env GOVERSION 2>/dev/null) || die "'$GO env GOVERSION' failed; is the Go toolchain at $GO broken?"
log "Go toolchain: $GO ($go_version)"

export GOFLAGS=-buildvcs=false
# Build with the local toolchain; a module that needs a newer Go fails loudly instead of
# downloading a toolchain behind our back (set GOTOOLCHAIN yourself to allow that).
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export CGO_ENABLED=0
jobs=${KCM_CP_JOBS:-$(nproc)}
[ "$jobs" -gt 2 ] && [ -z "${KCM_CP_JOBS:-}" ] && jobs=2
build_timeout=${KCM_CP_BUILD_TIMEOUT:-3600}
fetch_timeout=${KCM_CP_FETCH_TIMEOUT:-600}

mkdir -p "$cache_root"
# One builder at a time per cache root (several checkouts may run hack/test.sh at once).
exec 9>"$cache_root/.lock"
if ! flock -n 9; then
  log "another build holds $cache_root/.lock; waiting (up to ${build_timeout}s)"
  flock -w "$build_timeout" 9 || die "timed out waiting for $cache_root/.lock"
fi
if complete; then
  log "using cached control plane in $bin (built by a concurrent run)"
  echo "$bin"
  exit 0
fi

rm -rf "$entry"
mkdir -p "$entry/src" "$entry/logs" "$bin.tmp"
start_all=$(date +%s)

# run <component> <log> <timeout> <cmd...>: runs a step with its output in the log; on failure
# or timeout, names the component and the log and shows the log's tail.
run() {
  local what=$1 logf=$2 limit=$3 rc=0
  shift 3
  printf '$ %s\n' "$*" >>"$logf"
  # --foreground keeps the step in our process group, so Ctrl-C stops it with the script.
  timeout --foreground --kill-after=30 "$limit" "$@" >>"$logf" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    log "--- last lines of $logf ---"
    tail -n 25 "$logf" >&2 || true
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      die "$what: timed out after ${limit}s (log: $logf)"
    fi
    die "$what: failed with exit code $rc (log: $logf)"
  fi
}

# fetch <component> <module@version> <log>: checks the module proxy answers before a long build,
# so an unreachable proxy is reported within fetch_timeout seconds.
fetch() {
  local what=$1 mod=$2 logf=$3
  log "$what: downloading $mod (log: $logf)"
  run "$what: download of $mod (is the Go module proxy '$("$GO" env GOPROXY)' reachable?)" \
    "$logf" "$fetch_timeout" "$GO" mod download -x "$mod"
}

# build <component> <module dir> <packages...>: go build into bin.tmp with a heartbeat.
build() {
  local what=$1 dir=$2 logf=$entry/logs/$1.log t0
  shift 2
  t0=$(date +%s)
  log "$what: compiling $* (jobs=$jobs, log: $logf) — the first build takes several minutes"
  (cd "$dir" && run "$what" "$logf" "$build_timeout" "$GO" build -mod=mod -p "$jobs" -trimpath \
     -ldflags="-s -w ${ldflags:-}" -o "$bin.tmp/" "$@") &
  local pid=$! rc=0 ticks=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    ticks=$((ticks + 1))
    if [ $((ticks % 30)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
      log "$what: still compiling ($(( $(date +%s) - t0 ))s)"
    fi
  done
  wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || exit "$rc"
  log "$what: done in $(( $(date +%s) - t0 ))s"
}

# --- Kubernetes ------------------------------------------------------------------------------
k8s_log=$entry/logs/kubernetes.log
fetch kubernetes "k8s.io/kubernetes@$k8s_ver" "$k8s_log"
k8s_dir=$(timeout "$fetch_timeout" "$GO" mod download -json "k8s.io/kubernetes@$k8s_ver" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -f "$k8s_dir" ] || die "kubernetes: cannot find the go.mod of k8s.io/kubernetes@$k8s_ver (log: $k8s_log)"
staging_ver=v0.${k8s_ver#v1.}
mkdir -p "$entry/src/kubernetes"
{
  echo "// Generated by hack/build-control-plane.sh: builds k8s.io/kubernetes $k8s_ver commands."
  echo "module kcm.local/control-plane/kubernetes"
  echo
  echo "go 1.26.0"
  echo
  echo "require k8s.io/kubernetes $k8s_ver"
  echo
  echo "replace ("
  # Every `k8s.io/x => ./staging/...` replace of k8s.io/kubernetes becomes `k8s.io/x => k8s.io/x v0.Y.Z`.
  sed -n 's|^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*$|\t\1 => \1 '"$staging_ver"'|p' "$k8s_dir"
  echo ")"
} >"$entry/src/kubernetes/go.mod"
n_staging=$(grep -c '=> k8s.io/' "$entry/src/kubernetes/go.mod" || true)
[ "$n_staging" -gt 10 ] || die "kubernetes: found only $n_staging staging modules in $k8s_dir; the recipe needs updating"
log "kubernetes: wrapper module replaces $n_staging staging modules with $staging_ver"
# Stamp the version the way upstream release builds do, so /version, `kubectl version` and
# version-skew checks see v1.37.x instead of the v0.0.0-master default.
minor=${k8s_ver#v1.}
minor=${minor%%.*}
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_ver -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$k8s_ver"
done
build kubernetes "$entry/src/kubernetes" k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubectl

ldflags=""

# --- etcd ------------------------------------------------------------------------------------
etcd_log=$entry/logs/etcd.log
fetch etcd "go.etcd.io/etcd/server/v3@$etcd_ver" "$etcd_log"
mkdir -p "$entry/src/etcd"
cat >"$entry/src/etcd/go.mod" <<EOF
// Generated by hack/build-control-plane.sh: builds etcd and etcdctl $etcd_ver.
module kcm.local/control-plane/etcd

go 1.26.0

require (
	go.etcd.io/etcd/server/v3 $etcd_ver
	go.etcd.io/etcd/etcdctl/v3 $etcd_ver
)
EOF
build etcd "$entry/src/etcd" go.etcd.io/etcd/server/v3 go.etcd.io/etcd/etcdctl/v3
# The server module's main package is named after the module directory ("v3"/"server").
for cand in v3 server; do
  if [ -x "$bin.tmp/$cand" ] && [ ! -e "$bin.tmp/etcd" ]; then mv "$bin.tmp/$cand" "$bin.tmp/etcd"; fi
done

# --- KWOK ------------------------------------------------------------------------------------
kwok_log=$entry/logs/kwok.log
fetch kwok "sigs.k8s.io/kwok@$kwok_ver" "$kwok_log"
mkdir -p "$entry/src/kwok"
cat >"$entry/src/kwok/go.mod" <<EOF
// Generated by hack/build-control-plane.sh: builds kwok $kwok_ver.
module kcm.local/control-plane/kwok

go 1.26.0

require sigs.k8s.io/kwok $kwok_ver
EOF
build kwok "$entry/src/kwok" sigs.k8s.io/kwok/cmd/kwok
# A standalone kwok has no built-in behaviour: it needs Stage objects in its --config. We take
# the "fast" stages that ship in the pinned module (nodes become Ready at once and heartbeat;
# scheduled pods become Running/Ready; terminating pods are finished and removed) and join them
# into one config file next to the binaries, so the stages always match the kwok version.
kwok_src=$(cd "$entry/src/kwok" && timeout "$fetch_timeout" "$GO" list -m -f '{{.Dir}}' sigs.k8s.io/kwok 2>>"$kwok_log") ||
  die "kwok: cannot locate the sigs.k8s.io/kwok module source (log: $kwok_log)"
mkdir -p "$entry/share.tmp"
{
  echo "# Generated by hack/build-control-plane.sh from sigs.k8s.io/kwok@$kwok_ver kustomize/stage."
  first=1
  for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    [ -f "$kwok_src/kustomize/stage/$f" ] || die "kwok: stage file $f not found in $kwok_src (log: $kwok_log)"
    [ "$first" = 1 ] || echo "---"
    first=0
    cat "$kwok_src/kustomize/stage/$f"
  done
} >"$entry/share.tmp/kwok.yaml"

# --- finish ----------------------------------------------------------------------------------
for b in "${binaries[@]}"; do
  [ -x "$bin.tmp/$b" ] || die "$b missing after the build (logs: $entry/logs/)"
done
timeout 30 "$bin.tmp/etcd" --version >>"$etcd_log" 2>&1 || die "etcd: built binary does not run (log: $etcd_log)"
timeout 30 "$bin.tmp/kube-apiserver" --version >>"$k8s_log" 2>&1 || die "kubernetes: built kube-apiserver does not run (log: $k8s_log)"
rm -rf "$entry/share"
mv "$entry/share.tmp" "$entry/share"
mv "$bin.tmp" "$bin"
elapsed=$(( $(date +%s) - start_all ))
{
  echo "kubernetes=$k8s_ver"
  echo "etcd=$etcd_ver"
  echo "kwok=$kwok_ver"
  echo "go=$go_version"
  echo "jobs=$jobs"
  echo "cold_build_seconds=$elapsed"
  echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$entry/complete"
log "control plane built in ${elapsed}s: $bin"
echo "$bin"
