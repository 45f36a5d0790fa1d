#!/usr/bin/env bash
# Where an idle daemon's RSS goes, on the objects bench/daemon/scale_rss.sh created (run that once
# with KCM_BENCH_KEEP=1 first). Starts our kube-controller-manager as scale_rss.sh does, waits
# until it is idle (CPU under 2 % for 10 s), then prints: VmRSS/VmHWM, /proc/<pid>/smaps_rollup
# (anonymous vs file-backed), the thread count and its threads' names, and glibc's per-arena
# statistics (malloc_stats(), called through gdb when gdb is installed) and the file-backed RSS
# by mapped file (the binary and each shared library). With KCM_HEAPTRACK=1 the
# daemon runs under heaptrack (Debian's `heaptrack`, for measuring only) and is killed with SIGKILL
# once idle, so that heaptrack's "leaked" allocations are those live while idle; the top
# allocation sites are then printed with heaptrack_print.
#
# Usage: bench/daemon/idle_breakdown.sh [build-dir]
# Environment: KCM_TESTBED_DIR (the testbed scale_rss.sh used), MALLOC_ARENA_MAX etc. pass through
# to the daemon, KCM_HEAPTRACK=1, KCM_BREAKDOWN_OUT (directory for the heaptrack file and the
# logs, default $KCM_TESTBED_DIR/logs).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
QPS=${QPS:-1000}
BURST=${BURST:-1500}
NODES=1
dir=${KCM_TESTBED_DIR:-/tmp/kcm-scale-rss}
[ -f "$dir/testbed.env" ] || { echo "no testbed in $dir: run bench/daemon/scale_rss.sh first" >&2; exit 1; }
# shellcheck source=bench/lib/controller_bench.sh
source bench/lib/controller_bench.sh
bench_testbed_up
out=${KCM_BREAKDOWN_OUT:-$dir/logs}
mkdir -p "$out"
log="$out/idle-breakdown.log"

cmd=("$ours" --kubeconfig="$KCM_TESTBED_KCM_KUBECONFIG" --controllers=deployment,replicaset
  --leader-elect=false --bind-address=127.0.0.1 --secure-port="$(free_port)"
  --kube-api-qps="$QPS" --kube-api-burst="$BURST")
if [ "${KCM_HEAPTRACK:-0}" = 1 ]; then
  rm -f "$out"/heaptrack.idle.*
  heaptrack -o "$out/heaptrack.idle" "${cmd[@]}" >"$log" 2>&1 &
  launcher=$!
  # heaptrack runs the daemon as its child.
  pid=""
  for _ in $(seq 100); do
    pid=$(pgrep -P "$launcher" -x kube-controller || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "daemon did not start under heaptrack" >&2; exit 1; }
else
  "${cmd[@]}" >"$log" 2>&1 &
  pid=$!
  launcher=$pid
fi
wait_synced "$log"
wait_idle "$pid"

echo "== $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-unset}"
grep -E 'VmRSS|VmHWM' "/proc/$pid/status"
echo "== smaps_rollup"
grep -E '^(Rss|Anonymous|Private_Clean|Shared_Clean):' "/proc/$pid/smaps_rollup"
echo "== threads: $(ls "/proc/$pid/task" | wc -l)"
for t in /proc/"$pid"/task/*; do cat "$t/comm"; done | sort | uniq -c | sort -rn
echo "== anonymous mappings by size (kB, top 12)"
awk '/^[0-9a-f]+-[0-9a-f]+ / {name = $6} /^Rss:/ {rss = $2} /^Anonymous:/ {if ($2 > 0) print $2, rss, name}' \
  "/proc/$pid/smaps" | sort -rn | head -12 || true
echo "== file-backed RSS by file (kB, top 15)"
awk '/^[0-9a-f]+-[0-9a-f]+ / {name = $6} /^Rss:/ {if (name ~ /^\//) rss[name] += $2}
  END {for (n in rss) if (rss[n] > 0) print rss[n], n}' "/proc/$pid/smaps" | sort -rn | head -15 || true
if command -v gdb >/dev/null; then
  echo "== malloc_stats (per arena: system bytes, in-use bytes)"
  gdb -p "$pid" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || true
  sleep 0.2
  sed -n '/^Arena 0:/,/^max mmap bytes/p' "$log" | tail -n 200
fi
# One table of where the RSS goes: file-backed (code and read-only data of the binary and each
# library, shared with any other process mapping the same file) and anonymous, split into thread
# stacks (with each thread's static TLS, which glibc places at the stack's top and clears when
# the thread starts, so it is resident whether or not the thread uses it), the libraries' own
# writable data, and the malloc heap, whose resident pages are malloc's bytes in use plus the free
# holes in pages that also hold live chunks (malloc_trim returns only whole free pages). Then each
# module whose static TLS is 1 KiB or more (readelf).
echo "== summary (kB)"
python3 - "$pid" "$log" <<'PY'
import re, subprocess, sys
pid, log = sys.argv[1], sys.argv[2]
maps, cur = [], None
for line in open(f"/proc/{pid}/smaps"):
    m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
    if m:
        cur = {"kb": (int(m.group(2), 16) - int(m.group(1), 16)) // 1024, "perm": m.group(3),
               "name": m.group(4).strip(), "Rss": 0, "Anonymous": 0}
        maps.append(cur)
    elif line.split(":")[0] in ("Rss", "Anonymous"):
        cur[line.split(":")[0]] = int(line.split()[1])
threads = len(subprocess.run(["ls", f"/proc/{pid}/task"], capture_output=True,
                             text=True).stdout.split())
files = [m for m in maps if m["name"].startswith("/")]
text = sum(m["Rss"] - m["Anonymous"] for m in files if "x" in m["perm"])
file_other = sum(m["Rss"] - m["Anonymous"] for m in files if "x" not in m["perm"])
lib_anon = sum(m["Anonymous"] for m in files)
unnamed = [m for m in maps if not m["name"] or m["name"] == "[heap]"]
# A thread's stack is the default 8 MiB mapping (RLIMIT_STACK); the main thread's is [stack].
stacks = [m for m in unnamed if m["kb"] == 8192]
stack_kb = sum(m["Anonymous"] for m in stacks) + sum(
    m["Anonymous"] for m in maps if m["name"] == "[stack]")
heap_kb = sum(m["Anonymous"] for m in unnamed if m["kb"] != 8192)
in_use = None
text_log = open(log, errors="replace").read()
totals = re.findall(r"Total \(incl\. mmap\):\s*system bytes\s*=\s*(\d+)\s*in use bytes\s*=\s*(\d+)",
                    text_log)
if totals:
    in_use = int(totals[-1][1]) // 1024
rss = sum(m["Rss"] for m in maps)
rows = [("RSS", rss), ("file-backed: code (r-x)", text), ("file-backed: other", file_other),
        ("anonymous: libraries' writable data", lib_anon),
        (f"anonymous: {threads} thread stacks incl. static TLS", stack_kb),
        ("anonymous: malloc heap (arenas, mmapped chunks)", heap_kb)]
if in_use is not None:
    rows += [("  of it malloc in use (malloc_stats)", in_use),
             ("  of it free but resident", heap_kb - in_use)]
for name, kb in rows:
    print(f"{name:52} {kb:8d}")
# Static TLS by module (readelf's TLS segment, memory size): each thread clears all of it.
tls = []
for path in sorted({m["name"] for m in files}):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "TLS" and int(f[5], 16) >= 1024:
            tls.append((int(f[5], 16), path))
for size, path in sorted(tls, reverse=True):
    print(f"static TLS {size} B a thread ({size * threads // 1024} kB in all): {path}")
PY
if [ "${KCM_HEAPTRACK:-0}" = 1 ]; then
  kill -KILL "$pid"
  wait "$launcher" || true
  file=$(ls "$out"/heaptrack.idle.* | head -1)
  echo "== heaptrack: $file"
  heaptrack_print -f "$file" --print-leaks 1 --print-peaks 0 --print-allocators 0 \
    --print-temporary 0 -n 40 2>/dev/null | sed -n '/MOST MEMORY LEAKED/,$p' | head -400
else
  kill -TERM "$pid"
  wait "$pid" || true
fi
