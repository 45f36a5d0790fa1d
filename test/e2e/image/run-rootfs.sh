#!/usr/bin/env bash
# Runs a program of an exported image root filesystem (hack/build-image.sh --export-rootfs) the way
# a kubelet runs a container of deploy/kube-controller-manager.yaml, without a container runtime:
# a private mount and UTS namespace; the root filesystem read-only (readOnlyRootFilesystem);
# tmpfs at /tmp (the manifest's emptyDir), /run and /dev (null, zero, random, urandom only); /proc;
# a service-account directory bind-mounted read-only at
# /var/run/secrets/kubernetes.io/serviceaccount; the pod's hostname; then chroot and drop to the
# image's numeric user. Every step execs, so the caller's child pid is the program itself
# (signals reach it and its exit code is the program's); the mounts vanish with it.
# The network namespace is the host's: the program reaches an API server on 127.0.0.1.
#
# Usage (as root): run-rootfs.sh ROOTFS SERVICEACCOUNT_DIR HOSTNAME UID:GID PROGRAM [ARGS...]
# The environment is passed through unchanged: run it under `env -i` with the image's Env and
# KUBERNETES_SERVICE_HOST/PORT to get a container's environment.
set -euo pipefail

# The host's tools, whatever PATH the program is to get; the program's PATH is restored below.
caller_path=${PATH-}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
if [ "${1:-}" != --inside ]; then
  [ $# -ge 5 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || { echo "run-rootfs.sh: needs root (mount, chroot)" >&2; exit 2; }
  PATH=$caller_path exec "$(command -v unshare)" --mount --uts --propagation private -- "$0" --inside "$@"
fi
shift
rootfs=$(cd "$1" && pwd) sa=$2 host=$3 user=$4
shift 4

hostname "$host"
mount --bind "$rootfs" "$rootfs"
mount -o remount,bind,ro "$rootfs"
mount -t tmpfs -o mode=1777,size=16m,nosuid,nodev tmpfs "$rootfs/tmp"
mount -t tmpfs -o mode=755,size=1m,nosuid,nodev tmpfs "$rootfs/run"
mount -t tmpfs -o mode=755,size=1m,nosuid tmpfs "$rootfs/dev"
for d in null zero random urandom; do
  touch "$rootfs/dev/$d"
  mount --bind "/dev/$d" "$rootfs/dev/$d"
done
mount -t proc -o nosuid,nodev,noexec proc "$rootfs/proc"
# Debian's /var/run is a symlink to /run, as in the image.
secrets=$rootfs/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$secrets"
mount --bind "$sa" "$secrets"
mount -o remount,bind,ro "$secrets"

chroot=$(command -v chroot)
export PATH=$caller_path
exec "$chroot" --userspec="$user" --groups="${user#*:}" "$rootfs" "$@"
