#!/usr/bin/env bash
# README's main-job command: builds everything, starts the local control plane (etcd,
# kube-apiserver, kube-scheduler, KWOK fake nodes) with a controller manager, applies a sample
# Deployment and shows it roll out. It leaves the testbed running and prints how to use and stop it.
#
# The controller manager: when our daemon exists (build/cmd/kube-controller-manager/
# kube-controller-manager), it runs under the RBAC-limited controller-manager kubeconfig;
# until then the upstream kube-controller-manager stands in for it.
#
# Environment: KCM_TESTBED_DIR (default /tmp/kcm-testbed), KCM_TESTBED_NODES (default 3),
#              KCM_LOCAL_UP_UPSTREAM=1 forces the upstream controller manager,
#              KCM_LOCAL_UP_SKIP_BUILD=1 skips hack/build.sh (uses what build/ already has),
#              KCM_LOCAL_UP_SHARDED_REPLICAS=N (N >= 2) runs N replicas of ours with
#              --sharding=namespace and the rights of deploy/kube-controller-manager-sharded.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export KCM_TESTBED_DIR=${KCM_TESTBED_DIR:-/tmp/kcm-testbed}
state=$KCM_TESTBED_DIR
ours=$repo/build/cmd/kube-controller-manager/kube-controller-manager

say() { printf '\n==> %s\n' "$*"; }

say "installing missing Debian packages"
hack/install-deps.sh
if [ "${KCM_LOCAL_UP_SKIP_BUILD:-0}" = 1 ]; then
  say "skipping the C++ build (KCM_LOCAL_UP_SKIP_BUILD=1)"
else
  say "building the C++ project (hack/build.sh)"
  hack/build.sh build
fi
say "building or reusing the control-plane binaries (hack/build-control-plane.sh)"
hack/build-control-plane.sh >/dev/null

if [ -d "$state/pids" ] && hack/testbed status >/dev/null 2>&1; then
  say "stopping the testbed already running in $state"
  hack/testbed down
fi

use_ours=0
if [ -x "$ours" ] && [ "${KCM_LOCAL_UP_UPSTREAM:-0}" != 1 ]; then use_ours=1; fi

if [ "$use_ours" = 1 ]; then
  say "starting the testbed in $state"
  hack/testbed up
  # shellcheck disable=SC1091
  source "$state/testbed.env"
  sharded=${KCM_LOCAL_UP_SHARDED_REPLICAS:-0}
  [[ "$sharded" =~ ^[0-9]+$ ]] && { [ "$sharded" = 0 ] || [ "$sharded" -ge 2 ]; } ||
    { echo "ERROR: KCM_LOCAL_UP_SHARDED_REPLICAS must be 0 or a number >= 2, not '$sharded'" >&2; exit 2; }
  # The flags deploy/ uses: leader election on our own Lease (the shipped RBAC allows only that
  # name), serving on loopback at a free port.
  flags=(--kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset
    --leader-elect-resource-name=kube-controller-manager-cpp --bind-address=127.0.0.1 --v=1)
  names=(kube-controller-manager)
  if [ "$sharded" -ge 2 ]; then
    # The testbed binds its controller-manager user to roles named as deploy/'s; the sharded
    # manifest's roles of the same names add the member Leases and the namespace informer.
    say "applying the roles of deploy/kube-controller-manager-sharded.yaml"
    awk 'BEGIN { RS = "\n---\n" } /\nkind: (Cluster)?Role\n/ { print "---"; print }' \
      deploy/kube-controller-manager-sharded.yaml |
      "$KCM_TESTBED_KUBECTL" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG" apply -f -
    flags+=(--sharding=namespace)
    names=()
    for i in $(seq 1 "$sharded"); do names+=("kube-controller-manager-$i"); done
  fi
  urls=()
  for name in "${names[@]}"; do
    say "starting OUR kube-controller-manager as $name ($ours)"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    hack/testbed run "$name" "$ours" "${flags[@]}" --secure-port="$port"
    urls+=("https://127.0.0.1:$port")
  done
  for i in "${!names[@]}"; do
    name=${names[$i]} url=${urls[$i]}
    for _ in $(seq 1 30); do
      curl -skf "$url/readyz" >/dev/null 2>&1 && break
      sleep 1
    done
    hack/testbed status >/dev/null ||
      { echo "ERROR: a kube-controller-manager exited (log: $state/logs/$name.log)" >&2; exit 1; }
    curl -skf "$url/readyz" >/dev/null ||
      { echo "ERROR: $name is not ready after 30s (log: $state/logs/$name.log)" >&2; exit 1; }
  done
  if [ "$sharded" -ge 2 ]; then
    controller="$sharded replicas of our kube-controller-manager sharded by namespace (logs: $state/logs/kube-controller-manager-*.log; health: ${urls[*]/%//readyz?verbose}; the shard map: kubectl -n kube-system get lease kube-controller-manager-cpp-shards -o yaml)"
  else
    controller="our kube-controller-manager (log: $state/logs/kube-controller-manager.log; health: ${urls[0]}/readyz?verbose)"
  fi
else
  say "starting the testbed in $state with the UPSTREAM kube-controller-manager"
  echo "NOTE: the upstream kube-controller-manager (deployment,replicaset controllers) is standing"
  echo "      in until this project's daemon exists at $ours."
  hack/testbed up --with-upstream-kcm
  # shellcheck disable=SC1091
  source "$state/testbed.env"
  controller="the UPSTREAM kube-controller-manager, standing in for ours (log: $state/logs/upstream-kube-controller-manager.log)"
fi

kubectl=("$KCM_TESTBED_KUBECTL" --kubeconfig="$KCM_TESTBED_ADMIN_KUBECONFIG")
say "applying hack/sample-deployment.yaml"
"${kubectl[@]}" apply -f hack/sample-deployment.yaml
say "waiting for the rollout (kubectl rollout status, timeout 180s)"
"${kubectl[@]}" -n kcm-demo rollout status deployment/hello --timeout=180s
"${kubectl[@]}" -n kcm-demo get deployment,replicaset,pods -o wide

cat <<EOF2

The local control plane is running; controllers: $controller.
Use it:
  export KUBECONFIG=$KCM_TESTBED_ADMIN_KUBECONFIG
  alias kubectl=$KCM_TESTBED_KUBECTL        # a kubectl matching the API server version
  kubectl get nodes
  kubectl -n kcm-demo scale deployment/hello --replicas=10
  kubectl -n kcm-demo set image deployment/hello hello=registry.k8s.io/pause:3.9
  kubectl -n kcm-demo rollout status deployment/hello
  (or: eval "\$(KCM_TESTBED_DIR=$state hack/testbed env)")
Stop it:
  KCM_TESTBED_DIR=$state hack/testbed down
EOF2
