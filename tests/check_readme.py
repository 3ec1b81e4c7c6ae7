#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# The README's walk-through against the real commands: every fenced block whose first line starts with "$ " is run,
# command by command, and its output must be what the README shows, pids, times and addresses aside.
#
# usage: check_readme.py README BUILD_DIR [--update]
#   BUILD_DIR is the build whose memtrack and tests/progs/example run in place of the README's "build/".
#   --update rewrites the blocks with the outputs of this run (the source tree's path shown as /path/to/memtrack).
# Exit 0 when they agree, 1 with a diff when not, 77 (skipped) when BPF cannot be loaded here and CI is not set.
import difflib
import os
import re
import subprocess
import sys
import tempfile

FENCE = "```"
SHOWN_ROOT = "/path/to/memtrack"

# What differs from one run to the next; replaced the same way in the README and in the output before comparing.
VOLATILE = [
    (re.compile(r'"(ts_ns|pid|tid|ppid|root_pid|addr)":\s*\d+'), r'"\1":N'),
    (re.compile(r"root pid:\s+\d+"), "root pid: N"),
    (re.compile(r"\b\d+\.\d+ s\b"), "T s"),
    # What the machine's libraries and loader cache make of the mappings and the resident memory.
    (re.compile(r"^(\s*mappings:.*)$", re.M), lambda m: re.sub(r"\([^)]*\)", "(X)", m.group(1))),
    (re.compile(r"^(\s*peak RSS:).*$", re.M), r"\1 X"),
    (re.compile(r"^(\s*(mapped by program|allocator-held):).*$", re.M), r"\1 X"),
    # The terms of RSS at its peak (the loader's and glibc's mappings, the kernel's counters).
    (re.compile(r"^(\s*(live heap|program mappings|file-backed|shmem|the rest|= peak RSS):).*$", re.M), r"\1 X"),
    # A row of the resident memory table: PID, IMG, PEAK RSS, AT, the terms.
    (re.compile(r"^\s*\d+\s+\d+\s+[\d.]+ (B|KiB|MiB|GiB)\s+[\d.]+(\s+(-?[\d.]+ (B|KiB|MiB|GiB)|-))*\s", re.M),
     "P I R T "),
    # A row of the process table: PID, PPID, IMG, STATUS.
    (re.compile(r"^\s*\d+\s+\d+(\s+\d+\s+(exit|signal|killed|running|exec))", re.M), r"P P\1"),
    (re.compile(r"[ \t]+"), " "),
]


def blocks(lines):
    """(first, last) line indexes of the body of every fenced block that starts with a command."""
    out, start = [], None
    for i, line in enumerate(lines):
        if line.rstrip() != FENCE:
            continue
        if start is None:
            start = i + 1
            continue
        if start < i and lines[start].startswith("$ "):
            out.append((start, i))
        start = None
    return out


def run(cmd, work, build):
    """The output lines of one README command, its /tmp paths kept in the private directory work."""
    p = subprocess.run(["bash", "-c", cmd.replace("/tmp/", work + "/")], cwd=work, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    out = p.stdout.replace(work + "/", "/tmp/").replace(build, SHOWN_ROOT + "/build")
    return out.splitlines()


def normalise(text):
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: check_readme.py README BUILD_DIR [--update]")
    readme, build = sys.argv[1], os.path.realpath(sys.argv[2])
    update = "--update" in sys.argv[3:]
    lines = open(readme).read().split("\n")
    work = tempfile.mkdtemp(prefix="memtrack.readme.")
    os.symlink(build, os.path.join(work, "build"))
    rc, results = 0, []
    for first, last in blocks(lines):
        wanted, got = [], []
        for line in lines[first:last]:
            wanted.append(line)
            if line.startswith("$ "):
                got.append(line)
                got.extend(run(line[2:], work, build))
        results.append((first, last, wanted, got))
    for first, last, wanted, got in reversed(results):
        if update:
            lines[first:last] = got
            continue
        a, b = normalise("\n".join(wanted)), normalise("\n".join(got))
        if a != b:
            rc = 1
            sys.stdout.writelines(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                                       "README line %d" % (first + 1), "output"))
            print()
    if update:
        open(readme, "w").write("\n".join(lines))
    return rc


if __name__ == "__main__":
    if os.geteuid() != 0 and os.environ.get("CI") != "true":
        sys.exit(77)
    sys.exit(main())
