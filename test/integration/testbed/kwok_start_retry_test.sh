#!/usr/bin/env bash
# hack/testbed starts KWOK again when it exits during start-up (KWOK v0.8.0 can die with
# "concurrent map writes" while it sets up its CEL environment). The KWOK here exits at once
# on its first start and is the real one afterwards: `up` must succeed with Ready nodes, keep
# the first attempt's log, and say it started KWOK again.
set -euo pipefail
repo=$1
real_bin=$("$repo/hack/build-control-plane.sh" --bin-dir)
work=$(mktemp -d /tmp/kcm-kwok-retry.XXXXXX)
export KCM_TESTBED_DIR=$work/state KCM_TESTBED_NODES=1 KCM_TESTBED_TTL=600
cleanup() {
  "$repo/hack/testbed" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/cp/bin"
ln -s "$real_bin/../share" "$work/cp/share"
for f in "$real_bin"/*; do ln -s "$f" "$work/cp/bin/$(basename "$f")"; done
rm "$work/cp/bin/kwok"
cat >"$work/cp/bin/kwok" <<SCRIPT
#!/usr/bin/env bash
if [ ! -e "$work/kwok-started-once" ]; then
  touch "$work/kwok-started-once"
  echo "fatal error: concurrent map writes (simulated first start)"
  sleep 1
  exit 2
fi
exec "$real_bin/kwok" "\$@"
SCRIPT
chmod +x "$work/cp/bin/kwok"

KCM_TESTBED_BIN_DIR=$work/cp/bin "$repo/hack/testbed" up 2>"$work/up.err" || {
  cat "$work/up.err" >&2
  echo "FAIL: testbed up did not get past a KWOK that exited once" >&2
  exit 1
}
fail=0
grep -q 'kwok exited during startup (attempt 1' "$work/up.err" ||
  { echo "FAIL: no log line saying KWOK was started again" >&2; fail=1; }
grep -q 'simulated first start' "$KCM_TESTBED_DIR/logs/kwok.attempt-1.log" ||
  { echo "FAIL: the first attempt's log was not kept" >&2; fail=1; }
ready=$("$real_bin/kubectl" --kubeconfig="$KCM_TESTBED_DIR/admin.kubeconfig" get nodes -l type=kwok \
  -o 'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}')
[ "$ready" = True ] || { echo "FAIL: KWOK node not Ready after the retry: '$ready'" >&2; fail=1; }
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
