#!/usr/bin/env bash
# Runs upstream's own sig-apps Deployment and ReplicaSet e2e cases (k8s.io/kubernetes at the
# version pinned in hack/control-plane-versions.sh, unchanged) against our controller manager on
# a hack/testbed control plane, and prints a pass/fail/skip summary. Exit code 0 only if no case
# failed. Not part of the default test run: ctest label `conformance` (ctest -L conformance).
#
# Usage: hack/e2e-upstream.sh [--controller-manager=ours|upstream] [--build-only]
#   ours (default): upstream's kube-controller-manager runs every controller except deployment
#     and replicaset (garbage collector, namespace deletion, ...); ours runs beside it and owns
#     Deployments and ReplicaSets.
#   upstream: upstream's kube-controller-manager runs every controller and ours is not started;
#     the reference run for "ours passes what upstream passes".
#   KCM_E2E_SHARDED_REPLICAS=N (with ours): N replicas of ours with --sharding=namespace in one
#     lease group (kube-controller-manager-cpp) divide the namespaces, so each case's namespace
#     is served by one of them (pkg/sharding/shard_manager.h); the test bed user gets the Lease
#     and namespace rights sharding needs on top of deploy/rbac.yaml.
#   --build-only: build (or find cached) the e2e test binary, print its path, exit.
#
# The test binary: a generated Go module in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/kcm-e2e-upstream/<k8s version>-<recipe hash>/
# requires k8s.io/kubernetes and replaces its staging modules with their published v0.X.Y twins
# (as hack/build-control-plane.sh does), and `go test -c` builds our small test main
# (test/e2e/upstream/suite/apps_e2e_test.go), which imports only k8s.io/kubernetes/test/e2e/apps
# and the e2e framework, into apps.test there. A complete entry is reused as is.
#
# Cases skipped, and why (the other 17 matching `[sig-apps] (Deployment|ReplicaSet) ` run; they
# only need the API server and the controllers):
#   - ReplicaSet "should serve a basic image on each replica with a public image" and "... with a
#     private image" [Provider:gce]: they send HTTP requests to each pod through the API server's
#     pod proxy (e2epod.ProxyResponseChecker); KWOK pods have no container and no network behind
#     their fake IPs. The private one also needs GCE's registry.
#   - Deployment "should not disrupt a cloud load-balancer's connectivity during rollout"
#     [Provider:aws,azure,gce]: needs a cloud LoadBalancer Service and real pod networking.
# Pods whose image the cases expect to fail to pull (webserver:404 in "proportional scaling",
# gcr.io/google_samples/gb-redisslave:nonexistent in "rollover") must never become Ready, or
# "proportional scaling" fails even under upstream's controllers: the test bed gets
# KCM_TESTBED_KWOK_UNREADY_IMAGES, which keeps them out of KWOK's pod-ready stage (hack/testbed).
#
# Environment:
#   KCM_TESTBED_DIR      test bed state dir (default /tmp/kcm-testbed-e2e-upstream)
#   KCM_E2E_OUR_KCM      our daemon (default build/cmd/kube-controller-manager/kube-controller-manager,
#                        built with hack/build.sh if missing)
#   KCM_E2E_JOBS         go test -c -p (default 2); the build runs under nice -n 19
#   KCM_E2E_FOCUS        ginkgo focus (default: `\[sig-apps\] (Deployment|ReplicaSet) `)
#   KCM_E2E_SKIP         extra ginkgo skip regex, OR-ed with the built-in skips
#   KCM_E2E_TIMEOUT      ginkgo suite timeout (default 90m)
#   KCM_E2E_REPORT_DIR   ginkgo JSON report and e2e.log (default ${KCM_TESTBED_DIR}-report)
#   KCM_E2E_SHARDED_REPLICAS  replicas of ours with --sharding=namespace (default 0: one replica,
#                        unsharded)
# Results and timings: docs/conformance.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=hack/control-plane-versions.sh
source "$here/control-plane-versions.sh"

log() { printf '[e2e-upstream] %s\n' "$*" >&2; }
die() { printf '[e2e-upstream] ERROR: %s\n' "$*" >&2; exit 1; }

mode=ours
build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --controller-manager=ours) mode=ours ;;
    --controller-manager=upstream) mode=upstream ;;
    --build-only) build_only=1 ;;
    -h|--help) sed -n '2,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
  shift
done

sharded=${KCM_E2E_SHARDED_REPLICAS:-0}
[[ "$sharded" =~ ^[0-9]+$ ]] || die "KCM_E2E_SHARDED_REPLICAS must be a number, not '$sharded'"
[ "$sharded" = 0 ] || [ "$mode" = ours ] || die "KCM_E2E_SHARDED_REPLICAS needs --controller-manager=ours"

k8s_ver=$KCM_CP_KUBERNETES_VERSION
suite_src=$repo/test/e2e/upstream/suite/apps_e2e_test.go
# The cache key: the pinned versions, our test main and the build recipe (build_e2e below), so
# edits elsewhere in this script do not rebuild the binary.
recipe_hash=$( { sed -n '/^build_e2e() {$/,/^}$/p' "$0"; cat "$here/control-plane-versions.sh" "$suite_src"; } |
  sha256sum | cut -c1-12)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/kcm-e2e-upstream
entry=$cache_root/${k8s_ver}-${recipe_hash}
e2e_bin=$entry/apps.test

# ---- build ---------------------------------------------------------------------------------
build_e2e() {
  if [ -x "$e2e_bin" ] && [ -f "$entry/complete" ]; then
    log "using cached e2e binary $e2e_bin ($(sed -n 's/^build_seconds=//p' "$entry/complete")s cold build)"
    return 0
  fi
  local GO=${GO:-}
  if [ -z "$GO" ]; then
    if command -v go >/dev/null 2>&1; then GO=$(command -v go)
    elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
    else die "no Go toolchain found (need Go >= 1.26)"; fi
  fi
  # Same settings as hack/build-control-plane.sh, so packages it compiled come from Go's cache.
  export GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0
  mkdir -p "$cache_root"
  exec 8>"$cache_root/.lock"
  flock -w 7200 8 || die "timed out waiting for $cache_root/.lock"
  if [ -x "$e2e_bin" ] && [ -f "$entry/complete" ]; then return 0; fi
  rm -rf "$entry"
  mkdir -p "$entry/src"
  local logf=$entry/build.log t0 k8s_mod
  t0=$(date +%s)
  log "downloading k8s.io/kubernetes@$k8s_ver (log: $logf)"
  k8s_mod=$(timeout 900 "$GO" mod download -json "k8s.io/kubernetes@$k8s_ver" 2>>"$logf" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -f "$k8s_mod" ] || die "cannot download k8s.io/kubernetes@$k8s_ver from '$("$GO" env GOPROXY)' (log: $logf)"
  {
    echo "// Generated by hack/e2e-upstream.sh: upstream's sig-apps e2e cases at $k8s_ver."
    echo "module kcm.local/e2e-upstream"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes $k8s_ver"
    echo
    echo "replace ("
    # Each `k8s.io/x => ./staging/...` of k8s.io/kubernetes becomes `k8s.io/x => k8s.io/x v0.Y.Z`.
    sed -n 's|^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*$|\t\1 => \1 v0.'"${k8s_ver#v1.}"'|p' "$k8s_mod"
    echo ")"
  } >"$entry/src/go.mod"
  [ "$(grep -c '=> k8s.io/' "$entry/src/go.mod")" -gt 10 ] || die "found no staging replaces in $k8s_mod; the recipe needs updating"
  cp "$suite_src" "$entry/src/"
  local jobs=${KCM_E2E_JOBS:-2}
  log "compiling the e2e test binary (go test -c -p $jobs under nice; log: $logf)"
  (
    cd "$entry/src"
    # Tidy resolves the test-only imports (ginkgo, gomega) and writes go.sum.
    timeout 1800 "$GO" mod tidy >>"$logf" 2>&1 &&
      timeout 7200 nice -n 19 "$GO" test -c -mod=mod -p "$jobs" -trimpath -ldflags='-s -w' \
        -o "$entry/apps.test.tmp" . >>"$logf" 2>&1
  ) || { tail -n 30 "$logf" >&2; die "building the e2e binary failed (log: $logf)"; }
  mv "$entry/apps.test.tmp" "$e2e_bin"
  printf 'kubernetes=%s\nbuild_seconds=%s\nbuilt_at=%s\njobs=%s\n' "$k8s_ver" \
    "$(( $(date +%s) - t0 ))" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$jobs" >"$entry/complete"
  log "built $e2e_bin in $(( $(date +%s) - t0 ))s"
}

build_e2e
if [ "$build_only" = 1 ]; then
  echo "$e2e_bin"
  exit 0
fi

# ---- test bed and controller managers ------------------------------------------------------
export KCM_TESTBED_DIR=${KCM_TESTBED_DIR:-/tmp/kcm-testbed-e2e-upstream}
testbed=$repo/hack/testbed
report_dir=${KCM_E2E_REPORT_DIR:-$KCM_TESTBED_DIR-report}
# Images the cases use precisely because they cannot be pulled: their pods must stay unready.
# webserver:404 — "deployment should support proportional scaling";
# gcr.io/google_samples/gb-redisslave:nonexistent — "deployment should support rollover".
# Set KCM_TESTBED_KWOK_UNREADY_IMAGES (even empty) to override, e.g. to see the cases fail without it.
export KCM_TESTBED_KWOK_UNREADY_IMAGES=${KCM_TESTBED_KWOK_UNREADY_IMAGES-webserver:404 gcr.io/google_samples/gb-redisslave:nonexistent}
export KCM_TESTBED_OWNER_PID=$$
if [ "$mode" = ours ]; then
  export KCM_TESTBED_UPSTREAM_KCM_CONTROLLERS='*,-deployment,-replicaset'
else
  export KCM_TESTBED_UPSTREAM_KCM_CONTROLLERS='*'
fi
our_kcm=${KCM_E2E_OUR_KCM:-$repo/build/cmd/kube-controller-manager/kube-controller-manager}
if [ "$mode" = ours ] && [ ! -x "$our_kcm" ]; then
  log "building our kube-controller-manager (hack/build.sh, one target)"
  KCM_BUILD_TARGETS=kube-controller-manager "$repo/hack/build.sh" build >&2 ||
    die "building kube-controller-manager failed"
fi

# Only a report dir this script made (marker file) is wiped; anything else non-empty is refused.
if [ -d "$report_dir" ] && [ -n "$(ls -A "$report_dir")" ]; then
  [ -f "$report_dir/.kcm-e2e-report" ] || die "$report_dir is not empty and not a report dir of this script; refusing to wipe it"
  rm -rf "$report_dir"
fi
mkdir -p "$report_dir"
touch "$report_dir/.kcm-e2e-report"

t_start=$(date +%s)
"$testbed" down >/dev/null 2>&1 || true
trap '"$testbed" down >/dev/null 2>&1 || true' EXIT
log "starting the test bed in $KCM_TESTBED_DIR (upstream controllers: $KCM_TESTBED_UPSTREAM_KCM_CONTROLLERS)"
"$testbed" up --with-upstream-kcm || die "hack/testbed up failed"
eval "$("$testbed" env)"

# start_ours <name> [flag...]: our daemon as test bed process <name> on a free port, with the
# test bed's controller-manager kubeconfig and the given flags; waits for /healthz.
start_ours() {
  local name=$1 port="" p ok=0
  shift
  for _ in $(seq 1 200); do
    # Below Linux's ephemeral range, like hack/testbed's ports.
    p=$(( 20000 + RANDOM % 12000 ))
    if ! ss -Htln "sport = :$p" | grep -q .; then port=$p; break; fi
  done
  [ -n "$port" ] || die "no free port for our controller manager"
  "$testbed" run "$name" "$our_kcm" \
    --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" \
    --leader-elect-resource-name=kube-controller-manager-cpp \
    --bind-address=127.0.0.1 --secure-port="$port" "$@"
  for _ in $(seq 1 120); do
    if curl -fsk --max-time 2 "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; then ok=1; break; fi
    "$testbed" status >/dev/null 2>&1 || break
    sleep 0.5
  done
  [ "$ok" = 1 ] || { tail -n 20 "$KCM_TESTBED_DIR/logs/$name.log" >&2; die "our kube-controller-manager $name did not become healthy"; }
  log "our kube-controller-manager $name is healthy on port $port (log: $KCM_TESTBED_DIR/logs/$name.log)"
}

# The rights --sharding=namespace needs beyond deploy/rbac.yaml (whose leader-election Role names
# the one Lease kube-controller-manager-cpp): the member Leases <group>-member-<hash>, the map
# <group>-shards and the coordinator <group> in kube-system, listed and watched, and departed
# members' Leases deleted; namespaces listed and watched to balance them.
sharding_rbac() {
  cat <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "kcm-e2e:sharding", namespace: kube-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "kcm-e2e:sharding", namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "kcm-e2e:sharding"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$KCM_TESTBED_KCM_USER"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "kcm-e2e:sharding"}
rules:
- apiGroups: [""]
  resources: [namespaces]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kcm-e2e:sharding"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kcm-e2e:sharding"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$KCM_TESTBED_KCM_USER"}]
YAML
}

if [ "$mode" = ours ] && [ "$sharded" = 0 ]; then
  start_ours kube-controller-manager-cpp
elif [ "$mode" = ours ]; then
  sharding_rbac | "$KCM_TESTBED_KUBECTL" apply -f - >/dev/null || die "applying the sharding RBAC failed"
  for i in $(seq 0 $(( sharded - 1 ))); do
    start_ours "kube-controller-manager-cpp-$i" --leader-elect=true --sharding=namespace
  done
  # Every replica serves a share of the namespaces before the cases start.
  ok=0
  for _ in $(seq 1 120); do
    ok=1
    for i in $(seq 0 $(( sharded - 1 ))); do
      grep -q '"Serving shard ranges" shardSelector="shardRange' "$KCM_TESTBED_DIR/logs/kube-controller-manager-cpp-$i.log" || ok=0
    done
    [ "$ok" = 1 ] && break
    sleep 0.5
  done
  [ "$ok" = 1 ] || die "not every sharded replica serves a share (logs: $KCM_TESTBED_DIR/logs/kube-controller-manager-cpp-*.log)"
  log "$sharded sharded replicas divide the namespaces"
fi

# ---- the cases -----------------------------------------------------------------------------
focus=${KCM_E2E_FOCUS:-'\[sig-apps\] (Deployment|ReplicaSet) '}
# Built-in skips (see the header for why): pods served over HTTP through the API server proxy,
# and cases for a cloud provider's load balancer or private registry.
skip='should serve a basic image on each replica|\[Provider:|\[Feature:|\[Flaky\]'
[ -n "${KCM_E2E_SKIP:-}" ] && skip="$skip|$KCM_E2E_SKIP"
log "running upstream's cases (focus: $focus; log: $report_dir/e2e.log)"
t_run=$(date +%s)
rc=0
(
  cd "$report_dir"
  "$e2e_bin" --kubeconfig="$KUBECONFIG" --kubectl-path="$KCM_TESTBED_KUBECTL" \
    --provider=skeleton --report-dir="$report_dir" \
    --ginkgo.focus="$focus" --ginkgo.skip="$skip" \
    --ginkgo.timeout="${KCM_E2E_TIMEOUT:-90m}" \
    --ginkgo.json-report="$report_dir/report.json" --ginkgo.no-color --ginkgo.v
) >"$report_dir/e2e.log" 2>&1 || rc=$?
t_end=$(date +%s)

# ---- summary -------------------------------------------------------------------------------
[ -f "$report_dir/report.json" ] || { tail -n 40 "$report_dir/e2e.log" >&2; die "no ginkgo report (exit $rc; log: $report_dir/e2e.log)"; }
summary_rc=0
whose="upstream's"
[ "$mode" = ours ] && whose=our
[ "$sharded" != 0 ] && whose="our ($sharded replicas, --sharding=namespace)"
python3 - "$report_dir/report.json" "$focus" "$whose" <<'PY' || summary_rc=$?
import json, re, sys
path, focus, whose = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3]
counts = {"passed": 0, "failed": 0, "skipped": 0}
rows = []
for suite in json.load(open(path)):
    for spec in suite.get("SpecReports") or []:
        if spec.get("LeafNodeType") != "It":
            # Suite-level nodes only matter when they fail (e.g. the node check before all cases).
            if spec.get("State") not in ("passed", "skipped", "pending"):
                rows.append(("failed", spec.get("LeafNodeType", "?") + " " + spec.get("LeafNodeText", ""),
                             (spec.get("Failure") or {}).get("Message", "")))
                counts["failed"] += 1
            continue
        texts = spec.get("ContainerHierarchyTexts") or []
        name = " ".join(texts + [spec.get("LeafNodeText", "")])
        labels = []
        for ls in spec.get("ContainerHierarchyLabels") or []:
            labels += ls or []
        labels += spec.get("LeafNodeLabels") or []
        full = name + "".join(" [%s]" % l for l in labels)
        if not focus.search(full) and not focus.search(name + " "):
            continue  # a sig-apps case outside Deployment/ReplicaSet, filtered out by the focus
        state = spec.get("State")
        why = ""
        if state == "passed":
            key = "passed"
        elif state in ("skipped", "pending"):
            key = "skipped"
            why = (spec.get("Failure") or {}).get("Message", "") or "not selected (--ginkgo.skip)"
        else:
            key = "failed"
            why = (spec.get("Failure") or {}).get("Message", "") or state
        counts[key] += 1
        rows.append((key, name, why.strip().splitlines()[0][:160] if why.strip() else ""))
print("\n=== upstream sig-apps e2e under %s controllers: %d passed, %d failed, %d skipped"
      % (whose, counts["passed"], counts["failed"], counts["skipped"]))
for key in ("failed", "passed", "skipped"):
    for k, name, why in sorted(rows):
        if k == key:
            print("  %-7s %s%s" % (k.upper(), name, ("  -- " + why) if why and k != "passed" else ""))
sys.exit(1 if counts["failed"] or counts["passed"] == 0 else 0)
PY
if [ "$sharded" != 0 ]; then
  for i in $(seq 0 $(( sharded - 1 ))); do
    log "kube-controller-manager-cpp-$i started serving $(grep -c '"Serving shard ranges" shardSelector="shardRange' "$KCM_TESTBED_DIR/logs/kube-controller-manager-cpp-$i.log") shard ranges as the cases' namespaces came and went"
  done
fi
echo "e2e binary: $e2e_bin; test bed up + cases: $(( t_end - t_start ))s (cases alone: $(( t_end - t_run ))s); report: $report_dir"
if [ "$rc" -ne 0 ] || [ "$summary_rc" -ne 0 ]; then
  log "FAILED (e2e exit $rc; log: $report_dir/e2e.log)"
  exit 1
fi
log "all selected cases passed"
