#!/usr/bin/env bash
# Runs the unit and integration tests under stress, to find tests whose outcome depends on how
# fast the machine is (docs/ci.md, "Stress runs"). Too long for .ci/run; run it before a change
# that touches threads, clocks or the leader elector.
# Usage: hack/stress-tests.sh [stage...]   (default: every stage, in this order)
#   unit         build/: ctest -L unit -j 4 --repeat until-fail:N
#   unit-hog     the same, beside one busy loop per core
#   integration  build/: ctest -L integration -j 2, N runs in a row (each starts its testbed)
#   asan         hack/sanitize.sh address with --repeat until-fail:M and -j 4, beside the hog
#   tsan         hack/sanitize.sh thread, the same
# Environment: KCM_STRESS_REPEAT (N, default 20), KCM_STRESS_SAN_REPEAT (M, default 5: the
# sanitizers run 5-15 times slower), KCM_JOBS (build jobs). `example_*` (a build of the example
# against the installed tree, no timing in it) is left out. Every stage runs even when an earlier
# one failed; logs in build-stress/<stage>.log. A test that hack/sanitize.sh calls FLAKY (failed,
# then passed alone) fails the stage: finding those is the point.
set -uo pipefail
cd "$(dirname "$0")/.."
repeat=${KCM_STRESS_REPEAT:-20}
san_repeat=${KCM_STRESS_SAN_REPEAT:-5}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(unit unit-hog integration asan tsan)
logs=build-stress
mkdir -p "$logs"

hogs=()
hog_start() {
  local i
  for ((i = 0; i < $(nproc); i++)); do
    yes >/dev/null &
    hogs+=($!)
  done
}
hog_stop() {
  [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null
  hogs=()
}

unit() {
  (cd build && ctest -L unit -E '^example_' -j 4 --timeout 900 --output-on-failure \
    --repeat "until-fail:$repeat")
}
integration() {
  local i
  for ((i = 1; i <= repeat; i++)); do
    echo "=== integration run $i/$repeat"
    (cd build && ctest -L integration -j 2 --timeout 900 --output-on-failure) || return 1
  done
}
sanitized() {
  hack/sanitize.sh "$1" -N >/dev/null || return 1 # builds (ctest -N only lists the tests)
  hog_start
  KCM_TEST_JOBS=4 hack/sanitize.sh "$1" --repeat "until-fail:$san_repeat"
}

failed=()
for stage in "${stages[@]}"; do
  case $stage in
    unit | unit-hog) KCM_BUILD_TARGETS=kcm-unit-tests hack/build.sh build >/dev/null || exit 1 ;;
    integration) hack/build.sh build >/dev/null || exit 1 ;;
    asan | tsan) ;;
    *)
      echo "hack/stress-tests.sh: unknown stage '$stage'" >&2
      exit 2
      ;;
  esac
  echo "=== stress: $stage ($(date -u +%H:%M:%S) UTC)"
  (
    trap hog_stop EXIT # the hog is started in this subshell and ends with it
    case $stage in
      unit) unit ;;
      unit-hog) hog_start && unit ;;
      integration) integration ;;
      asan) sanitized address ;;
      tsan) sanitized thread ;;
    esac
  ) 2>&1 | tee "$logs/$stage.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ] || grep -q '^FLAKY ' "$logs/$stage.log"; then
    failed+=("$stage")
  fi
  echo "=== stress: $stage: $([[ " ${failed[*]} " == *" $stage "* ]] && echo FAILED || echo ok)"
done
for stage in "${stages[@]}"; do
  grep -E '^\s+[0-9]+ - .*\(|^FLAKY ' "$logs/$stage.log" | sed "s/^\s*/  $stage: /"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "stress: FAILED: ${failed[*]}"
  exit 1
fi
echo "stress: every stage passed"
