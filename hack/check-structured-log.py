#!/usr/bin/env python3
"""Every log line of the daemon is klog's structured form (docs/architecture.md, "Logs").

Fails on a glog stream statement (LOG(...) <<, VLOG(n) <<, LOG_IF, LOG_EVERY_N, PLOG, DLOG,
SYSLOG, ...) in pkg/, controllers/ or cmd/ outside pkg/util/klog*: those lines would carry a free
text message instead of a quoted message and key/value pairs. Structured calls are
klog::Logger's Info/V(n).Info/Error/Warning and the KLOG_INFOS, KLOG_V_INFOS, KLOG_WARNINGS and
KLOG_ERRORS macros (pkg/util/klog.h, pkg/util/klog_logger.h). CHECK stays allowed: it ends the
process. Usage:
  hack/check-structured-log.py              check the tree (exit 1 and one line per statement)
  hack/check-structured-log.py --self-test  prove the check catches each form and passes the rest
"""
import os
import re
import sys

from source_tree import tree_files

# A glog logging macro used as a statement: the name, then its argument list. Word boundaries
# keep KLOG_INFOS, VLOG_IS_ON and SYSLOG_WARNING-like constants out.
STREAM = re.compile(
    r"(?<![A-Za-z0-9_])(?:D?V?LOG|LOG_IF|LOG_EVERY_N|LOG_FIRST_N|LOG_IF_EVERY_N|LOG_EVERY_T|"
    r"P?LOG|PLOG_IF|DLOG_IF|VLOG_IF|VLOG_EVERY_N|SYSLOG|SYSLOG_IF|LOG_STRING|LOG_TO_SINK)\s*\(")
COMMENT = re.compile(r"//.*?$|/\*.*?\*/", re.S | re.M)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def exempt(path):
    return path.startswith("pkg/util/klog")


def violations(files):
    """files: iterable of (path, text). Yields one message per glog stream statement."""
    for path, text in files:
        if exempt(path):
            continue
        # Comments and string literals may name the macros; blank them, keeping line breaks.
        code = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        code = STRING.sub(lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', code)
        for m in STREAM.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            yield f"{path}:{line}: glog stream statement {m.group(0).rstrip('(').strip()}(...)"


def self_test():
    bad = [("pkg/cache/reflector.cc", 'LOG(INFO) << "x";\n'),
           ("pkg/cache/reflector.cc", '  VLOG(4) << "x";\n'),
           ("controllers/deployment/sync.cc", 'LOG_IF(WARNING, a) << "x";\n'),
           ("cmd/kube-controller-manager/main.cc", 'PLOG(ERROR) << "open";\n'),
           ("pkg/server/secure_server.cc", 'LOG_EVERY_N(WARNING, 100) << "x";\n'),
           ("pkg/server/secure_server.cc", 'x; DLOG(INFO) << "x";\n')]
    good = [("pkg/cache/reflector.cc", 'KLOG_INFOS("LOG(INFO)", "k", 1);\n'
             'KLOG_V_INFOS(4, "m");\nif (VLOG_IS_ON(2)) {}\n// LOG(INFO) << "old";\n'
             'logger_.V(4).Info("m");\nCHECK(x) << "dies";\n/* VLOG(1) */\n'),
            ("pkg/util/klog.cc", 'google::LogMessage(f, l, s).stream() << x; LOG(INFO) << 1;\n')]
    found = [v for f in bad for v in violations([f])]
    assert len(found) == len(bad), found
    assert not list(violations(good)), list(violations(good))
    print(f"check-structured-log self-test: {len(bad)} statements caught, 0 false alarms")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = list(violations(tree_files(root)))
    for v in found:
        print(v)
    if found:
        print(f"check-structured-log: {len(found)} glog stream statement(s); use klog::Logger or "
              "KLOG_INFOS/KLOG_V_INFOS/KLOG_WARNINGS/KLOG_ERRORS (pkg/util/klog.h)")
        return 1
    print("check-structured-log: every log statement in pkg/, controllers/, cmd/ is structured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
