#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# run.sh — memtrack's benchmark suite: each workload untraced, under memtrack, the probe floor, heaptrack and massif.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/run.sh [--runs N] [--quick] [--out FILE] [--build-dir DIR]
  --runs N         repetitions per configuration; the table shows medians (default 5; 1 with --quick)
  --quick          smoke run: every workload's N divided by 10
  --out FILE       also write the markdown report to FILE
  --build-dir DIR  where memtrack and bench/ were built (default: build, relative to the repository)
Needs root (BPF, uprobes). Build first: cmake -S . -B build && cmake --build build -j2
EOF
}

die() {
	echo "bench: $*" >&2
	exit 1
}

note() {
	echo "bench: $*" >&2
}

RUNS=5
RUNS_SET=0
QUICK=0
OUT=
BUILD_DIR=build
while (($#)); do
	case $1 in
	--runs)
		(($# >= 2)) || die "--runs needs a number"
		RUNS=$2 RUNS_SET=1
		shift 2
		;;
	--quick) QUICK=1 && shift ;;
	--out)
		(($# >= 2)) || die "--out needs a file"
		OUT=$2
		shift 2
		;;
	--build-dir)
		(($# >= 2)) || die "--build-dir needs a directory"
		BUILD_DIR=$2
		shift 2
		;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs takes a positive integer, not '$RUNS'"
((QUICK && !RUNS_SET)) && RUNS=1

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $BUILD_DIR == /* ]] || BUILD_DIR=$ROOT/$BUILD_DIR
MEMTRACK=$BUILD_DIR/memtrack
BENCH=$BUILD_DIR/bench
BUILD_HINT="build first: cmake -S . -B build && cmake --build build -j2"
[[ -x $MEMTRACK ]] || die "$MEMTRACK is missing; $BUILD_HINT"
for b in churn churn_mt churn_new deep rss floor; do
	[[ -x $BENCH/$b ]] || die "$BENCH/$b is missing; $BUILD_HINT"
done
(($(id -u) == 0)) || die "must run as root: memtrack and the floor load BPF programs and uprobes"
command -v jq >/dev/null || die "jq is missing (Debian package jq): it reads memtrack's JSON report"

# The tree as the suite starts (others may commit meanwhile); the binaries are whatever was last built from it.
VERSION=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')
TMP=$(mktemp -d /tmp/memtrack-bench.XXXXXX)
STATS_WAS=
# Cold loads, as the figures before the warm start were measured: the BPF statistics are then this run's programs'
# alone (a kept program's run_cnt and run_time_ns add up over the runs that took it).
export MEMTRACK_WARM=0
trap 'rm -rf "$TMP"; [[ -z $STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"' EXIT
# One line per run: workload config rep wall_ns self_kb tree_kb bytes drops allocs frees other_ms self_cpu_ms, where
# other_ms is the CPU time that processes outside the run used meanwhile (the machine may be shared).
RESULTS=$TMP/results
: >"$RESULTS"

# ---- workloads: N chosen so that each untraced run takes 0.2-0.3 s here (2 cores); --quick divides N by 10.
scale() {
	local n=$(($1 / (QUICK ? 10 : 1)))
	echo $((n - n % $2))
}
WORKLOADS=(churn churn_mt churn_new deep)
declare -A N CMD ALLOCS EVENTS WHAT
N[churn]=$(scale 1500000 1)
N[churn_mt]=$(scale 2000000 4)
N[churn_new]=$(scale 1500000 1)
N[deep]=$(scale 1200000 8)
CMD[churn]="$BENCH/churn ${N[churn]}"
CMD[churn_mt]="$BENCH/churn_mt ${N[churn_mt]} 4"
CMD[churn_new]="$BENCH/churn_new ${N[churn_new]}"
CMD[deep]="$BENCH/deep ${N[deep]}"
WHAT[churn]="malloc/free pairs, sizes 16-4111, pool of 1024"
WHAT[churn_mt]="churn split over 4 threads, a pool each"
WHAT[churn_new]="operator new / sized operator delete pairs"
WHAT[deep]="churn at the leaves of a call tree 66 frames deep"
# Every workload makes N allocation calls and frees each block once (free(NULL) is no event): 2N events.
for w in "${WORKLOADS[@]}"; do
	ALLOCS[$w]=${N[$w]}
	EVENTS[$w]=$((2 * N[$w]))
done
# Process trees: N short-lived children, one at a time (untraced, memtrack, floor): what each process costs.
TREES=(forks execs)
N[forks]=$(scale 200 1)
N[execs]=$(scale 200 1)
CMD[forks]="$BENCH/spawn ${N[forks]} fork"
CMD[execs]="$BENCH/spawn ${N[execs]} exec $BENCH/churn 100"
WHAT[forks]="children that fork and make 100 malloc/free pairs"
WHAT[execs]="children that exec \`churn 100\`"
TREE_CONFIGS=(untraced memtrack floor)
for w in "${TREES[@]}"; do
	ALLOCS[$w]=$((100 * N[$w]))
	EVENTS[$w]=$((2 * ALLOCS[$w]))
done
# /bin/true: start-up and tear-down alone.
CMD[true]=/bin/true
ALLOCS[true]=0
EVENTS[true]=0

# The floor probes what memtrack would: the workload's executable and each library it loads (the floor skips those
# without an allocator, as memtrack does). Our workloads dlopen nothing, so ldd lists every file memtrack would see.
declare -A FLOOR_FILES
for w in "${WORKLOADS[@]}" "${TREES[@]}" true; do
	bin=${CMD[$w]%% *}
	FLOOR_FILES[$w]="-f $bin $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { printf "-f %s ", $3 }')"
done

# ---- configurations
CONFIGS=(untraced memtrack stacks floor floorsys heaptrack massif)
declare -A HAVE LABEL
LABEL=([untraced]=untraced [memtrack]=memtrack [stacks]="memtrack --stacks" [floor]=floor
	[floorsys]="floor + sys_exit" [heaptrack]=heaptrack [massif]="valgrind massif")
for c in "${CONFIGS[@]}"; do HAVE[$c]=1; done
# Captured first: grep -q in a pipe could end the writer early, and pipefail would then read that as "absent".
help=$("$MEMTRACK" record --help 2>&1 || true)
[[ $help == *--stacks* ]] || HAVE[stacks]=0
command -v heaptrack >/dev/null || HAVE[heaptrack]=0
command -v valgrind >/dev/null || HAVE[massif]=0
HEAPTRACK_OPTS=()
HEAPTRACK_MODE="n/a (not installed)"
if ((HAVE[heaptrack])); then
	help=$(heaptrack --help 2>&1 || true)
	if [[ $help == *--record-only* ]]; then
		HEAPTRACK_OPTS=(--record-only)
		HEAPTRACK_MODE="heaptrack --record-only: the recording alone"
	else
		HEAPTRACK_MODE="$(heaptrack --version 2>&1 | head -n 1) has no --record-only: measured as is, i.e. recording"
		HEAPTRACK_MODE+=" with heaptrack_interpret and zstd running beside the workload in a pipe, until all have finished"
	fi
	# heaptrack opens its GUI after recording when heaptrack_gui sits beside it: that would be timed too.
	if [[ -x $(dirname "$(readlink -f "$(command -v heaptrack)")")/heaptrack_gui ]]; then
		HAVE[heaptrack]=0
		HEAPTRACK_MODE="n/a (heaptrack_gui is installed, and heaptrack would open it inside the timed run)"
	fi
fi

# ---- one run
# The tracer's command line for config $1 and workload $2, writing its artifact under $3.
config_cmd() {
	local cfg=$1 w=$2 art=$3 wcmd ff
	read -r -a wcmd <<<"${CMD[$w]}"
	read -r -a ff <<<"${FLOOR_FILES[$w]:-}"
	case $cfg in
	untraced) CMDLINE=("${wcmd[@]}") ;;
	memtrack) CMDLINE=("$MEMTRACK" record -q -o "$art" -- "${wcmd[@]}") ;;
	stacks) CMDLINE=("$MEMTRACK" record -q --stacks -o "$art" -- "${wcmd[@]}") ;;
	floor) CMDLINE=("$BENCH/floor" -t "${ff[@]}" -- "${wcmd[@]}") ;;
	floorsys) CMDLINE=("$BENCH/floor" -s "${ff[@]}" -- "${wcmd[@]}") ;;
	heaptrack) CMDLINE=(heaptrack "${HEAPTRACK_OPTS[@]}" -o "$art" "${wcmd[@]}") ;;
	massif) CMDLINE=(valgrind --tool=massif --massif-out-file="$art" "${wcmd[@]}") ;;
	esac
}

kv() { # the value of key $1 in a "k=v k=v" line $2
	local f
	for f in $2; do [[ ${f%%=*} == "$1" ]] && echo "${f#*=}" && return; done
	echo -1
}

file_bytes() { # total size of the files matching the glob $1, or -1
	local f n=0 any=0
	for f in $1; do [[ -f $f ]] && n=$((n + $(stat -c %s "$f"))) any=1; done
	((any)) && echo $n || echo -1
}

# totals.KEY of memtrack's JSON report of $1, or -1.
report_total() {
	jq -r ".totals.$2 // -1" "$1" 2>/dev/null || echo -1
}

# Someone else's tracer on this machine puts system-wide uprobes into our untraced runs too: wait for it to end
# (up to a minute), and count the runs it still overlapped.
FOREIGN=(memtrack floor test_record heaptrack memcheck-amd64- massif-amd64-li)
DISTURBED=0
foreign() {
	local n
	for n in "${FOREIGN[@]}"; do pgrep -a -x "$n" && return 0; done
	return 1
}
busy_ticks() { # busy and total CPU ticks of the machine so far
	local user nice sys idle iowait irq softirq steal
	read -r _ user nice sys idle iowait irq softirq steal _ </proc/stat
	echo "$((user + nice + sys + irq + softirq + steal)) $((user + nice + sys + idle + iowait + irq + softirq + steal))"
}
# Busy if others keep more than a fifth of one CPU busy over 0.3 s (nothing of ours runs while this is called).
machine_busy() {
	local b0 t0 b1 t1
	read -r b0 t0 < <(busy_ticks)
	sleep 0.3
	read -r b1 t1 < <(busy_ticks)
	((t1 > t0 && (b1 - b0) * NCPU * 5 > t1 - t0))
}
NCPU=$(nproc)
WAIT_LEFT=180	# seconds of waiting the whole suite may spend, so that a machine busy for good cannot stall it
wait_quiet() {
	local t0=$SECONDS who limit=$((WAIT_LEFT < 45 ? WAIT_LEFT : 45))
	for (( ; ; )); do
		who=$(foreign | head -n 1 || true)
		if [[ -z $who ]] && ! machine_busy; then
			WAIT_LEFT=$((WAIT_LEFT - (SECONDS - t0)))
			return 0
		fi
		((SECONDS - t0 >= limit)) && break
		[[ -n $who ]] && sleep 0.3
	done
	WAIT_LEFT=$((WAIT_LEFT - (SECONDS - t0)))
	DISTURBED=$((DISTURBED + 1))
	note "the machine is busy (${who:-other processes}): measuring anyway"
}

# Runs config $1 on workload $2 (repetition $3) under bench/rss and appends one line to $RESULTS.
measure() {
	local cfg=$1 w=$2 rep=$3 art=$TMP/art line bytes=-1 drops=-1 allocs=-1 frees=-1 rc=0
	rm -rf "$TMP"/art*
	wait_quiet
	config_cmd "$cfg" "$w" "$art"
	"$BENCH/rss" -o "$TMP/rss" -- "${CMDLINE[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
	if ((rc)); then
		note "$cfg on $w failed (exit $rc): $(tail -n 3 "$TMP/err" | tr '\n' ' ')"
		echo "$w $cfg $rep -1 -1 -1 -1 -1 -1 -1 -1 -1" >>"$RESULTS"
		return 0
	fi
	line=$(cat "$TMP/rss")
	case $cfg in
	memtrack | stacks)
		bytes=$(file_bytes "$art/events.mtz")
		if "$MEMTRACK" report --json "$art" >"$TMP/report.json" 2>>"$TMP/err"; then
			drops=$(report_total "$TMP/report.json" dropped_events)
			allocs=$(report_total "$TMP/report.json" allocations)
			frees=$(report_total "$TMP/report.json" frees)
		fi
		[[ $w == true ]] && startup_split "$line" "$art" "$TMP/phases.$cfg"
		;;
	floor) [[ $w == true ]] && grep -h '^floor:' "$TMP/err" >>"$TMP/floor_phases" ;;
	heaptrack) bytes=$(file_bytes "$art.*") ;;
	esac
	echo "$w $cfg $rep $(kv wall_ns "$line") $(kv self_kb "$line") $(kv tree_kb "$line") $bytes $drops $allocs $frees" \
		"$(other_ms "$line") $(kv self_cpu_ms "$line")" >>"$RESULTS"
}

other_ms() { # CPU time used by processes outside the run, from an rss line
	local busy tree
	busy=$(kv busy_ms "$1")
	tree=$(kv tree_cpu_ms "$1")
	((busy >= 0 && tree >= 0)) && echo $((busy > tree ? busy - tree : 0)) || echo -1
}

# memtrack's start-up / command / tear-down, from rss's clock and the artifact's session and end records (the tick's
# times read within about a tick of it),
# appended to $3 in microseconds.
startup_split() {
	local start end session fin
	start=$(kv start_ns "$1")
	end=$(kv end_ns "$1")
	read -r session fin < <("$MEMTRACK" dump "$2" 2>/dev/null |
		jq -rs '[(map(select(.event == "session"))[0].ts_ns // -1), (map(select(.event == "end"))[-1].ts_ns // -1)]
			| @tsv' 2>/dev/null || echo "-1 -1")
	((session > 0 && fin > 0)) || return 0
	echo "$(((session - start) / 1000)) $(((fin - session) / 1000)) $(((end - fin) / 1000))" >>"$3"
}

# ---- the untracked neighbour: churn on CPU 1, alone or beside a churn on CPU 0 that is untraced, under the floor or
# under memtrack. The probes are system-wide, so a neighbour that is not traced may still trap.
NB_N=$((N[churn] / 6))
NB_MODES=(alone untraced floor memtrack)

# Waits until the background churn of process group $1 has used 50 ms of CPU: by then its probes are attached.
wait_running() {
	local pid t=0 st
	while ((t++ < 1000)); do
		for pid in $(pgrep -g "$1" -x churn || true); do
			{ read -r -a st <"/proc/$pid/stat"; } 2>/dev/null || continue
			((st[13] + st[14] >= 5)) && return 0
		done
		sleep 0.01
	done
	note "the background churn never started"
	return 1
}

neighbour() {
	local mode=$1 rep=$2 bg=() pgid=0 line alive=1 ff
	read -r -a ff <<<"${FLOOR_FILES[churn]}"
	wait_quiet
	case $mode in
	untraced) bg=("$BENCH/churn" 1000000000000) ;;
	floor) bg=("$BENCH/floor" "${ff[@]}" -- "$BENCH/churn" 1000000000000) ;;
	memtrack) bg=("$MEMTRACK" record -q -o "$TMP/nb-art" -- "$BENCH/churn" 1000000000000) ;;
	esac
	if ((${#bg[@]})); then
		setsid taskset -c 0 "${bg[@]}" >/dev/null 2>&1 &
		pgid=$!
		wait_running "$pgid" || true
	fi
	taskset -c 1 "$BENCH/rss" -o "$TMP/nb-rss" -- "$BENCH/churn" "$NB_N"
	line=$(cat "$TMP/nb-rss")
	if ((pgid)); then
		kill -0 "$pgid" 2>/dev/null || alive=0
		kill -TERM -- "-$pgid" 2>/dev/null || true
		wait "$pgid" 2>/dev/null || true
		((alive)) || note "neighbour run $rep ($mode): the background churn ended first"
	fi
	rm -rf "$TMP/nb-art"
	echo "nb_$mode x $rep $(kv wall_ns "$line") -1 -1 -1 -1 -1 -1 -1 -1" >>"$RESULTS"
}

# ---- what each BPF program costs a run: kernel.bpf_stats_enabled times every run (and adds two clock reads of its
# own, which the floor's empty programs show). One churn under memtrack and one under the floor with -s, after the
# timed runs, so that the statistics' cost is in none of them.
BPF_PROGS="alloc_enter|alloc_return|sys_exit|floor_enter|floor_return|floor_sys_exit"
bpf_sample() { # "name run_cnt run_time_ns" of those programs
	bpftool prog show -j 2>/dev/null | jq -r --arg re "^($BPF_PROGS)\$" '.[] | select(.name != null and
		(.name | test($re)) and .run_cnt != null) | "\(.name) \(.run_cnt) \(.run_time_ns)"' 2>/dev/null || true
}
# Runs config $1 on churn, sampling the statistics until it ends: the last sample goes to $TMP/bpf.$1.
bpf_costs() {
	local pid
	wait_quiet
	config_cmd "$1" churn "$TMP/bpf-art"
	"${CMDLINE[@]}" >/dev/null 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		bpf_sample >"$TMP/bpf.tmp"
		[[ -s $TMP/bpf.tmp ]] && mv "$TMP/bpf.tmp" "$TMP/bpf.$1"
		sleep 0.2
	done
	wait "$pid" || note "$1 on churn with BPF statistics failed"
	rm -rf "$TMP/bpf-art"
}

# ---- the runs: round-robin over configurations within each repetition, so drift hits all alike.
T0=$SECONDS
for ((rep = 1; rep <= RUNS; rep++)); do
	for w in "${WORKLOADS[@]}" true; do
		for c in "${CONFIGS[@]}"; do
			((HAVE[$c])) || continue
			[[ $w == true && ($c == heaptrack || $c == massif) ]] && continue
			note "run $rep/$RUNS: $c on $w ($((SECONDS - T0)) s so far)"
			measure "$c" "$w" "$rep"
		done
	done
	for w in "${TREES[@]}"; do
		for c in "${TREE_CONFIGS[@]}"; do
			note "run $rep/$RUNS: $c on $w ($((SECONDS - T0)) s so far)"
			measure "$c" "$w" "$rep"
		done
	done
	for m in "${NB_MODES[@]}"; do
		note "run $rep/$RUNS: neighbour $m"
		neighbour "$m" "$rep"
	done
done
# RSS against the event count: the same churn with a tenth of the events, once.
for c in memtrack stacks; do
	((HAVE[$c])) || continue
	CMD[churn_tenth]="$BENCH/churn $((N[churn] / 10))"
	note "rss: $c on churn / 10"
	measure "$c" churn_tenth 1
done
if command -v bpftool >/dev/null && STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null); then
	sysctl -qw kernel.bpf_stats_enabled=1
	for c in memtrack floorsys; do
		note "BPF statistics: $c on churn"
		bpf_costs "$c"
	done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	STATS_WAS=
fi
ELAPSED=$((SECONDS - T0))

# ---- statistics
# Aggregate ($4: median or max) of field $3 over the good runs of workload $1 under config $2; empty if none.
agg() {
	awk -v w="$1" -v c="$2" -v f="$3" '$1 == w && $2 == c && $4 >= 0 && $f >= 0 { print $f }' "$RESULTS" | sort -n |
		awk -v how="$4" '{ v[NR] = $1 } END {
			if (!NR) exit
			if (how == "max") print v[NR]
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Field numbers in $RESULTS.
F_WALL=4 F_SELF=5 F_TREE=6 F_BYTES=7 F_DROPS=8 F_ALLOCS=9 F_FREES=10 F_OTHER=11 F_SELFCPU=12

calc() { # awk arithmetic on numbers that may be empty: prints "—" then
	local fmt=$1 expr=$2
	shift 2
	local v
	for v in "$@"; do [[ -n $v ]] || { echo "—"; return; }; done
	awk -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" -v d="${4:-0}" "BEGIN { printf \"$fmt\", ($expr) }"
}

mib() { calc "%.1f" "a / 1024" "$1"; }

# The tracer's own peak RSS: the tracer process alone where it is one (memtrack, floor, massif's valgrind process,
# which holds the workload too); heaptrack's is the maximum over its processes (the workload, which holds heaptrack's
# recorder, heaptrack_interpret, zstd).
rss_of() {
	case $2 in
	heaptrack) mib "$(agg "$1" "$2" $F_TREE max)" ;;
	*) mib "$(agg "$1" "$2" $F_SELF max)" ;;
	esac
}

# The tracer process's own CPU time (all its threads, not its children): memtrack's consumer, attach worker and
# ptrace loop; the probes' cost is charged to the workload's threads instead. heaptrack's direct child is a script.
cpu_of() {
	case $2 in
	heaptrack) echo — ;;
	*) calc "%.2f" "a / 1e3" "$(agg "$1" "$2" $F_SELFCPU median)" ;;
	esac
}

row() {
	local w=$1 c=$2 t t0 tf ts add addf adds=— ev bytes drops=—
	t=$(agg "$w" "$c" $F_WALL median)
	if ((!HAVE[$c])); then
		echo "| $w | ${LABEL[$c]} | n/a | | | | | | | | | |"
		return
	fi
	if [[ -z $t ]]; then
		echo "| $w | ${LABEL[$c]} | failed | | | | | | | | | |"
		return
	fi
	t0=$(agg "$w" untraced $F_WALL median)
	tf=$(agg "$w" floor $F_WALL median)
	ts=$(agg "$w" floorsys $F_WALL median)
	add=$(calc "%.0f" "(a - b) / c" "$t" "$t0" "${ALLOCS[$w]}")
	addf=—
	[[ $c != untraced && $c != floor ]] && addf=$(calc "%.2f" "(b - d) > 0 ? (a - d) / (b - d) : 0" "$t" "$tf" 0 "$t0")
	[[ $c == memtrack || $c == stacks ]] && adds=$(calc "%.2f" "(b - d) > 0 ? (a - d) / (b - d) : 0" "$t" "$ts" 0 "$t0")
	[[ $c == untraced ]] && add=—
	ev=$(calc "%.2f" "b / (a / 1e9) / 1e6" "$t" "${EVENTS[$w]}")
	bytes=$(agg "$w" "$c" $F_BYTES median)
	[[ -n $bytes ]] && bytes=$(calc "%.2f" "a / b" "$bytes" "${EVENTS[$w]}") || bytes=—
	[[ $c == memtrack || $c == stacks ]] && drops=$(agg "$w" "$c" $F_DROPS max) && drops=${drops:-?}
	echo "| $w | ${LABEL[$c]} | $(calc "%.3f" "a / 1e9" "$t") | $(calc "%.1f" "a / b" "$t" "$t0") | $add | $addf | $adds |" \
		"$ev | $bytes | $drops | $(rss_of "$w" "$c") | $(cpu_of "$w" "$c") |"
}

median_col() { # median of column $1 of file $2
	[[ -s $2 ]] || return 0
	awk -v f="$1" '{ print $f }' "$2" | sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ms_of() { calc "%.0f" "a / 1e6" "$(agg true "$1" $F_WALL median)"; }

startup_section() {
	local c f
	echo "| configuration | \`-- /bin/true\`, median ms |"
	echo "|---|---:|"
	for c in untraced memtrack stacks floor floorsys; do
		((HAVE[$c])) && echo "| ${LABEL[$c]} | $(ms_of "$c") |" || echo "| ${LABEL[$c]} | n/a |"
	done
	echo
	for c in memtrack stacks; do
		f=$TMP/phases.$c
		[[ -s $f ]] || continue
		echo "${LABEL[$c]}'s split (median ms; rss's clock against the artifact's session and end records):" \
			"start-up to the session record $(calc "%.1f" "a / 1e3" "$(median_col 1 "$f")")," \
			"session to end record $(calc "%.1f" "a / 1e3" "$(median_col 2 "$f")")," \
			"end record to exit $(calc "%.1f" "a / 1e3" "$(median_col 3 "$f")")."
		echo
	done
	if [[ -s $TMP/floor_phases ]]; then
		# "floor: load X ms, attach Y ms (P probes), command Z ms, detach W ms"
		awk '{ gsub(/[(,]/, " "); print $3, $6, $8, $11, $14 }' "$TMP/floor_phases" >"$TMP/floor_cols"
		echo "The floor's split (median ms): BPF load $(median_col 1 "$TMP/floor_cols")," \
			"attach $(median_col 2 "$TMP/floor_cols") ($(median_col 3 "$TMP/floor_cols") probes)," \
			"command $(median_col 4 "$TMP/floor_cols"), detach $(median_col 5 "$TMP/floor_cols")."
	fi
}

neighbour_section() {
	local m t t0 tu
	t0=$(agg nb_alone x $F_WALL median)
	tu=$(agg nb_untraced x $F_WALL median)
	echo "| neighbour (churn $NB_N on CPU 1, not traced) | median s | slowdown × vs alone | × vs beside untraced |"
	echo "|---|---:|---:|---:|"
	for m in "${NB_MODES[@]}"; do
		t=$(agg "nb_$m" x $F_WALL median)
		case $m in
		alone) echo "| alone (CPU 0 idle) | $(calc "%.3f" "a / 1e9" "$t") | 1.0 | |" ;;
		untraced) echo "| beside an untraced churn on CPU 0 | $(calc "%.3f" "a / 1e9" "$t") |" \
			"$(calc "%.1f" "a / b" "$t" "$t0") | 1.0 |" ;;
		*) echo "| beside a churn on CPU 0 under $m | $(calc "%.3f" "a / 1e9" "$t") |" \
			"$(calc "%.1f" "a / b" "$t" "$t0") | $(calc "%.1f" "a / b" "$t" "$tu") |" ;;
		esac
	done
}

# What each short-lived process of a tree adds (the tracer attaches and detaches its links per process), less the
# configuration's own start-up and tear-down, as measured on /bin/true.
trees_section() {
	local w c t t0 once
	echo "| workload | what | processes | configuration | wall s | ms added / process (less \`-- /bin/true\`) |" \
		"memtrack saw (allocs / frees) |"
	echo "|---|---|---:|---|---:|---:|---:|"
	for w in "${TREES[@]}"; do
		t0=$(agg "$w" untraced $F_WALL median)
		for c in "${TREE_CONFIGS[@]}"; do
			t=$(agg "$w" "$c" $F_WALL median)
			once=$(calc "%.0f" "a - b" "$(agg true "$c" $F_WALL median)" "$(agg true untraced $F_WALL median)")
			echo "| $w | ${WHAT[$w]} | ${N[$w]} | ${LABEL[$c]} | $(calc "%.3f" "a / 1e9" "$t") |" \
				"$([[ $c == untraced ]] && echo — || calc "%.2f" "(a - b - d) / 1e6 / c" "$t" "$t0" "${N[$w]}" "$once") |" \
				"$([[ $c == memtrack ]] && echo "$(agg "$w" memtrack $F_ALLOCS median) / $(agg "$w" memtrack $F_FREES median)" || echo —) |"
		done
	done
}

# Per program: runs per allocation call (relative to the return program, which runs once per call on churn), ns per
# run, ns per call; then the sums against the wall time each configuration adds.
bpf_section() {
	local c f name cnt ns calls sum where
	if [[ ! -s $TMP/bpf.memtrack || ! -s $TMP/bpf.floorsys ]]; then
		echo "n/a (no bpftool, or the statistics could not be read)."
		return
	fi
	echo "| configuration | program | runs at | runs / allocation call | ns / run | ns / allocation call |"
	echo "|---|---|---|---:|---:|---:|"
	for c in memtrack floorsys; do
		f=$TMP/bpf.$c
		calls=$(awk '$1 ~ /_return$/ { print $2 }' "$f")
		sum=0
		while read -r name cnt ns; do
			case $name in
			*_enter) where="each allocator entry and each free" ;;
			*_return) where="each allocation's return (uretprobe)" ;;
			*) where="every syscall's exit; here the uretprobe trampoline's" ;;
			esac
			echo "| ${LABEL[$c]} | $name | $where | $(calc "%.2f" "a / b" "$cnt" "$calls") |" \
				"$(calc "%.0f" "b / a" "$cnt" "$ns") | $(calc "%.0f" "b / c" "$cnt" "$ns" "$calls") |"
			sum=$(calc "%.0f" "a + c / b" "$sum" "$calls" "$ns")
		done < <(sort "$f")
		echo "$c $sum" >>"$TMP/bpf.sums"
	done
	echo
	echo "BPF run time per allocation call, as the statistics count it: memtrack $(awk '$1 == "memtrack" { print $2 }' \
		"$TMP/bpf.sums") ns, the floor's empty programs $(awk '$1 == "floorsys" { print $2 }' "$TMP/bpf.sums") ns" \
		"(what the statistics and the dispatch cost). Wall time memtrack adds above floor + sys_exit on churn:" \
		"$(calc "%.0f" "(a - b) / c" "$(agg churn memtrack $F_WALL median)" "$(agg churn floorsys $F_WALL median)" \
		"${ALLOCS[churn]}") ns per allocation call."
}

# Median and maximum over runs of the CPUs that processes outside the run kept busy meanwhile.
other_load() {
	awk -v f=$F_OTHER -v t=$F_WALL '$f >= 0 && $t > 0 { printf "%.3f\n", $f / ($t / 1e6) }' "$RESULTS" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) printf "median %.2f, max %.2f", v[int((NR + 1) / 2)], v[NR]; else printf "?" }'
}

report() {
	local w c
	echo "## memtrack benchmark — $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)," \
		"$(ldd --version | head -1 | sed 's/^ldd //'). memtrack tree $VERSION at the start."
	echo "Median of $RUNS run(s)$( ((QUICK)) && echo ", --quick (N / 10)");" \
		"whole suite $((ELAPSED / 60)) min $((ELAPSED % 60)) s."
	echo "Before each run the suite waits (up to 45 s, 180 s in all) for the machine to be quiet;" \
		"$DISTURBED run(s) started busy." \
		"Other processes' CPU during a run, in CPUs: $(other_load)."
	echo
	echo "| workload | what | allocation calls | events (allocations + frees) | memtrack saw (allocs / frees) |"
	echo "|---|---|---:|---:|---:|"
	for w in "${WORKLOADS[@]}"; do
		echo "| $w | ${WHAT[$w]} | ${ALLOCS[$w]} | ${EVENTS[$w]} |" \
			"$(agg "$w" memtrack $F_ALLOCS median || true) / $(agg "$w" memtrack $F_FREES median || true) |"
	done
	echo
	echo "| workload | configuration | wall s | slowdown × | ns added / alloc | added ÷ floor's |" \
		"added ÷ floor + sys_exit's | M events/s | bytes / event | drops | tracer RSS MiB | tracer CPU s |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for w in "${WORKLOADS[@]}"; do
		for c in "${CONFIGS[@]}"; do row "$w" "$c"; done
	done
	echo
	echo "heaptrack: $HEAPTRACK_MODE."
	((HAVE[stacks])) || echo "memtrack --stacks: n/a (\`memtrack record --help\` does not offer it yet)."
	echo
	echo "### Start-up and tear-down"
	echo
	startup_section
	echo
	echo "### Tracer RSS against the event count (churn, max over runs)"
	echo
	for c in memtrack stacks; do
		((HAVE[$c])) || continue
		echo "- ${LABEL[$c]}: $(mib "$(agg churn_tenth "$c" $F_SELF max)") MiB at $((EVENTS[churn] / 10)) events," \
			"$(mib "$(agg churn "$c" $F_SELF max)") MiB at ${EVENTS[churn]} events."
	done
	echo
	echo "### Where memtrack's time goes (churn, BPF statistics)"
	echo
	bpf_section
	echo
	echo "### Untracked neighbour"
	echo
	neighbour_section
	echo
	echo "### Process trees (${ALLOCS[forks]} allocations and as many frees in each: 100 pairs a child)"
	echo
	trees_section
}

if [[ -n $OUT ]]; then
	report | tee "$OUT"
else
	report
fi
