#!/usr/bin/env bash
# Builds the container image from Dockerfile without a Docker engine or an image registry:
#   1. installs buildah and mmdebstrap from Debian if missing (idempotent);
#   2. assembles the Debian base image with mmdebstrap (minbase, merged /usr, no docs, man pages
#      or locales: what debian:bookworm-slim is) and imports it into buildah's storage as
#      localhost/kcm-base/debian:<suite>-slim; it is rebuilt when older than
#      KCM_IMAGE_BASE_MAX_AGE_DAYS;
#   3. `buildah build` of Dockerfile with BUILD_IMAGE and BASE_IMAGE set to that base, vfs storage
#      and chroot isolation (no daemon, no overlay mounts, no container runtime), layers cached;
#   4. prints the image's size, and optionally exports it.
# All state lives in KCM_IMAGE_CACHE (outside the repository); a second build of an unchanged
# tree reuses every layer and takes seconds.
#
# Usage: hack/build-image.sh [--tag NAME] [--export-rootfs DIR] [--archive FILE]
#   --tag NAME            image name (default kube-controller-manager-cpp:0.1.0, the name that
#                         deploy/kube-controller-manager.yaml uses)
#   --export-rootfs DIR   write the image's root filesystem to DIR/rootfs and `buildah inspect`
#                         of the image (OCI config under .OCIv1.config) to DIR/image.json
#                         (what test/e2e/image runs via chroot);
#                         DIR/image-id names the image it came from, so an unchanged image is
#                         not exported twice
#   --archive FILE        also write a docker-archive tarball (`docker load -i FILE`, or
#                         `kind load image-archive FILE`) to move the image to a cluster
#   --print-storage       print the buildah storage flags and exit (for `buildah $(...) images`)
# Environment:
#   KCM_IMAGE_CACHE               buildah storage, base tarballs, lock
#                                 (default ${XDG_CACHE_HOME:-~/.cache}/kcm-image)
#   KCM_IMAGE_SUITE               Debian suite of both stages (default bookworm)
#   KCM_IMAGE_MIRROR              Debian mirror (default http://deb.debian.org/debian)
#   KCM_IMAGE_BASE_MAX_AGE_DAYS   rebuild the base image when older (default 7)
#   KCM_IMAGE_NO_CACHE=1          rebuild every layer (base image kept)
#   KCM_IMAGE_CCACHE              host ccache dir lent to the compile step (default: hack/build.sh's,
#                                 ${XDG_CACHE_HOME:-~/.cache}/kcm-ccache; "none": the Dockerfile's
#                                 own cache mount)
# Must run as root (buildah's chroot isolation and mmdebstrap's root mode need it).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${KCM_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcm-image}
suite=${KCM_IMAGE_SUITE:-bookworm}
mirror=${KCM_IMAGE_MIRROR:-http://deb.debian.org/debian}
max_age_days=${KCM_IMAGE_BASE_MAX_AGE_DAYS:-7}
tag=kube-controller-manager-cpp:0.1.0
export_dir=""
archive=""
print_storage=0

log() { printf '[build-image] %s\n' "$*" >&2; }
die() { printf '[build-image] ERROR: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --tag) shift; tag=${1:?--tag needs a name} ;;
    --tag=*) tag=${1#--tag=} ;;
    --export-rootfs) shift; export_dir=${1:?--export-rootfs needs a directory} ;;
    --export-rootfs=*) export_dir=${1#--export-rootfs=} ;;
    --archive) shift; archive=${1:?--archive needs a file} ;;
    --archive=*) archive=${1#--archive=} ;;
    --print-storage) print_storage=1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done

# Every buildah call uses the project's own storage: vfs needs no overlay or fuse support, and
# nothing is shared with another buildah/podman user of the machine.
storage=(--root "$cache/storage" --runroot "$cache/run" --storage-driver vfs)
if [ "$print_storage" = 1 ]; then
  echo "${storage[*]}"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "run as root (buildah chroot isolation and mmdebstrap need it)"

# ---- tools ---------------------------------------------------------------------------------
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bah() { buildah "${storage[@]}" "$@"; }

mkdir -p "$cache"
# One build at a time per cache: buildah's storage locks itself, but the base refresh does not.
exec 9>"$cache/lock"
flock 9

# ---- base image ----------------------------------------------------------------------------
base=localhost/kcm-base/debian:$suite-slim
base_stamp=$cache/base-$suite.created  # unix time the base image was made
base_ok=0
if bah inspect --type image "$base" >/dev/null 2>&1 && [ -f "$base_stamp" ]; then
  age_days=$(( ($(date +%s) - $(cat "$base_stamp")) / 86400 ))
  if [ "$age_days" -lt "$max_age_days" ]; then base_ok=1; else log "base image is $age_days days old; refreshing"; fi
fi
if [ "$base_ok" = 0 ]; then
  log "assembling $base with mmdebstrap (variant minbase, merged /usr, no docs/man/locales)"
  t0=$(date +%s)
  tarball=$cache/base-$suite.tar
  # usrmerge (and with it perl) is what mmdebstrap would install for bookworm without the
  # merged-usr hook; the slim excludes are written into the image's dpkg config, so packages
  # installed on top of it stay slim too. mmdebstrap removes apt's lists and caches itself.
  mmdebstrap --variant=minbase --quiet --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --aptopt='Acquire::Languages "none"' \
    "$suite" "$tarball" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" \
    "deb ${mirror%/debian}/debian-security $suite-security main" \
    >"$cache/mmdebstrap.log" 2>&1 || { tail -n 20 "$cache/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $cache/mmdebstrap.log)"; }
  ctr=$(bah from --pull=never scratch)
  bah add "$ctr" "$tarball" / >/dev/null
  bah config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  bah commit --quiet --rm "$ctr" "$base" >/dev/null
  rm -f "$tarball"
  date +%s >"$base_stamp"
  log "base image ready in $(( $(date +%s) - t0 ))s"
fi

# ---- the image -----------------------------------------------------------------------------
commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git -C "$repo" status --porcelain 2>/dev/null)" ]; then
  commit="$commit-dirty"
fi
ccache_dir=${KCM_IMAGE_CCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kcm-ccache}
volumes=()
if [ "$ccache_dir" != none ]; then
  mkdir -p "$ccache_dir"
  volumes=(--volume "$ccache_dir:/host-ccache")
fi
layers=(--layers)
[ "${KCM_IMAGE_NO_CACHE:-0}" = 1 ] && layers+=(--no-cache)
log "building $tag from Dockerfile (buildah, vfs, chroot isolation)"
t0=$(date +%s)
bah build "${layers[@]}" "${volumes[@]}" --isolation chroot --pull=never \
  --build-arg BUILD_IMAGE="$base" --build-arg BASE_IMAGE="$base" \
  --build-arg KCM_GIT_COMMIT="$commit" --build-arg LANG="${LANG:-}" \
  -f "$repo/Dockerfile" -t "$tag" "$repo" >"$cache/build.log" 2>&1 ||
  { tail -n 40 "$cache/build.log" >&2; die "buildah build failed (log: $cache/build.log)"; }
# Tag the build stage too (all cache hits: seconds), so the prune below keeps its package layer
# and the next build does not run apt-get again.
bah build --layers "${volumes[@]}" --isolation chroot --pull=never --target build \
  --build-arg BUILD_IMAGE="$base" --build-arg BASE_IMAGE="$base" \
  --build-arg KCM_GIT_COMMIT="$commit" --build-arg LANG="${LANG:-}" \
  -f "$repo/Dockerfile" -t localhost/kcm-image-build-stage:latest "$repo" >>"$cache/build.log" 2>&1 ||
  log "WARNING: tagging the build stage failed; the next build reinstalls its packages"
took=$(( $(date +%s) - t0 ))
grep -E '^ *(Hits|Misses):' "$cache/build.log" | sed 's/^ */[build-image] ccache (compile step): /' >&2 || true
# Layers of earlier builds that no tagged image uses any more (vfs keeps a full copy per layer).
bah rmi --prune >/dev/null 2>&1 || true

id=$(bah inspect --type image --format '{{.FromImageID}}' "$tag")
log "built $tag (image ${id:0:12}) in ${took}s; $(bah images --format '{{.Size}}' "$tag" | head -n1) uncompressed"

# ---- exports -------------------------------------------------------------------------------
if [ -n "$archive" ]; then
  rm -f "$archive"
  bah push --quiet "$tag" "docker-archive:$archive:$tag" >/dev/null
  log "wrote $archive ($(du -h "$archive" | cut -f1))"
fi
if [ -n "$export_dir" ]; then
  mkdir -p "$export_dir"
  export_dir=$(cd "$export_dir" && pwd)
  if [ -f "$export_dir/image-id" ] && [ "$(cat "$export_dir/image-id")" = "$id" ] && [ -d "$export_dir/rootfs" ]; then
    log "rootfs of image ${id:0:12} already in $export_dir"
  else
    rm -rf "$export_dir/rootfs" "$export_dir/image.json" "$export_dir/image-id"
    ctr=$(bah from --pull=never "$tag")
    mnt=$(bah mount "$ctr")
    mkdir "$export_dir/rootfs"
    cp -a "$mnt/." "$export_dir/rootfs/"
    bah umount "$ctr" >/dev/null
    bah rm "$ctr" >/dev/null
    bah inspect --type image "$tag" >"$export_dir/image.json"
    echo "$id" >"$export_dir/image-id"
    log "exported the root filesystem to $export_dir/rootfs ($(du -sh "$export_dir/rootfs" | cut -f1); image metadata: $export_dir/image.json)"
  fi
fi
echo "$tag"
