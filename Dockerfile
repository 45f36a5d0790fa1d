# Multi-stage image for kube-controller-manager (C++). Build: docker build -t kube-controller-manager-cpp:0.1.0 .
FROM debian:bookworm AS build
WORKDIR /src
COPY hack/install-deps.sh hack/install-deps.sh
RUN hack/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKCM_WERROR=ON \
 && cmake --build /build --target kube-controller-manager \
 && strip /build/cmd/kube-controller-manager/kube-controller-manager

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends ca-certificates libcurl4 libsimdjson14 \
      libgflags2.2 libgoogle-glog0v6 libprometheus-cpp-core1.0 libssl3 libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/cmd/kube-controller-manager/kube-controller-manager /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kube-controller-manager"]
