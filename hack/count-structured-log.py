#!/usr/bin/env python3
"""Counts how many lines of a controller-manager log are in klog's structured form.

A line is structured when it is
  - klog's text form: the header (`I1206 12:00:00.000000  4242 file.go:42] `), then a quoted
    message, then only key=value pairs whose values are quoted strings, numbers or booleans
    (klog's InfoS/ErrorS; a multi-line value, `key=<` ... `>`, makes its lines unstructured), or
  - klog's JSON form: one JSON object with a "msg" field (--logging-format=json).
Everything else (a header followed by free text, a line without a header) is not. Usage:
  hack/count-structured-log.py FILE [--list]   the totals; --list prints each unstructured line
  hack/count-structured-log.py --self-test
"""
import json
import re
import sys

HEADER = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6}\s+\d+ [^ \]]+:\d+\] ")
QUOTED = r'"(?:\\.|[^"\\])*"'
VALUE = rf'(?:{QUOTED}|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false)'
BODY = re.compile(rf"^{QUOTED}(?: [A-Za-z_][A-Za-z0-9_.\-/]*={VALUE})*$")


def structured(line):
    line = line.rstrip("\n")
    if line.startswith("{"):
        try:
            obj = json.loads(line)
        except ValueError:
            return False
        return isinstance(obj, dict) and "msg" in obj
    m = HEADER.match(line)
    return bool(m) and bool(BODY.match(line[m.end():]))


def self_test():
    yes = ['I1206 12:00:00.000000    4242 sync.cc:42] "Started syncing deployment" '
           'deployment="ns/web" replicas=3 paused=false ratio=0.5',
           'E1206 12:00:00.000000 1 x.go:1] "Failed" err="a \\"b\\" c" logger="deployment-controller"',
           '{"ts":1.0,"caller":"a.cc:1","msg":"m","v":0}']
    no = ['I1206 12:00:00.000000 1 x.go:1] attempting to acquire leader lease kube-system/x...',
          'I1206 12:00:00.000000 1 x.go:1] "m" flags=<',
          '\t--v=4', 'W1206 12:00:00.000000 1 x.go:1] "m" k=v', 'plain text', '{"no":"msg"}']
    assert all(structured(l) for l in yes), [l for l in yes if not structured(l)]
    assert not any(structured(l) for l in no), [l for l in no if structured(l)]
    print(f"count-structured-log self-test: {len(yes)} structured, {len(no)} not")


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
        return 0
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    total = good = 0
    rest = []
    with open(args[0], encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            total += 1
            if structured(line):
                good += 1
            else:
                rest.append(line.rstrip("\n"))
    pct = 100.0 * good / total if total else 0.0
    print(f"{args[0]}: {total} lines, {good} structured ({pct:.1f} %), {total - good} not")
    if "--list" in args:
        for line in rest:
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
