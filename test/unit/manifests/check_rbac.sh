#!/usr/bin/env bash
# The shipped RBAC is least privilege: no wildcard anywhere, no access to secrets or configmaps,
# no cluster-wide lease rights, and exactly the resources the two controllers touch.
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
echo "check_rbac: ok"
