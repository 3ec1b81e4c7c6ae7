# SPDX-License-Identifier: GPL-2.0-only
# lib.sh — shell helpers shared by bench/programs.sh and bench/scale.sh: options, results as key=value lines, medians
# and spreads, waiting for other tracers, the tracers that attach by pid. Sourced, not run.

die() {
	echo "${BENCH_NAME:-bench}: $*" >&2
	exit 1
}

note() {
	echo "${BENCH_NAME:-bench}: $*" >&2
}

# The value of key $1 in a "k=v k=v" line $2, or -1.
kv() {
	local f
	for f in $2; do [[ ${f%%=*} == "$1" ]] && echo "${f#*=}" && return; done
	echo -1
}

# Checks what every script needs; sets ROOT, BUILD, MEMTRACK, BENCH and TMP (removed at exit, with $CLEANUP run).
bench_setup() {
	ROOT=$(cd "$(dirname "${BASH_SOURCE[1]}")/.." && pwd)
	[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
	MEMTRACK=$BUILD_DIR/memtrack
	BENCH=$BUILD_DIR/bench
	local b
	[[ -x $MEMTRACK ]] || die "$MEMTRACK is missing; build first: cmake -S . -B build && cmake --build build -j2"
	for b in "$@"; do
		[[ -x $BENCH/$b ]] || die "$BENCH/$b is missing; build first: cmake -S . -B build && cmake --build build -j2"
	done
	(($(id -u) == 0)) || die "must run as root: the tracers load BPF programs and uprobes"
	command -v jq >/dev/null || die "jq is missing (Debian package jq): it reads memtrack's JSON report"
	VERSION=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')
	TMP=$(mktemp -d /tmp/memtrack-"${BENCH_NAME:-bench}".XXXXXX)
	RESULTS=$TMP/results
	: >"$RESULTS"
	trap 'eval "${CLEANUP:-}"; rm -rf "$TMP"' EXIT
}

# Appends one result line: "key=value ..." (the keys are the caller's).
record() {
	echo "$*" >>"$RESULTS"
}

# awk functions over result lines: parse() fills v[] from "k=v" fields; matches(filter) is true if every "k=v" of
# the space-separated filter holds.
AWK_KV='
function parse(  i, p) { delete v; for (i = 1; i <= NF; i++) { p = index($i, "="); v[substr($i, 1, p - 1)] = substr($i, p + 1) } }
function matches(filter,  f, n, i, p) {
	n = split(filter, f, " ")
	for (i = 1; i <= n; i++) { p = index(f[i], "="); if (v[substr(f[i], 1, p - 1)] != substr(f[i], p + 1)) return 0 }
	return 1
}'

# The values (>= 0) of key $2 over the result lines that match filter $1, one a line.
values() {
	awk -v filter="$1" -v key="$2" "$AWK_KV"'
	{ parse() } matches(filter) && (key in v) && v[key] != "" && v[key] >= 0 { print v[key] }' "$RESULTS"
}

# Per-round ratios of key $2, configuration $3 over configuration $4 in the same rep, for lines matching $1.
ratios() {
	awk -v filter="$1" -v key="$2" -v num="$3" -v den="$4" "$AWK_KV"'
	{ parse() }
	matches(filter) && (key in v) && v[key] > 0 { if (v["cfg"] == num) a[v["rep"]] = v[key]; if (v["cfg"] == den) b[v["rep"]] = v[key] }
	END { for (r in a) if (r in b) print a[r] / b[r] }' "$RESULTS"
}

# Reads numbers, one a line; prints "median min max q1 q3" (empty when there are none).
spread() {
	sort -g | awk '{ v[NR] = $1 }
	function q(p,  h, l) { h = 1 + (NR - 1) * p; l = int(h); return v[l] + (h - l) * (v[l + 1 < NR ? l + 1 : NR] - v[l]) }
	END { if (NR) print q(0.5), v[1], v[NR], q(0.25), q(0.75) }'
}

# "median (min–max)" of the numbers on stdin, each divided by $2 and printed with format $1; "—" if there are none.
fmt_spread() {
	local fmt=$1 div=${2:-1} m lo hi
	read -r m lo hi _ < <(spread; echo)
	[[ -n $m ]] || { echo "—"; return; }
	awk -v m="$m" -v lo="$lo" -v hi="$hi" -v d="$div" -v f="$fmt" 'BEGIN {
		if (lo == hi) printf f, m / d
		else printf f " (" f "–" f ")", m / d, lo / d, hi / d }'
}

# ---- other tracers on the machine: the floor's and bpftrace's probes are system-wide, so they would trap in our
# untraced runs too (memtrack's links carry their pids, memleak's its pid; heaptrack and valgrind only take CPU).
# Wait for them (up to 60 s a run, 300 s a script).
WAIT_LEFT=300
DISTURBED=0
OURS=
foreign() {
	local n p
	for n in floor bpftrace; do
		for p in $(pgrep -x "$n" || true); do [[ " $OURS " == *" $p "* ]] || { echo "$n ($p)"; return 0; }; done
	done
	return 1
}
wait_quiet() {
	local t0=$SECONDS who limit=$((WAIT_LEFT < 60 ? WAIT_LEFT : 60))
	while who=$(foreign); do
		if ((SECONDS - t0 >= limit)); then
			DISTURBED=$((DISTURBED + 1))
			note "another tracer runs ($who): measuring anyway"
			break
		fi
		sleep 0.5
	done
	WAIT_LEFT=$((WAIT_LEFT - (SECONDS - t0)))
}

# The machine's load average now, for the report ("1-min 5-min 15-min").
load_now() {
	cut -d' ' -f1-3 /proc/loadavg
}

# Waits (up to 60 s) until process $1 holds at least $2 perf-event BPF attachments (uprobes, tracepoints), i.e.
# until a tracer that attaches by pid or system-wide is in place; fails if it exits first.
wait_attached() {
	local pid=$1 want=$2 t n
	for ((t = 0; t < 600; t++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		n=$(bpftool perf show -j 2>/dev/null | jq --argjson p "$pid" '[.[] | select(.pid == $p)] | length' \
			2>/dev/null || echo 0)
		((n >= want)) && return 0
		sleep 0.1
	done
	return 1
}

# Peak RSS (VmHWM, KiB) of process $1 now, or -1.
hwm_kb() {
	awk '/^VmHWM:/ { print $2; f = 1 } END { if (!f) print -1 }' "/proc/$1/status" 2>/dev/null || echo -1
}
