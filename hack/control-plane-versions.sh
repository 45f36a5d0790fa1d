# shellcheck shell=bash
# The one place where the control-plane versions used by hack/testbed are pinned.
# Sourced by hack/build-control-plane.sh; changing a value here changes the cache key,
# so the next run rebuilds into a fresh cache directory.
#
# Kubernetes: newest release whose go.mod asks for a Go the local toolchain (1.26.x) has.
#   v1.37.2 declares `go 1.26.0`, so it builds without GOTOOLCHAIN switching.
# etcd: v3.7.x is the series Kubernetes 1.37 is tested against (Debian 12 only ships 3.4).
# KWOK: newest release on the module proxy.
# shellcheck disable=SC2034  # read by the sourcing script
KCM_CP_KUBERNETES_VERSION=v1.37.2
# shellcheck disable=SC2034
KCM_CP_ETCD_VERSION=v3.7.3
# shellcheck disable=SC2034
KCM_CP_KWOK_VERSION=v0.8.0
