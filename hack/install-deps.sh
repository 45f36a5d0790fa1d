#!/usr/bin/env bash
# Installs every Debian package the build, tests and benchmarks need. Idempotent: it installs only
# what is missing, so a second run takes a second.
set -euo pipefail

# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (hack/fuzz.sh).
packages=(
  build-essential cmake ninja-build ccache clang-format clang libclang-rt-14-dev pkg-config
  libcurl4-openssl-dev zlib1g-dev libsimdjson-dev libgflags-dev libgoogle-glog-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libyaml-cpp-dev libssl-dev libboost-dev
  prometheus openssl curl ca-certificates procps iproute2
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
