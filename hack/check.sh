#!/usr/bin/env bash
# Format check: every tracked C++ file must be clang-format clean under the checked-in
# .clang-format (clang-format 14, Debian 12). Lists the files that are not and exits 1.
# Usage: hack/check.sh          check
#        hack/check.sh --fix    reformat the files in place
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh >/dev/null
cf=$(command -v clang-format-14 || command -v clang-format)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cc' '*.h' '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path ./build\* -prune -o \( -name '*.cc' -o -name '*.h' \) -print)
fi
if [ "${1:-}" = --fix ]; then
  "$cf" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check: ${#bad[@]} of ${#files[@]} C++ files are not clang-format clean:"
  printf '  %s\n' "${bad[@]}"
  echo "check: fix with: $cf -i <files>   (or hack/check.sh --fix)"
  exit 1
fi
echo "check: all ${#files[@]} C++ files are clang-format clean ($("$cf" --version))"
