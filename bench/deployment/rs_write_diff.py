#!/usr/bin/env python3
"""Per-ReplicaSet write sequences of two write_amplification.sh runs (WA_BODIES=1), side by side.

Usage: bench/deployment/rs_write_diff.py <out-dir> [--all]

Reads <out-dir>/ours.audit and <out-dir>/upstream.audit (audit lines at RequestResponse level for
ReplicaSet writes) and prints, for each ReplicaSet (keyed by its template's image, the one thing
the scenario changes between templates), the writes each controller manager sent in
order: the verb and subresource, the response code, and which fields changed against the object
the server held after the previous write (spec.replicas, the deployment.kubernetes.io/
annotations, status fields). Writes that changed nothing are marked "no-op". Summary counts per
kind of change follow. Without --all only ReplicaSets whose sequences differ are printed.
"""
import collections
import json
import sys

ANN = "deployment.kubernetes.io/"
STATUS = ["observedGeneration", "replicas", "fullyLabeledReplicas", "readyReplicas",
          "availableReplicas", "terminatingReplicas"]


def fields(obj):
    """The fields a write can change, flattened to name -> value."""
    out = {}
    if not obj or obj.get("kind") != "ReplicaSet":
        return out
    meta = obj.get("metadata", {})
    for k, v in (meta.get("annotations") or {}).items():
        if k.startswith(ANN):
            out["ann." + k[len(ANN):]] = v
    out["spec.replicas"] = obj.get("spec", {}).get("replicas")
    st = obj.get("status") or {}
    for k in STATUS:
        out["status." + k] = st.get(k, 0 if k != "observedGeneration" else None)
    conds = st.get("conditions") or []
    out["status.conditions"] = json.dumps(
        [(c.get("type"), c.get("status"), c.get("reason"), c.get("message")) for c in conds])
    out["meta.generation"] = meta.get("generation")
    return out


def load(path):
    seqs = collections.defaultdict(list)  # image -> [(label, changes)]
    state = {}
    key = {}  # ReplicaSet name -> its template's image (names differ if the hashes do)
    for line in open(path):
        e = json.loads(line)
        ref = e.get("objectRef", {})
        if ref.get("resource") != "replicasets":
            continue
        name = ref.get("name") or (e.get("responseObject") or {}).get("metadata", {}).get("name")
        sub = ref.get("subresource", "")
        code = e.get("responseStatus", {}).get("code")
        verb = e["verb"] + ("/" + sub if sub else "")
        req = e.get("requestObject")
        resp = e.get("responseObject")
        if e["verb"] == "create" and req:
            key[name] = req["spec"]["template"]["spec"]["containers"][0]["image"]
        before = state.get(name, {})
        if e["verb"] == "patch":
            # A patch body is partial: report its keys, then take the server's answer as state.
            after = fields(resp) if code and code < 300 else before
            changed = sorted(k for k in after if after.get(k) != before.get(k))
        elif e["verb"] == "delete":
            changed = []
        else:
            want = fields(req)
            if sub == "status":
                want = {k: v for k, v in want.items() if k.startswith("status.")}
            else:
                want = {k: v for k, v in want.items() if not k.startswith("status.")}
            changed = sorted(k for k, v in want.items() if before.get(k) != v and k != "meta.generation")
        detail = ", ".join(f"{k}={(fields(req) if e['verb'] != 'patch' else fields(resp)).get(k)}"
                           for k in changed)
        if e["verb"] == "create":
            detail = f"replicas={fields(req).get('spec.replicas')}"
        label = f"{verb} {code}" + (f" [{detail}]" if detail else (" no-op" if e["verb"] in ("update", "patch") else ""))
        seqs[key.get(name, name)].append((label, changed, e["verb"], sub, code))
        if code and code < 300 and resp:
            state[name] = fields(resp)
    return seqs


def summary(seqs):
    c = collections.Counter()
    for writes in seqs.values():
        for _, changed, verb, sub, code in writes:
            kind = verb + ("/" + sub if sub else "")
            if code == 409:
                c[f"{kind} 409"] += 1
                continue
            if code == 404:  # e.g. a DELETE of a ReplicaSet that was already gone
                c[f"{kind} 404"] += 1
            if verb in ("update", "patch"):
                if not changed:
                    c[f"{kind} no-op"] += 1
                for k in changed:
                    c[f"{kind} changes {k}"] += 1
            c[f"{kind} total"] += 1
    return c


def main():
    out = sys.argv[1]
    show_all = "--all" in sys.argv
    ours, up = load(f"{out}/ours.audit"), load(f"{out}/upstream.audit")
    for name in sorted(set(ours) | set(up)):
        a = [w[0] for w in ours.get(name, [])]
        b = [w[0] for w in up.get(name, [])]
        if a == b and not show_all:
            continue
        print(f"== {name}: ours {len(a)} writes, upstream {len(b)}")
        width = max([len(x) for x in a] + [10])
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else ""
            y = b[i] if i < len(b) else ""
            mark = " " if x == y else "|"
            print(f"  {x:{width}} {mark} {y}")
    so, su = summary(ours), summary(up)
    print(f"\n{'change':60} {'ours':>6} {'upstream':>8}")
    for k in sorted(set(so) | set(su)):
        print(f"{k:60} {so.get(k, 0):6} {su.get(k, 0):8}")


if __name__ == "__main__":
    main()
