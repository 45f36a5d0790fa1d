#!/usr/bin/env python3
"""Every behaviour item a comment cites must exist in docs/behaviour/ (docs/behaviour/README.md).

Citations are found in comments of C++, shell, Python and CMake files and in the text of the
Markdown docs:
  - item IDs with a letter: R13 (replicaset.md), D2 (deployment.md), L3, S1, M5, E2 (daemon.md),
    P1, P1b (performance.md), also in ranges such as "L2-L5" or "D1–D18";
  - numbered items of client-and-cache.md (2.7) and its sections (2): after the word "behaviour"
    or "item" ("behaviour 3.3, 3.4"), alone in parentheses ("(6.1)"), or opening a comment
    ("// 2.4: ...", the form test cases use);
  - "decision N": the numbered Decisions of docs/architecture.md.
Forms that point outside the repository are errors too: "spec <id>" (the checklists this project
started from are not part of it), a project issue number ("issue 13"; "upstream issue N" is
fine), or a path into ../shared. Files listed in hack/behaviour-refs-allowlist.txt may still use
those forms (they are being edited elsewhere); an undefined ID is an error everywhere. Usage:
  hack/check-behaviour-refs.py              check the tree (exit 1, one line per bad citation)
  hack/check-behaviour-refs.py --where ID   list the files (tests first) that cite ID
  hack/check-behaviour-refs.py --self-test  prove the check catches bogus citations
  hack/check-behaviour-refs.py --self-test-names  prove the name check below catches a missing name

Names cited in docs/architecture.md and docs/design/*.md must exist in the tree. Every span in
backticks there is read as one of:
  - a path: it contains "/" or ends in a file extension (.cc .h .md .py .sh .yaml .cmake .txt
    .json ...); it must name a file or directory from the repository's root ("pkg/cache",
    "hack/check-layers.py") or the end of one ("app/run.cc", "internal/raw_json.h"), braces
    expand ("test/unit/{record,leaderelection}"), and a bare file name ("hash.h") must be the name
    of some file in the tree. Spans that start with "/", "~",
    "$" or "." or hold "<", "*" or ":" (placeholders, absolute or run-time paths, URLs) are not
    read as paths;
  - a flag: "--name" or "--name=value"; "name" must occur in the sources (flags.cc spells it);
  - a C++ or upstream name: letters, digits, "_" and "::", optionally followed by "()"
    ("SharedIndexInformer", "cache::ListAllPages", "Run()"); each "::"-separated part must occur
    as a word in the sources (pkg, controllers, cmd, test, bench, fuzz, examples, hack, cmake,
    config, deploy, CMakeLists.txt; this script excluded) or be the name of a file in the tree;
  - anything else (spans with spaces, "=", quotes, numbers) is prose and not checked.
A name that exists only upstream (Go's "syncDeployment", client-go's "tools/cache") is written
with the word "upstream", "client-go" or "controller-runtime" (each also with "'s") right before
its backticks: upstream `syncDeployment`, client-go `tools/cache`. Such a span is not checked.
Anything else that is neither ours nor upstream's (a run-time path, a MIME type, an environment
variable of another program) is written without backticks.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SCANNED_DIRS = ("pkg", "controllers", "cmd", "test", "bench", "fuzz", "hack", "examples", "cmake",
                "config", "deploy", "docs")
SCANNED_TOP = ("CMakeLists.txt", "README.md", "Dockerfile")
CODE_EXT = (".cc", ".h", ".cpp")
HASH_EXT = (".sh", ".py", ".cmake", ".yaml", ".yml", ".txt")  # '#' comments
HASH_NAMES = ("CMakeLists.txt", "Dockerfile", "testbed")

LETTER_ID = r"[RDPLSME][0-9]{1,2}[a-z]?"
NUM_ID = r"[1-9](?:\.[0-9])?"  # items have a one-digit minor: 2.7, never 2.10
SEP = r"(?:\s*(?:,|/|-|–|and|or)\s*)"
LETTER_RE = re.compile(r"\b(" + LETTER_ID + r")\b")
# A keyword, then a list of numbered IDs ("behaviour 3.3, 3.4", "item 5.1-5.3").
KEYWORD_RE = re.compile(r"(?<![-\w])(?:[Bb]ehaviou?rs?|[Ii]tems?|[Ss]pec)\s+(" + NUM_ID +
                        r"(?:" + SEP + NUM_ID + r")*)\b")
# A numbered ID alone (or a list) in parentheses: "(6.1)", "(2.3/2.4)".
ITEM_ID = r"[1-9]\.[0-9]"
PAREN_RE = re.compile(r"(?<![\w])\((" + ITEM_ID + r"(?:" + SEP + ITEM_ID + r")*)\)")
# A comment that opens with an item: "// 2.4: ...", "# 7.5 / M1 ...".
LEADING_RE = re.compile(r"^\s*(" + ITEM_ID + r"(?:" + SEP + NUM_ID + r")*)\b(?![.0-9])")
NUM_IN_LIST = re.compile(NUM_ID)
TRAILING_KEYWORD_RE = re.compile(
    r"(?<![-\w])([Bb]ehaviou?rs?|[Ii]tems?|[Ss]pec|[Dd]ecisions?|[Uu]pstream|kubernetes)\s*$")
DECISION_RE = re.compile(r"\b[Dd]ecisions?\s+([0-9]+(?:" + SEP + r"[0-9]+)*)")
BAD_FORMS = [
    (re.compile(r"\b[Ss]pec\s+(?:" + LETTER_ID + r"|" + NUM_ID + r"|daemon)\b"),
     "cites the outside checklist ('spec ...'); write 'behaviour <id>' (docs/behaviour/README.md)"),
    (re.compile(r"\b(?:daemon|controllers|client-and-cache|performance)\s+spec\b"),
     "cites the outside checklist; cite the item of docs/behaviour/ instead"),
    (re.compile(r"(?<![Uu]pstream )(?<!kubernetes )\bissue\s+#?[0-9]+"),
     "cites a project issue number, which does not resolve in the repository; say what it means"),
    (re.compile(r"\.\./shared|/work/shared|shared/(?:spec|design|testdata)"),
     "points outside the repository"),
    (re.compile(r"\bARCHITECTURE(?:\.md)?\b"),
     "points to the outside design document; cite docs/architecture.md"),
]


def comment_lines(path, text):
    """Yields (line number, comment text, starts_comment) for the parts of `text` that are prose."""
    name = os.path.basename(path)
    if path.endswith(".md"):
        for i, line in enumerate(text.split("\n"), 1):
            yield i, line, False
        return
    if path.endswith(CODE_EXT):
        in_block = False
        for i, line in enumerate(text.split("\n"), 1):
            if in_block:
                end = line.find("*/")
                yield i, line if end < 0 else line[:end], False
                in_block = end < 0
                continue
            pos = line.find("//")
            block = line.find("/*")
            if block >= 0 and (pos < 0 or block < pos):
                end = line.find("*/", block + 2)
                yield i, line[block + 2:] if end < 0 else line[block + 2:end], False
                in_block = end < 0
            elif pos >= 0:
                yield i, line[pos + 2:], True
        return
    if path.endswith(HASH_EXT) or name in HASH_NAMES:
        for i, line in enumerate(text.split("\n"), 1):
            pos = line.find("#")
            if pos >= 0 and not line.lstrip().startswith("#!"):
                yield i, line[pos + 1:], True


def cited(line, starts_comment):
    """The behaviour IDs, decision numbers and bad forms one comment line cites."""
    ids = set(LETTER_RE.findall(line))
    for rx in (KEYWORD_RE, PAREN_RE):
        for m in rx.finditer(line):
            ids.update(NUM_IN_LIST.findall(m.group(1)))
    if starts_comment:
        m = LEADING_RE.match(line)
        if m:
            ids.update(NUM_IN_LIST.findall(m.group(1)))
    decisions = set()
    for m in DECISION_RE.finditer(line):
        decisions.update(re.findall(r"[0-9]+", m.group(1)))
    bad = [why for rx, why in BAD_FORMS if rx.search(line)]
    return ids, decisions, bad


def defined_ids(docs):
    """docs: {path: text} of docs/behaviour/*.md. IDs are '**R13**' at an item's start; sections
    of client-and-cache.md are '## 2. Title'."""
    ids = {}
    for path, text in docs.items():
        for m in re.finditer(r"^\s*[-*]?\s*\*\*(" + LETTER_ID + r"|" + ITEM_ID + r")\*\*", text,
                             re.M):
            if m.group(1) in ids:
                raise SystemExit(f"{path}: {m.group(1)} defined twice (also {ids[m.group(1)]})")
            ids[m.group(1)] = path
        for m in re.finditer(r"^##\s+([1-9])\.\s", text, re.M):
            ids[m.group(1)] = path
    return ids


def defined_decisions(architecture):
    """The numbered items under docs/architecture.md's '## Decisions' heading."""
    m = re.search(r"^## Decisions\b(.*?)(?=^## |\Z)", architecture, re.M | re.S)
    return set(re.findall(r"^([0-9]+)\.\s", m.group(1), re.M)) if m else set()


def check(files, ids, decisions, allowlist):
    """files: iterable of (path, text). Yields one message per bad citation."""
    for path, text in files:
        own_doc = path.startswith("docs/behaviour/")
        carried = ""  # a keyword ending the previous line: "(spec", "behaviour", "upstream"
        for lineno, line, starts in comment_lines(path, text):
            got, decs, bad = cited(carried + line.lstrip(), starts and not carried)
            tail = TRAILING_KEYWORD_RE.search(line)
            carried = tail.group(1) + " " if tail else ""
            for i in sorted(got - ids.keys()):
                yield f"{path}:{lineno}: cites {i}, which docs/behaviour/ does not define"
            for d in sorted(decs - decisions):
                yield (f"{path}:{lineno}: cites decision {d}, which the Decisions of "
                       "docs/architecture.md do not define")
            if path not in allowlist and not own_doc:
                for why in bad:
                    yield f"{path}:{lineno}: {why}"


def scanned(path):
    name = os.path.basename(path)
    return (path.endswith(CODE_EXT + HASH_EXT + (".md",)) or name in HASH_NAMES) and \
        not path.startswith("hack/check-behaviour-refs.py") and \
        not path.startswith("hack/behaviour-refs-allowlist.txt")


def tree_files(root):
    paths = list(SCANNED_TOP)
    for top in SCANNED_DIRS:
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d not in ("corpus", "testdata")]
            paths += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
    for rel in sorted(paths):
        full = os.path.join(root, rel)
        if os.path.isfile(full) and scanned(rel):
            with open(full, encoding="utf-8", errors="replace") as f:
                yield rel, f.read()


def load(root):
    bdir = os.path.join(root, "docs", "behaviour")
    docs = {}
    for name in sorted(os.listdir(bdir)):
        if name.endswith(".md") and name != "README.md":
            with open(os.path.join(bdir, name), encoding="utf-8") as f:
                docs[f"docs/behaviour/{name}"] = f.read()
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        decisions = defined_decisions(f.read())
    allowlist = set()
    with open(os.path.join(root, "hack", "behaviour-refs-allowlist.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                allowlist.add(line)
    return defined_ids(docs), decisions, allowlist


def self_test():
    ids = defined_ids({"docs/behaviour/x.md": "## 2. Reflector\n- **2.7** streaming list\n"
                       "- **R13** claiming\n- **P1b** protobuf\n"})
    assert set(ids) == {"2", "2.7", "R13", "P1b"}, ids
    decisions = defined_decisions("# A\n## Decisions\n1. Lossless.\n2. Shared.\n## Next\n3. x\n")
    assert decisions == {"1", "2"}, decisions
    bad = [("pkg/a.h", "int x;  // adopts orphans (R99)\n"),
           ("pkg/b.cc", "/* streaming list,\n   behaviour 2.9 */\n"),
           ("test/c_test.cc", "// 2.8: relists\nTEST(A, B) {}\n"),
           ("pkg/d.h", "// see (2.7/4.9)\n"),
           ("hack/e.sh", "echo hi  # P1c figure\n"),
           ("pkg/f.h", "// lossless writes (decision 3)\n"),
           ("pkg/j.h", "// streaming list (spec 2.7)\n"),
           ("test/h.cc", "// stale caches (issue 13)\n"),
           ("docs/i.md", "See ../shared/spec/controllers.md.\n"),
           ("pkg/k.h", "// the consumer, an informer (spec\n// 3). All methods\n"),
           ("pkg/l.h", "// the consumer, an informer (behaviour\n// 3.9). All methods\n"),
           ("pkg/n.h", "// the pruned record (ARCHITECTURE decision 1)\n")]
    good = [("pkg/a.h", "// R13, P1b; behaviour 2.7 and 2; (2.7); decision 1 (upstream issue 3)\n"
             "const char* u = \"TLS 1.2\";  // TLS 1.3 only, 1.5 MiB, x 2.5 faster\n"),
            ("test/b_test.cc", "// 2.7: bookmarks\n  EXPECT_EQ(x, 1.0);  // HTTP/1.1\n"),
            ("pkg/g.h", "// streaming list (spec 2.7)\n"),
            ("pkg/m.cc", "// lands before the deadline (upstream\n// issue 39785).\n")]
    allow = {"pkg/g.h"}
    found = list(check(bad, ids, decisions, allow))
    flagged = {f.split(":", 1)[0] for f in found}
    assert flagged == {path for path, _ in bad}, "\n".join(found)  # each bad file caught
    assert len(found) == 13, "\n".join(found)  # pkg/k.h: an undefined section and a bad form
    found_good = list(check(good, ids, decisions, allow))
    assert not found_good, found_good
    # The repository's own docs: the last item of each file is defined, the next one is not, and
    # a citation of it is caught.
    real_ids, real_decisions, _ = load(ROOT)
    for last, nxt in (("7.5", "7.6"), ("R15", "R16"), ("D18", "D19"), ("L6", "L7"), ("S3", "S4"),
                      ("M6", "M7"), ("E3", "E4"), ("P9", "P10")):
        assert last in real_ids and nxt not in real_ids, (last, nxt)
        assert list(check([("pkg/x.h", f"// ({nxt})\n")], real_ids, real_decisions, set()))
    assert {"1", "3"} <= real_decisions, real_decisions
    print(f"check-behaviour-refs self-test: {len(found)} bad citations caught, 0 false alarms; "
          f"docs/behaviour defines {len(real_ids)} items")


# --- Names cited in docs/architecture.md and docs/design/*.md (see the header) ---------------

NAME_DOCS_DIR = os.path.join("docs", "design")
INDEXED_DIRS = ("pkg", "controllers", "cmd", "test", "bench", "fuzz", "examples", "hack", "cmake",
                "config", "deploy")
INDEXED_TOP = ("CMakeLists.txt", "Dockerfile", ".clang-format")
SKIPPED_DIRS = ("corpus", "testdata")
PATH_EXT = (".cc", ".h", ".cpp", ".md", ".py", ".sh", ".yaml", ".yml", ".cmake", ".txt", ".json",
            ".supp", ".dict", ".proto")
BACKTICK_RE = re.compile(r"`([^`\n]+)`")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?$")
FLAG_RE = re.compile(r"^(--[a-z0-9][a-z0-9-]*)(?:=\S*)?$")
PATH_RE = re.compile(r"^[A-Za-z0-9_.{}-]+(?:/[A-Za-z0-9_.{},-]*)*$")
UPSTREAM_BEFORE_RE = re.compile(r"\b(?:[Uu]pstream|client-go|controller-runtime)(?:'s)?\s*$")


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(path[:m.start()] + alt + path[m.end():])
    return out


def code_text(path, text):
    """The text of a source file without its comments for C++ (a name cited only in a comment,
    such as upstream's, does not make it ours); other files whole."""
    if not path.endswith(CODE_EXT):
        return text
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"',
                  lambda m: m.group(0) if m.group(0).startswith('"') else " ", text, flags=re.S)


def name_index(root):
    """(words, file names, paths): every word of the sources (C++ comments left out), every
    file's and directory's name, and every file and directory path relative to root with every
    end of one ("app/run.cc" for "cmd/kube-controller-manager/app/run.cc")."""
    words, names, paths = set(), set(), set()
    me = os.path.abspath(__file__)
    tops = [os.path.join(root, t) for t in INDEXED_TOP] + \
        [os.path.join(root, d) for d in INDEXED_DIRS]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith("build")]
        rel_dir = os.path.relpath(dirpath, root)
        for n in dirnames + filenames:
            paths.add(os.path.normpath(os.path.join(rel_dir, n)))
            names.add(n)
        if any(part in SKIPPED_DIRS for part in rel_dir.split(os.sep)):
            continue
        for n in filenames:
            full = os.path.join(dirpath, n)
            if os.path.abspath(full) == me or not any(
                    full == t or full.startswith(t + os.sep) for t in tops):
                continue
            with open(full, encoding="utf-8", errors="replace") as f:
                text = code_text(full, f.read())
                words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
                words.update(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", text))  # flag names
    suffixes = {p.split(os.sep, i)[-1] for p in paths for i in range(p.count(os.sep) + 1)}
    return words, names, suffixes


def classify(span):
    """'path', 'flag', 'name' or None (prose) for one backticked span."""
    if FLAG_RE.match(span):
        return "flag"
    if IDENT_RE.match(span):
        return "name"
    if span[0] in "/~$." or any(c in span for c in "<*: "):
        return None
    if PATH_RE.match(span) and ("/" in span or span.endswith(PATH_EXT)):
        return "path"
    return None


def missing_names(files, index):
    """files: iterable of (path, text) of docs; index: name_index(). Yields one message per
    backticked name that does not exist in the tree."""
    words, names, paths = index
    for path, text in files:
        in_fence = False
        prev = ""
        for lineno, line in enumerate(text.split("\n"), 1):
            before_line, prev = prev, line
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for m in BACKTICK_RE.finditer(line):
                span = m.group(1).strip()
                before = line[:m.start()] if line[:m.start()].strip() else before_line + " "
                if not span or UPSTREAM_BEFORE_RE.search(before):
                    continue
                kind = classify(span)
                if kind == "path":
                    for p in expand_braces(span.rstrip("/")):
                        if "/" in p and os.path.normpath(p) not in paths:  # paths and their ends
                            yield f"{path}:{lineno}: cites `{span}`: {p} does not exist"
                        elif "/" not in p and p not in names and p not in paths:
                            yield f"{path}:{lineno}: cites `{span}`: no file is named {p}"
                elif kind == "flag":
                    flag = FLAG_RE.match(span).group(1)
                    if flag[2:] not in words:
                        yield f"{path}:{lineno}: cites `{span}`: no source mentions {flag}"
                elif kind == "name":
                    for part in span.removesuffix("()").split("::"):
                        if part not in words and part not in names:
                            yield (f"{path}:{lineno}: cites `{span}`: {part} occurs in no source "
                                   "(write upstream `...` for a name of upstream's)")


def name_docs(root):
    docs = [os.path.join("docs", "architecture.md")]
    ddir = os.path.join(root, NAME_DOCS_DIR)
    if os.path.isdir(ddir):
        docs += [os.path.join(NAME_DOCS_DIR, n) for n in sorted(os.listdir(ddir))
                 if n.endswith(".md")]
    for rel in docs:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            yield rel, f.read()


def self_test_names():
    index = name_index(ROOT)
    bad = [("docs/design/a.md", "The store is `pkg/cache/no_such_store.h`.\n"),
           ("docs/design/b.md", "Each informer runs `NoSuchInformerAnywhere`.\n"),
           ("docs/design/c.md", "Queues come from `workqueue::NoSuchQueueFactory()`.\n"),
           ("docs/design/d.md", "Doubles in `test/unit/{record,no_such_dir}`.\n"),
           ("docs/design/e.md", "The flag `--no-such-flag-anywhere=3` is read.\n"),
           ("docs/design/f.md", "Go's `syncDeployment` is ours too.\n"),
           ("docs/design/g.md", "```\n`fenced`\n```\nSee `no_such_file.cc`.\n")]
    good = [("docs/architecture.md",
             "`pkg/cache/reflector.h`, `pkg/controller/testing/`, `SharedIndexInformer`,\n"
             "`cache::ListAllPages`, `Reflector::ListAndWatch()`, `test/unit/{record,"
             "leaderelection}`,\n`hash.h`, `Dockerfile`, `--kube-api-qps=50`, upstream "
             "`syncDeployment`,\nupstream's `getPodsToDelete`, `rest_client_*`, `logs/<c>.log`,"
             " `a b`, `/var/run`\n```\n`NotChecked`\n```\n")]
    found = list(missing_names(bad, index))
    flagged = {f.split(":", 1)[0] for f in found}
    assert flagged == {p for p, _ in bad}, "\n".join(found)
    assert len(found) == len(bad), "\n".join(found)
    found_good = list(missing_names(good, index))
    assert not found_good, found_good
    print(f"check-behaviour-refs name self-test: {len(found)} missing names caught, 0 false alarms")


def where(root, wanted):
    ids, _, _ = load(root)
    if wanted not in ids:
        print(f"{wanted} is not defined in docs/behaviour/")
    hits = []
    for path, text in tree_files(root):
        for lineno, line, starts in comment_lines(path, text):
            if wanted in cited(line, starts)[0]:
                hits.append((not path.startswith("test/"), path, lineno))
    for _, path, lineno in sorted(hits):
        print(f"{path}:{lineno}")


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
        return 0
    if args == ["--self-test-names"]:
        self_test_names()
        return 0
    if len(args) == 2 and args[0] == "--where":
        where(ROOT, args[1])
        return 0
    if args:
        print(__doc__)
        return 2
    ids, decisions, allowlist = load(ROOT)
    found = list(check(tree_files(ROOT), ids, decisions, allowlist))
    found += list(missing_names(name_docs(ROOT), name_index(ROOT)))
    for v in found:
        print(v)
    if found:
        print(f"check-behaviour-refs: {len(found)} citation(s) or name(s) do not resolve in the "
              "repository (docs/behaviour/README.md; names: this script's header)")
        return 1
    print(f"check-behaviour-refs: every citation resolves ({len(ids)} behaviour items, "
          f"{len(decisions)} decisions, {len(allowlist)} allowlisted file(s)) and every name "
          "docs/architecture.md and docs/design/ cite exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
