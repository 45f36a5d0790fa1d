# syntax=docker/dockerfile:1
# Multi-stage image for kube-controller-manager (C++): compiled in a Debian build stage, run on
# Debian slim with only the runtime libraries, as a non-root user.
#   With a Docker engine:  docker build -t kube-controller-manager-cpp:0.1.0 .
#   Without one (buildah, vfs storage, chroot isolation, bases made by mmdebstrap):
#                          hack/build-image.sh
ARG BUILD_IMAGE=debian:bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
# What the daemon's build needs, no more (hack/install-deps.sh also installs the test and lint
# tools). GTest and Google Benchmark are here because the top-level CMakeLists.txt finds them.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      g++ make cmake ninja-build ccache pkg-config binutils \
      libcurl4-openssl-dev zlib1g-dev libsimdjson-dev libgflags-dev libgoogle-glog-dev \
      prometheus-cpp-dev libyaml-cpp-dev libssl-dev libboost-dev libgtest-dev libgmock-dev \
      libbenchmark-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The commit the binary reports (there is no .git in the build context).
ARG KCM_GIT_COMMIT=""
# Optimised as the tests build it (RelWithDebInfo: -O2 -g; GCC 12's -O3 raises false -Wrestrict
# errors), then stripped. ccache's objects live in a cache mount that BuildKit and buildah keep
# between builds; hack/build-image.sh instead lends the build the host's ccache (/host-ccache), so
# objects that hack/build.sh compiled are reused (the paths are relative to /src and build/).
# ccache's keys include LANG: hack/build-image.sh passes the host's, so its objects match.
ARG LANG=C.UTF-8
ENV CCACHE_DIR=/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=5G
RUN --mount=type=cache,id=kcm-image-ccache,target=/ccache \
    if [ -d /host-ccache ]; then export CCACHE_DIR=/host-ccache; fi \
 && if [ -z "$LANG" ]; then unset LANG; fi \
 && export CCACHE_STATSLOG=/tmp/ccache-stats.log \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKCM_WERROR=ON \
      -DKCM_GIT_COMMIT="${KCM_GIT_COMMIT}" \
 && cmake --build build --target kube-controller-manager \
 && strip build/cmd/kube-controller-manager/kube-controller-manager \
 && { ccache --show-log-stats || true; } \
 && rm -f /tmp/ccache-stats.log

FROM ${BASE_IMAGE}
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates libcurl4 libsimdjson14 libgflags2.2 libgoogle-glog0v6 \
      libprometheus-cpp-core1.0 libssl3 libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
COPY --from=build /src/build/cmd/kube-controller-manager/kube-controller-manager /usr/local/bin/
# Fails the build if a shared library (or a symbol version) the binary needs is missing from the
# list above, or if it cannot run: a bad flag must be refused by name.
RUN if ldd /usr/local/bin/kube-controller-manager 2>&1 | grep 'not found'; then exit 1; fi \
 && ! /usr/local/bin/kube-controller-manager --controllers=no-such 2>/tmp/err \
 && grep -q -- --controllers /tmp/err && rm /tmp/err
ARG KCM_GIT_COMMIT=""
LABEL org.opencontainers.image.title="kube-controller-manager-cpp" \
      org.opencontainers.image.revision="${KCM_GIT_COMMIT}"
# 65532: the conventional "nonroot" uid/gid; deploy/kube-controller-manager.yaml runs as it too.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kube-controller-manager"]
