#!/usr/bin/env python3
"""The figures of bench/sharding/move_bench.sh, from its work dir, the testbed's audit log and
the replicas' logs (its header says what each figure is).

Usage: move_report.py <work dir> <audit log> <replica log>...  (replica i is the i-th log)
"""
import datetime
import json
import os
import re
import sys
import urllib.parse

work, audit_path, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
YEAR = datetime.datetime.now(datetime.timezone.utc).year
HEAD = re.compile(r'^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) +\d+ \S+\] "([^"]*)"(.*)$')
SELECTOR = re.compile(r'shardSelector="([^"]*)"')
RANGE = re.compile(r"shardRange\(object\.metadata\.namespace, '0x([0-9a-fA-F]+)', '0x([0-9a-fA-F]+)'\)")


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def ranges_of(selector):
    # [start, end), end exclusive as api::ShardSelector writes it
    return [(int(a, 16), int(b, 16)) for a, b in RANGE.findall(selector)]


def holds(ranges, h):
    return any(a <= h < b for a, b in ranges)


def klog_time(m):
    mon, day, hh, mm, ss, us = (int(x) for x in m.groups()[:6])
    return datetime.datetime(YEAR, mon, day, hh, mm, ss, us, tzinfo=datetime.timezone.utc).timestamp()


# ---- this script's events -------------------------------------------------------------------
t_moves = t_kills = t_end = None
terms, kills = {}, {}  # replica -> time of the signal
for line in open(os.path.join(work, "events")):
    f = line.split()
    t = float(f[0])
    if f[1] == "moves":
        t_moves = t
    elif f[1] == "kills":
        t_kills = t
    elif f[1] == "end":
        t_end = t
    elif f[1] == "term":
        terms[int(f[2])] = t
    elif f[1] == "kill":
        kills[int(f[2])] = t


# ---- the serve calls ------------------------------------------------------------------------
class Call:
    def __init__(self, replica, selector, serving):
        self.replica, self.selector, self.serving = replica, selector, serving
        self.ranges = ranges_of(selector)
        self.synced = self.stopping = self.stopped = None
        self.killed = False


calls = []
for replica, path in enumerate(logs):
    open_calls = {}
    last = None
    for line in open(path, errors="replace"):
        m = HEAD.match(line)
        if not m:
            continue
        t = klog_time(m)
        last = t
        msg, rest = m.group(7), m.group(8)
        sel = SELECTOR.search(rest)
        if not sel:
            continue
        sel = sel.group(1)
        if msg == "Serving shard ranges":
            c = Call(replica, sel, t)
            open_calls[sel] = c
            calls.append(c)
        elif msg == "Caches are synced" and sel in open_calls and open_calls[sel].synced is None:
            open_calls[sel].synced = t
        elif msg == "Stopping shard ranges" and sel in open_calls:
            open_calls[sel].stopping = t
        elif msg == "Stopped shard ranges" and sel in open_calls:
            open_calls.pop(sel).stopped = t
    for c in open_calls.values():  # killed, or still running at the end of its log
        if replica in kills:
            c.stopping = c.stopped = kills[replica]
            c.killed = True
        else:
            c.stopping = c.stopping or last
            c.stopped = last

namespaces = [n.strip() for n in open(os.path.join(work, "namespaces")) if n.strip()]
objects = {}  # (resource, namespace) -> count
for line in open(os.path.join(work, "objects")):
    r, ns, n = line.split()
    objects[(r, ns)] = int(n)

# ---- unserved gaps and the guarantee, per namespace -------------------------------------------
gaps = {"leave": [], "rebalance": [], "kept, restarted": [], "kill": []}
handovers = set()  # (old call, new call) pairs of moves
overlaps = []
for ns in namespaces:
    h = fnv1a64(ns)
    mine = sorted((c for c in calls if holds(c.ranges, h)), key=lambda c: c.serving)
    # No double writes: a call of another replica starts only after the previous one stopped.
    for i, a in enumerate(mine):
        for b in mine[i + 1:]:
            if a.replica != b.replica and b.serving < a.stopped and a.serving < b.stopped:
                overlaps.append((ns, a, b))
    served = [c for c in mine if c.synced is not None and c.synced < c.stopping]
    served.sort(key=lambda c: c.synced)
    for prev, nxt in zip(served, served[1:]):
        start, end = prev.stopping, nxt.synced
        if end <= start or not (t_moves <= start < t_end):
            continue
        if prev.killed:
            kind = "kill"
        elif prev.replica in terms and terms[prev.replica] <= start <= terms[prev.replica] + 5:
            kind = "leave"
        elif prev.replica != nxt.replica:
            kind = "rebalance"
        else:
            kind = "kept, restarted"
        gaps[kind].append({
            "ns": ns, "gap": end - start, "stop": prev.stopped - prev.stopping,
            "handover": nxt.serving - prev.stopped, "start": nxt.synced - nxt.serving})
        if prev.replica != nxt.replica:
            handovers.add((id(prev), id(nxt), kind))


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, -(-p * len(v) // 100) - 1))  # nearest rank
    return v[int(k)]


def fmt(v):
    return "-" if v is None else f"{v * 1000:,.0f}"


print()
print("unserved time per moved namespace, ms (stop = old call cancelled -> joined; hand-over ="
      " joined -> new owner serving; start = serving -> caches synced)")
print(f"{'move':28} {'count':>5} {'ranges':>6} {'p50':>6} {'p99':>6} {'max':>6}"
      f"   {'stop p50/p99':>13} {'hand-over p50/p99':>17} {'start p50/p99':>13}")
rows = [("graceful (leave + rebalance)", gaps["leave"] + gaps["rebalance"],
         {"leave", "rebalance"}),
        ("  leave (SIGTERM)", gaps["leave"], {"leave"}),
        ("  rebalance (join)", gaps["rebalance"], {"rebalance"}),
        ("kill -9", gaps["kill"], {"kill"}),
        ("kept range, call restarted", gaps["kept, restarted"], set())]
for name, g, kinds in rows:
    v = [x["gap"] for x in g]
    parts = "   ".join(
        f"{fmt(pct([x[p] for x in g], 50)):>6}/{fmt(pct([x[p] for x in g], 99)):<6}"
        for p in ("stop", "handover", "start"))
    n_ranges = sum(1 for _, _, k in handovers if k in kinds) if kinds else "-"
    print(f"{name:28} {len(v):>5} {n_ranges:>6} {fmt(pct(v, 50)):>6} {fmt(pct(v, 99)):>6} "
          f"{fmt(max(v) if v else None):>6}   {parts}")
print(f"no double writes: {len(overlaps)} overlapping serve calls of two replicas"
      f" (a new owner's call starting before the old owner's call was joined)")
for ns, a, b in overlaps[:5]:
    print(f"  {ns}: replica {a.replica} {a.serving:.3f}-{a.stopped:.3f},"
          f" replica {b.replica} {b.serving:.3f}-{b.stopped:.3f}")

# ---- re-list cost ---------------------------------------------------------------------------
if not os.path.exists(audit_path):
    sys.exit(0)
ours = [c for c in calls if t_moves <= c.serving < t_end]
by_selector = {}
for c in ours:
    by_selector.setdefault(c.selector, []).append(c)
cluster = {}
for (r, ns), n in objects.items():
    cluster[r] = cluster.get(r, 0) + n
whole, matched, unmatched = [], {}, 0
for line in open(audit_path, errors="replace"):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("verb") != "list" or e.get("stage") != "ResponseComplete":
        continue
    if "kube-controller-manager" not in e.get("userAgent", ""):
        continue
    t = datetime.datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00")).timestamp()
    if not (t_moves <= t < t_end):
        continue
    uri = urllib.parse.urlsplit(e["requestURI"])
    q = urllib.parse.parse_qs(uri.query)
    resource = e.get("objectRef", {}).get("resource", "?")
    sel = q.get("shardSelector", [None])[0]
    if sel is None:
        whole.append((resource, e["requestURI"]))
        continue
    cands = [c for c in by_selector.get(sel, []) if c.serving <= t]
    if not cands:
        unmatched += 1
        continue
    c = max(cands, key=lambda c: c.serving)
    listed = sum(n for (r, ns), n in objects.items() if r == resource and holds(c.ranges, fnv1a64(ns)))
    matched.setdefault(id(c), []).append((resource, listed))
per_call = [(len(v), sum(n for _, n in v)) for v in matched.values()]


def before(c, ns):
    """Who served `ns` just before call `c` started: "moved" (another replica), "kept" (the same
    replica, through a call it stopped) or "new" (nobody in this run)."""
    h = fnv1a64(ns)
    prev = [p for p in calls if p is not c and holds(p.ranges, h) and p.serving < c.serving]
    if not prev:
        return "new"
    return "kept" if max(prev, key=lambda p: p.serving).replica == c.replica else "moved"


listed_by = {"moved": 0, "kept": 0, "new": 0}
for c in ours:
    if id(c) not in matched:
        continue
    for ns in namespaces:
        if holds(c.ranges, fnv1a64(ns)):
            listed_by[before(c, ns)] += sum(n for (r, n2), n in objects.items() if n2 == ns)
total = sum(cluster.values())
print()
print(f"re-list cost: {len(ours)} serve calls started while the moves ran; their LISTs of pods,"
      f" ReplicaSets, Deployments (audit log):")
print(f"  LISTs with the call's shardSelector: {sum(n for n, _ in per_call)}"
      f" ({len(per_call)} calls; per call p50 {pct([n for n, _ in per_call], 50)},"
      f" max {max((n for n, _ in per_call), default=0)})")
print(f"  objects listed per call: p50 {pct([o for _, o in per_call], 50)},"
      f" max {max((o for _, o in per_call), default=0)}, of the cluster's {total}"
      f" ({', '.join(f'{r} {n}' for r, n in sorted(cluster.items()))})")
print(f"  objects listed, summed over the calls: {sum(o for _, o in per_call)}: of namespaces moved"
      f" in {listed_by['moved']}, of namespaces the replica kept (its call restarted)"
      f" {listed_by['kept']}, of namespaces nobody served before {listed_by['new']};"
      f" one whole-cluster relist lists {total}")
print(f"  LISTs with a shardSelector no call of the run started: {unmatched}")
print(f"  LISTs without shardSelector (whole cluster): {len(whole)}")
for r, uri in whole[:5]:
    print(f"    {r} {uri}")
