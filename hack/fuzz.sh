#!/usr/bin/env bash
# Builds the libFuzzer target of the pkg/api decoders (fuzz/api, clang, ASan+UBSan) and fuzzes it
# for a bounded time, starting from the checked-in corpus fuzz/api/corpus (which it does not
# modify: new inputs go to build-fuzz/corpus). A crash, leak, UB or timeout fails the run and
# leaves the input in build-fuzz/artifacts/; reproduce with
#   build-fuzz/fuzz/api/api_decode_fuzz build-fuzz/artifacts/<crash-file>
# Usage: hack/fuzz.sh [seconds]   (default: $KCM_FUZZ_SECONDS or 120)
# Environment: KCM_JOBS (build jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${KCM_FUZZ_SECONDS:-120}}
hack/install-deps.sh
KCM_SANITIZE=address KCM_BUILD_TARGETS=api_decode_fuzz hack/build.sh build-fuzz \
  -DCMAKE_CXX_COMPILER=clang++ -DKCM_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1"
mkdir -p build-fuzz/corpus build-fuzz/artifacts
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build-fuzz/fuzz/api/api_decode_fuzz -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -dict=fuzz/api/json.dict -artifact_prefix=build-fuzz/artifacts/ \
  build-fuzz/corpus fuzz/api/corpus
