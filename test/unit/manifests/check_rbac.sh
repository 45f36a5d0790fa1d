#!/usr/bin/env bash
# The shipped RBAC is least privilege: no wildcard anywhere, no access to secrets or configmaps,
# no cluster-wide lease rights, and exactly the resources the two controllers touch. The sharded
# variant's Lease rights (any Lease name: member Leases are named at run time) stay in a Role in
# kube-system.
set -euo pipefail
rbac="$1/deploy/rbac.yaml"
fail() { echo "check_rbac: $*" >&2; exit 1; }
grep -nE "[\"'*]\\*|^\s*-\s*\*" "$rbac" && fail "wildcard in $rbac"
grep -nE 'secrets|configmaps|nodes' "$rbac" && fail "unexpected resource in $rbac"
for r in deployments deployments/status replicasets replicasets/status pods events leases \
         tokenreviews subjectaccessreviews; do
  grep -q "\b$r\b" "$rbac" || fail "$r missing from $rbac"
done
# Lease get/update must be limited to our own Lease name.
awk '/resourceNames:/{n=1} n && /kube-controller-manager-cpp/{found=1} END{exit !found}' "$rbac" ||
  fail "lease rights are not limited by resourceNames"

sharded="$1/deploy/kube-controller-manager-sharded.yaml"
grep -nE "[\"'*]\\*|^\s*-\s*\*" "$sharded" && fail "wildcard in $sharded"
# Every document that grants leases must be a Role in kube-system.
awk '/^---/{check(); kind=""; ns=""; leases=0; next}
     /^kind:/{kind=$2} /^  namespace:/{ns=$2} /^  - leases$/{leases=1}
     function check() { if (leases && (kind != "Role" || ns != "kube-system")) bad=1 }
     END{check(); exit bad}' "$sharded" || fail "lease rights outside a kube-system Role in $sharded"
grep -q -- "- leases" "$sharded" || fail "leases missing from $sharded"
echo "check_rbac: ok"
