#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_pprof_real.sh — `memtrack pprof` read by the real pprof, built offline from Debian's sources (issue 36):
# the sample types, the labels of `record --label`, per-sample pid and exe, the session's start as the profile's
# time, and totals equal to the report's; and the labels in report's, flamegraph's and view's output.
# usage: test_pprof_real.sh MEMTRACK EXAMPLE   (tests/progs/example: cxx_leak_one is taken from its directory;
#        exit 77: cannot run here, never under CI=true)
set -euo pipefail
memtrack=$1
example=$(realpath "$2")

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	[ "${CI:-}" = true ] && fail "$* (CI=true: this test must run)"
	echo "SKIP: $*"
	exit 77
}

[ "$(id -u)" = 0 ] || skip "recording needs root"
tmp=$(mktemp -d /tmp/memtrack-pprof.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$memtrack" record -q --stacks --label commit=0123abc --label 'bench=pprof real' -o "$tmp/rec" -- "$example" \
	>/dev/null || skip "memtrack record failed (no BPF?)"

# The other exports carry the labels too: report's header, the flame graph's title, speedscope's name, view's data.
# (Each output is read whole first: grep -q would leave memtrack writing into a closed pipe.)
out=$("$memtrack" report "$tmp/rec")
grep -qx 'labels:      commit=0123abc bench=pprof real' <<<"$out" || fail "report: no labels line"
out=$("$memtrack" flamegraph "$tmp/rec")
grep -q '<text id="title"[^>]*>memtrack: .* \[commit=0123abc bench=pprof real\]</text>' <<<"$out" ||
	fail "flamegraph: no labels in the title"
out=$("$memtrack" flamegraph --format speedscope "$tmp/rec")
grep -q '"name":"memtrack: [^"]* \[commit=0123abc bench=pprof real\]"' <<<"$out" || fail "speedscope: no labels in the name"
out=$("$memtrack" view "$tmp/rec" 2>/dev/null)
grep -qx '  "labels": {' <<<"$out" || fail "view: no labels in its data"

command -v go >/dev/null || skip "no go (Debian: golang-go)"
[ -d /usr/share/gocode/src/github.com/google/pprof ] || skip "no pprof sources (golang-github-google-pprof-dev)"
# GOPATH mode: Debian's packaged sources, nothing fetched.
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$tmp/gocache" GOPROXY=off \
	go build -o "$tmp/pprof" github.com/google/pprof || fail "go build github.com/google/pprof"
pprof=$tmp/pprof

# The report's numbers: totals (all, or of --pid P) as "allocations bytes leaked leaked_bytes"; the pids.
report_totals() {
	"$memtrack" report --json "$@" "$tmp/rec" | python3 -c 'import json, sys
t = json.load(sys.stdin)["totals"]
print(t["allocations"], t["allocated_bytes"], t["leaked_allocations"], t["leaked_bytes"])'
}
read -r root child < <("$memtrack" report --json "$tmp/rec" | python3 -c 'import json, sys
print(*[p["pid"] for p in json.load(sys.stdin)["processes"]])')
[ -n "$child" ] || fail "the example's child is not in the report"

# pprof -top's total of each sample type, in the report's order: counts as they are, bytes in B.
pprof_totals() {
	local si unit out=()

	for si in alloc_objects alloc_space inuse_objects inuse_space; do
		unit=; [[ $si = *_space ]] && unit=-unit=B
		out+=("$("$pprof" -top -sample_index=$si $unit "$1" 2>/dev/null |
			sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)B\{0,1\} total$/\1/p')")
	done
	echo "${out[*]}"
}

# -raw's samples: "N1 N2 N3 N4: location ids", then their labels on indented lines.
count() { grep -o -- "$1" <<<"$2" | wc -l; }

"$memtrack" pprof "$tmp/rec" >"$tmp/all.pb.gz" || fail "memtrack pprof"
raw=$("$pprof" -raw "$tmp/all.pb.gz" 2>&1) || fail "pprof -raw: $raw"
grep -qx 'alloc_objects/count alloc_space/bytes\[dflt\] inuse_objects/count inuse_space/bytes' <<<"$raw" ||
	fail "sample types: $(sed -n '/^Samples:/{n;p}' <<<"$raw")"
grep -qx 'Comment: commit=0123abc' <<<"$raw" || fail "no comment commit=0123abc"
grep -qx 'Comment: bench=pprof real' <<<"$raw" || fail "no comment bench=pprof real"
# Mapping 1 is the command's executable: pprof names the profile after it ("File: example").
first=$(sed -n '/^Mappings/{n;p;q}' <<<"$raw")
[[ "$first" == "1: "*"/tests/progs/example "* ]] || fail "mapping 1: '$first', not the example"
# The same when the command was named by a relative path (the exe as exec got it) and its first stack is
# libstdc++'s (cxx_leak_one: the emergency pool, allocated before main).
(cd "$(dirname "$example")" && "$memtrack" record -q --stacks -o "$tmp/rel" -- ../progs/cxx_leak_one >/dev/null) ||
	fail "memtrack record -- ../progs/cxx_leak_one"
"$memtrack" pprof "$tmp/rel" >"$tmp/rel.pb.gz" || fail "memtrack pprof (relative exe)"
first=$("$pprof" -raw "$tmp/rel.pb.gz" 2>/dev/null | sed -n '/^Mappings/{n;p;q}')
[[ "$first" == "1: "*"/tests/progs/cxx_leak_one "* ]] || fail "relative exe: mapping 1: '$first', not cxx_leak_one"
# time_nanos: the session's start, to the second (pprof prints it in local time, without trailing zeros)
want=$(python3 -c 'import json, sys, time
t = json.load(open(sys.argv[1]))["realtime_ns"] // 10**9
print(time.strftime("Time: %Y-%m-%d %H:%M:%S", time.gmtime(t)))' "$tmp/rec/memory_metadata.json")
[ "$(TZ=UTC "$pprof" -raw "$tmp/all.pb.gz" 2>/dev/null | grep '^Time: ' | cut -c1-25)" = "$want" ] ||
	fail "time: '$(grep '^Time: ' <<<"$raw")', want '$want'"
samples=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+: ' <<<"$raw")
[ "$samples" -ge 2 ] || fail "$samples samples"
for want in 'commit:\[0123abc\]' 'bench:\[pprof real\]' "exe:\[$example\]"; do
	[ "$(count "$want" "$raw")" = "$samples" ] || fail "$want on $(count "$want" "$raw") of $samples samples"
done
nroot=$(count "pid:\[$root\]" "$raw")
nchild=$(count "pid:\[$child\]" "$raw")
[ "$nroot" -ge 1 ] && [ "$nchild" -ge 1 ] && [ $((nroot + nchild)) = "$samples" ] ||
	fail "pid labels: $nroot of $root, $nchild of $child, $samples samples"
want=$(report_totals)
got=$(pprof_totals "$tmp/all.pb.gz")
[ "$got" = "$want" ] || fail "pprof -top totals '$got', report's '$want'"
echo "all: $samples samples, totals $got"

# --pid: that process's samples only, and its totals.
"$memtrack" pprof --pid "$child" "$tmp/rec" >"$tmp/child.pb.gz" || fail "memtrack pprof --pid $child"
raw=$("$pprof" -raw "$tmp/child.pb.gz" 2>&1) || fail "pprof -raw: $raw"
samples=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+: ' <<<"$raw")
[ "$samples" -ge 1 ] && [ "$(count 'pid:\[[0-9]*\]' "$raw")" = "$samples" ] &&
	[ "$(count "pid:\[$child\]" "$raw")" = "$samples" ] || fail "--pid $child: pid labels of $samples samples"
want=$(report_totals --pid "$child")
got=$(pprof_totals "$tmp/child.pb.gz")
[ "$got" = "$want" ] || fail "--pid $child: pprof -top totals '$got', report's '$want'"
echo "pid $child: $samples samples, totals $got"
