#!/usr/bin/env bash
# Builds the unit tests with a sanitizer and runs them with ctest (label `unit`).
# Usage: hack/sanitize.sh address|thread [ctest args...]
#   address  ASan + UBSan (leak checking on), build dir build-asan
#   thread   TSan, build dir build-tsan; hack/tsan.supp suppresses reports whose frames are all in
#            uninstrumented third-party libraries (each entry says why) — never our own code
# Only the unit-test binaries and what they link are built (target kcm-unit-tests), as Debug
# (assertions on) at -O1 with line tables only (-g1): enough for symbolized reports, and much
# cheaper to compile than -O2 -g. Environment: KCM_JOBS (build jobs, default all cores),
# KCM_TEST_JOBS (ctest -j, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: hack/sanitize.sh address|thread [ctest args...]}
shift
case $kind in
  address) dir=build-asan ;;
  thread) dir=build-tsan ;;
  *)
    echo "hack/sanitize.sh: unknown sanitizer '$kind' (address|thread)" >&2
    exit 2
    ;;
esac
hack/install-deps.sh
KCM_SANITIZE=$kind KCM_BUILD_TARGETS=kcm-unit-tests hack/build.sh "$dir" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1"

# Any report fails the test that produced it.
export ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/hack/tsan.supp"
cd "$dir"
# manifests.* are shell checks of deploy/ (no C++ to sanitize); hack/test.sh runs them.
ctest -L unit -E '^manifests\.' --output-on-failure --timeout 900 -j "${KCM_TEST_JOBS:-2}" "$@"
