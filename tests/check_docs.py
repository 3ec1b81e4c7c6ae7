#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# check_docs.py — what the README and docs/ say of the tree, against the tree: every repository path they cite exists,
# every ctest test has its row in docs/DESIGN.md's table of tests, every command has its row in the README's exit
# statuses.
#
# usage: check_docs.py SOURCE_DIR BUILD_DIR
#   BUILD_DIR holds the memtrack binary (its --help lists the commands) and the tests (ctest -N lists them).
# Exit 0 when they agree, 1 naming each place that does not.
import os
import re
import subprocess
import sys

# A path as the docs write one: a top-level folder of the repository, then at least one more part.
PATH = re.compile(r"(?<![\w/.~-])((?:src|tracer|unwind|bpf|tests|bench|docs|\.ci)/[\w./+-]*[\w/])")
# Written as a pattern, not a file: tests/test_X.c, docs/man/PAGE.extra, bpf/*.bpf.h.
PATTERN = re.compile(r"[*{}]|(?<![A-Za-z])X(?![A-Za-z])|[A-Z]{3,}")
# Built from a source of the same name (tests/progs/example, bench/churn, bpf/memtrack.bpf.o).
SOURCE_SUFFIXES = (".c", ".cc", ".cpp")


def cited_paths(src, doc):
    """(line number, path) of each path doc cites that is neither in the tree nor built from a file there."""
    missing = []
    with open(os.path.join(src, doc), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for path in PATH.findall(line):
                path = path.rstrip("/.")
                if PATTERN.search(path) or os.path.exists(os.path.join(src, path)):
                    continue
                stem = re.sub(r"\.o$", ".c", path)
                if any(os.path.exists(os.path.join(src, stem + s)) for s in ("",) + SOURCE_SUFFIXES):
                    continue
                missing.append((n, path))
    return missing


def table_rows(src, doc, heading):
    """The code spans of the first column of the first table after heading in doc."""
    text = open(os.path.join(src, doc), encoding="utf-8").read()
    start = text.index(heading)
    names, seen = set(), False
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            seen = True
            names.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
        elif seen:
            break
    return names


def main():
    src, build = sys.argv[1], sys.argv[2]
    bad = []
    docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    for doc in docs:
        bad += [f"{doc}:{n}: {p} is not in the tree" for n, p in cited_paths(src, doc)]

    listed = subprocess.run(["ctest", "--test-dir", build, "-N"], capture_output=True, text=True, check=True).stdout
    tests = set(re.findall(r"^\s*Test\s+#\d+: (\S+)", listed, re.M))
    if not tests:
        bad.append(f"ctest --test-dir {build} -N listed no tests")
    rows = table_rows(src, "docs/DESIGN.md", "## Tests and benchmarks")
    bad += [f"docs/DESIGN.md: test {t} has no row in the table of tests" for t in sorted(tests - rows)]

    helptext = subprocess.run([os.path.join(build, "memtrack"), "--help"], capture_output=True, text=True).stdout
    commands = set(re.findall(r"^  ([a-z][a-z-]*) ", helptext, re.M)) - {"help"}
    rows = table_rows(src, "README.md", "## Exit status")
    bad += [f"README.md: command {c} has no row in the exit-status table" for c in sorted(commands - rows)]
    if not commands:
        bad.append("memtrack --help listed no commands")

    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
