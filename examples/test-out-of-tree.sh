#!/usr/bin/env bash
# ctest example_configmap_labeler_out_of_tree: `cmake --install` of this build into a fresh
# prefix, then examples/configmap-labeler configured and built as a project of its own against
# that prefix only (find_package(KubeControllerRuntime)), then the program run.
# Usage: test-out-of-tree.sh <build dir> <source dir> <work dir> <c++ compiler>
set -euo pipefail
build=$1 src=$2 work=$3 cxx=$4
prefix=$work/prefix

# A fresh prefix each run: a header or library left over from an earlier install must not hide a
# missing install rule. The example's build dir is kept (ccache makes the rebuild cheap anyway).
rm -rf "$prefix"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; echo "FAIL: cmake --install"; exit 1; }
for f in include/kube-controller-runtime/pkg/runtime/controller.h \
         lib/cmake/KubeControllerRuntime/KubeControllerRuntimeConfig.cmake \
         lib/libkcm_runtime.a bin/kube-controller-manager; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
if [ -e "$prefix/include/kube-controller-runtime/pkg/api/internal" ]; then
  echo "FAIL: implementation headers (pkg/api/internal) were installed"; exit 1
fi

launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kcm-ccache}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Only the prefix is searched: the source tree's pkg/ is not on any include path, so the build
# proves the installed headers and the package's targets are complete.
cmake -S "$src/examples/configmap-labeler" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; echo "FAIL: configuring the example against $prefix"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; echo "FAIL: building the example against $prefix"; exit 1; }
while read -r dir; do
  if [ "$dir" = "$src" ] || [ "$dir" = "$src/" ] || [[ "$dir" == "$src/pkg"* ]]; then
    echo "FAIL: the example's build used the source tree's headers ($dir)"; exit 1
  fi
done < <(grep -oE '(-I|-isystem )[^ "]+' "$work/build/compile_commands.json" | sed -E 's/^(-I|-isystem )//')

# The program runs: its own flag check answers (no cluster needed for that).
out=$("$work/build/configmap-labeler" --label=nolabel 2>&1) && { echo "FAIL: bad --label accepted"; exit 1; }
case "$out" in
  *"--label must be key=value"*) ;;
  *) echo "FAIL: unexpected output: $out"; exit 1 ;;
esac
echo "PASS: installed to $prefix, example built out of tree in $work/build and ran"
