#!/usr/bin/env bash
# Runs the test suite: installs missing packages, builds, and runs every test with ctest.
# Integration tests need a control plane; they start one from hack/testbed themselves
# (binaries built once by hack/build-control-plane.sh and cached outside the repo).
# Usage: hack/test.sh [ctest args...]   e.g. hack/test.sh -L unit
# Tests labelled `conformance` (upstream's e2e cases, hack/e2e-upstream.sh) are left out unless an
# argument names that label, e.g. hack/test.sh -L conformance; they are registered only when the
# build is configured with -DKCM_CONFORMANCE_TESTS=ON (test/e2e/upstream/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
hack/build.sh build
if [ -x hack/build-control-plane.sh ]; then
  hack/build-control-plane.sh
fi
cd build
exclude=(-LE conformance)
case " $* " in *conformance*) exclude=() ;; esac
ctest --output-on-failure --timeout 900 -j "${KCM_TEST_JOBS:-2}" "${exclude[@]}" "$@"
