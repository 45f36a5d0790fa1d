#!/usr/bin/env bash
# Builds every libFuzzer target under fuzz/ (one folder each: fuzz/<name>/, with its seed corpus
# fuzz/<name>/corpus and optional dictionary fuzz/<name>/*.dict) in one build dir, build-fuzz
# (clang, ASan+UBSan), then runs each for an equal share of the time budget. The checked-in seeds
# are not modified: new inputs go to build-fuzz/corpus/<name>. One line per target is printed
# (inputs run, speed, new inputs, peak RSS); a crash, leak, UB, timeout or huge allocation fails
# the run, prints the report and leaves the input in build-fuzz/artifacts/; reproduce with
#   build-fuzz/fuzz/<name>/<target> build-fuzz/artifacts/<crash-file>
# Usage: hack/fuzz.sh [seconds]   (the whole run's fuzzing time, default $KCM_FUZZ_SECONDS or
# 200; each target gets seconds / number of targets, at least 5)
# Environment: KCM_JOBS (build jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-${KCM_FUZZ_SECONDS:-200}}
hack/install-deps.sh

# fuzz/<name>/CMakeLists.txt names its target in kcm_fuzz_target(<target> ...).
names=() targets=()
for cml in fuzz/*/CMakeLists.txt; do
  dir=$(dirname "$cml")
  t=$(tr '\n' ' ' <"$cml" | grep -oE 'kcm_fuzz_target\( *[A-Za-z0-9_]+' | sed 's/.*( *//')
  names+=("$(basename "$dir")") targets+=("$t")
done
KCM_SANITIZE=address KCM_BUILD_TARGETS="${targets[*]}" hack/build.sh build-fuzz \
  -DCMAKE_CXX_COMPILER=clang++ -DKCM_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1"
mkdir -p build-fuzz/artifacts
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
each=$((secs / ${#names[@]}))
((each >= 5)) || each=5
echo "hack/fuzz.sh: ${#names[@]} targets, ${each} s each"
# libFuzzer's progress lines go to build-fuzz/fuzz-<name>.log (thousands of lines would bury the
# other CI stages' output); one summary line per target is printed, and any crash report.
failed=()
for i in "${!names[@]}"; do
  n=${names[$i]} t=${targets[$i]} log=build-fuzz/fuzz-${names[$i]}.log
  mkdir -p "build-fuzz/corpus/$n"
  dict=()
  for d in fuzz/"$n"/*.dict; do [ -e "$d" ] && dict=(-dict="$d"); done
  rc=0
  "build-fuzz/fuzz/$n/$t" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" -artifact_prefix=build-fuzz/artifacts/ \
    "build-fuzz/corpus/$n" "fuzz/$n/corpus" >"$log" 2>&1 || rc=$?
  final_stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
  printf '  %-13s %9s inputs %7s/s %6s new %5s MB  %s\n' "$n" "$(final_stat number_of_executed_units)" \
    "$(final_stat average_exec_per_sec)" "$(final_stat new_units_added)" "$(final_stat peak_rss_mb)" \
    "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc, $log)")"
  if [ "$rc" -ne 0 ]; then
    failed+=("$n")
    grep -n -m1 -A60 -E '^==[0-9]+==|runtime error|ERROR: libFuzzer' "$log" || tail -20 "$log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "hack/fuzz.sh: FAILED: ${failed[*]} (inputs in build-fuzz/artifacts/)"
  exit 1
fi
echo "hack/fuzz.sh: ok"
