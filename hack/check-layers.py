#!/usr/bin/env python3
"""The dependency rule of docs/architecture.md, checked on every #include of the source tree.

Each component (a directory under pkg/, controllers/ or cmd/) has a layer; a file may include
headers of its own component and of components in lower layers only, never of its own layer's
other components or of a higher one. Tests, benchmarks, examples and fuzz targets may include
anything. Usage:
  hack/check-layers.py              check the tree (exit 1 and one line per violation)
  hack/check-layers.py --self-test  prove the check catches an include that runs up the layers
"""
import os
import re
import sys

from source_tree import tree_files

# Lowest first. Components of one layer do not include each other.
LAYERS = [
    ["pkg/util"],
    ["pkg/metrics", "pkg/api"],
    ["pkg/client", "pkg/workqueue", "pkg/cache"],
    ["pkg/informers", "pkg/record", "pkg/runtime", "pkg/server"],
    ["pkg/controller", "pkg/leaderelection"],
    ["controllers/deployment", "controllers/replicaset", "pkg/sharding"],
    ["cmd/kube-controller-manager"],
]
RANK = {c: i for i, layer in enumerate(LAYERS) for c in layer}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def component(path):
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 and parts[0] in ("pkg", "controllers", "cmd") else None


def violations(files):
    """files: iterable of (path, text). Yields one message per include that breaks the rule."""
    for path, text in files:
        src = component(path)
        if src is None:
            continue
        if src not in RANK:
            yield f"{path}: component {src} has no layer in hack/check-layers.py"
            continue
        for m in INCLUDE.finditer(text):
            dst = component(m.group(1))
            if dst is None or dst == src:
                continue
            if dst not in RANK:
                yield f"{path}: includes {m.group(1)} of {dst}, which has no layer"
            elif RANK[dst] >= RANK[src]:
                yield (f"{path}: includes {m.group(1)}: {src} (layer {RANK[src]}) may not "
                       f"depend on {dst} (layer {RANK[dst]})")


def self_test():
    bad = [("pkg/cache/reflector.cc", '#include "pkg/informers/listers.h"\n'),
           ("pkg/runtime/controller.cc", '#include "pkg/record/event_recorder.h"\n'),
           ("pkg/newthing/x.cc", '#include "pkg/util/result.h"\n')]
    good = [("controllers/deployment/sync.cc", '#include "pkg/runtime/controller.h"\n'
             '#include "controllers/deployment/util/deployment_util.h"\n')]
    found = list(violations(bad))
    assert len(found) == 3, found
    assert not list(violations(good)), list(violations(good))
    print("check-layers self-test: 3 violations caught, 0 false alarms")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = list(violations(tree_files(root)))
    for v in found:
        print(v)
    if found:
        print(f"check-layers: {len(found)} include(s) break the dependency rule "
              "(docs/architecture.md)")
        return 1
    print(f"check-layers: every include follows the dependency rule ({len(RANK)} components)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
