#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scale.sh — how memtrack's costs grow: with events, processes, threads and distinct call paths; per-process costs.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/scale.sh [--quick] [--runs N] [--parts "PART..."] [--out FILE] [--build-dir DIR]
  --quick          smaller sizes (no 10^8 events, no 10^6 paths), 2 rounds: a few minutes
  --runs N         rounds (default 3; 2 with --quick); the largest events and paths sizes run once
  --parts PARTS    of: events processes neighbours threads stacks costs (default: all)
  --out FILE       also write the markdown report to FILE, and the raw results to FILE.results
  --report FILE    no runs: the report of the raw results in FILE (an earlier --out's FILE.results)
  --build-dir DIR  where memtrack and bench/ were built (default: build)
Needs root, jq and bpftool.
EOF
}

BENCH_NAME=scale
RUNS=
FROM=
QUICK=0
OUT=
BUILD_DIR=build
PARTS=(events processes neighbours threads stacks costs)
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
while (($#)); do
	case $1 in
	--quick) QUICK=1 && shift ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--parts) read -r -a PARTS <<<"${2:?--parts needs parts}" && shift 2 ;;
	--out) OUT=${2:?--out needs a file} && shift 2 ;;
	--report) FROM=${2:?--report needs a file} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
: "${RUNS:=$((QUICK ? 2 : 3))}"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs takes a positive integer, not '$RUNS'"
bench_setup churn spawn spawn_wide churn_threads paths strmap rss floor
command -v bpftool >/dev/null || die "bpftool is missing"
STATS_WAS=
# Cold loads: the BPF statistics are then this run's programs' alone (a kept program's add up over runs).
export MEMTRACK_WARM=0
CLEANUP='[[ -z $STATS_WAS ]] || sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"'
q() { ((QUICK)) && echo "$2" || echo "$1"; }

# ---- one run under bench/rss, memtrack's and its closer's file descriptors sampled meanwhile
# Runs command line "$@" and appends a result line with the keys in $KEYS; memtrack's artifact is $TMP/art.
run() {
	local line rc=0 rpid mt="" closer="" fds=0 cfds=0 n
	rm -rf "$TMP/art"
	wait_quiet
	"$BENCH/rss" -o "$TMP/rss" -- "$@" >/dev/null 2>"$TMP/err" </dev/null &
	rpid=$!
	while kill -0 "$rpid" 2>/dev/null; do
		[[ -n $mt ]] || mt=$(pgrep -P "$rpid" -x memtrack | head -n 1 || true)
		# The closer forks twice, so it is reparented to rss, the subreaper.
		[[ -n $closer || -z $mt ]] || closer=$(pgrep -P "$rpid" -x memtrack-close | head -n 1 || true)
		if [[ -n $mt ]]; then
			n=$(find "/proc/$mt/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) || n=0
			((n <= fds)) || fds=$n
		fi
		if [[ -n $closer ]]; then
			n=$(find "/proc/$closer/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) || n=0
			((n <= cfds)) || cfds=$n
		fi
		sleep 0.05
	done
	wait "$rpid" || rc=$?
	if ((rc)); then
		note "$KEYS failed (exit $rc): $(tail -n 3 "$TMP/err" | tr '\n' ' ')"
		return 0
	fi
	line=$(cat "$TMP/rss")
	local extra=""
	[[ -d $TMP/art ]] && extra="bytes=$(stat -c %s "$TMP/art/events.mtz" 2>/dev/null || echo -1) $(saw "$TMP/art")"
	record "$KEYS time_ns=$(kv wall_ns "$line") kb=$(kv self_kb "$line") tree_kb=$(kv tree_kb "$line")" \
		"cpu_ms=$(kv self_cpu_ms "$line") tree_cpu_ms=$(kv tree_cpu_ms "$line") fds=$fds closer_fds=$cfds $extra"
}

# memtrack's counts of artifact $1 as result keys.
saw() {
	"$MEMTRACK" report --json "$1" 2>/dev/null | jq -r '.totals | "events=\(.allocations + .frees)" +
		" drops=\(.dropped_events) ringbuf=\(.drops.ringbuf) attach_failed=\(.attach_failed) procs=\(.processes)"' ||
		echo "events=-1"
}

# Times command "$@" on CPU 1 alone (report, unwind); prints "wall_ns kb".
one_core() {
	"$BENCH/rss" -o "$TMP/rss1" -- taskset -c 1 "$@" >"$TMP/one_core.out" 2>&1 </dev/null || true
	echo "$(kv wall_ns "$(cat "$TMP/rss1")") $(kv tree_kb "$(cat "$TMP/rss1")")"
}

med() { values "$1" "$2" | spread | cut -d' ' -f1; }
maxv() { values "$1" "$2" | sort -g | tail -n 1; }
num() { awk -v a="$2" -v b="${3:-1}" "BEGIN { if (a == \"\" || a < 0 || b == \"\" || b <= 0) print \"—\"; else printf \"$1\", a / b }"; }
# Per-round configuration $3 (default memtrack) minus untraced of key $2 for lines matching $1, one a line.
added() {
	awk -v filter="$1" -v key="$2" -v cfg="${3:-memtrack}" "$AWK_KV"'
	{ parse() }
	matches(filter) && (key in v) && v[key] > 0 { if (v["cfg"] == cfg) a[v["rep"]] = v[key]; if (v["cfg"] == "untraced") b[v["rep"]] = v[key] }
	END { for (r in a) if (r in b) print r, a[r] - b[r] }' "$RESULTS" | sort -n
}

# ---- 1. events: churn with 10^6, 10^7 (and 10^8) events: time, tracer RSS, artifact, report time
EVENTS=(1000000 10000000)
((QUICK)) || EVENTS+=(100000000)
part_events() {
	local e rep c runs
	for e in "${EVENTS[@]}"; do
		runs=$RUNS
		((e >= 100000000)) && runs=1
		for ((rep = 1; rep <= runs; rep++)); do
			for c in untraced memtrack; do
				note "events $e, round $rep/$runs: $c"
				KEYS="part=events n=$e cfg=$c rep=$rep"
				case $c in
				untraced) run "$BENCH/churn" $((e / 2)) ;;
				memtrack) run "$MEMTRACK" record -q -o "$TMP/art" -- "$BENCH/churn" $((e / 2)) ;;
				esac
				if [[ $c == memtrack && $rep == 1 && -d $TMP/art ]]; then
					read -r t kb < <(one_core "$MEMTRACK" report --json "$TMP/art")
					record "part=events_report n=$e rep=1 time_ns=$t kb=$kb"
				fi
			done
		done
	done
	# What the RSS is: memtrack's mappings by resident size, sampled half-way through a 10^7-event run, and the
	# peak at other ring sizes.
	local pid rs
	note "events: memtrack's mappings"
	"$MEMTRACK" record -q -o "$TMP/art-smaps" -- "$BENCH/churn" 5000000 >/dev/null 2>&1 &
	pid=$!
	sleep 4
	awk '/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6 ? $6 : "[anonymous]") } /^Rss:/ { rss[name] += $2 }
		END { for (n in rss) if (rss[n] >= 512) printf "%s %d\n", n, rss[n] }' "/proc/$pid/smaps" 2>/dev/null |
		sort -k2,2nr >"$TMP/smaps" || true
	wait "$pid" || true
	rm -rf "$TMP/art-smaps"
	for rs in 4 8 32; do
		note "events: memtrack --ring-size $rs"
		KEYS="part=ring n=10000000 ring=$rs cfg=memtrack rep=1"
		run "$MEMTRACK" record -q --ring-size "$rs" -o "$TMP/art" -- "$BENCH/churn" 5000000
	done
}

report_events() {
	local e f t
	echo "#### Events (churn: N/2 malloc/free pairs)"
	echo
	echo "| events | untraced s | memtrack s | slowdown ×, per round | M events/s | tracer RSS MiB (max) | artifact MiB | bytes / event | drops | report --json s, one core | report RSS MiB |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for e in "${EVENTS[@]}"; do
		f="part=events n=$e"
		t=$(med "$f cfg=memtrack" time_ns)
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$e" \
			"$(values "$f cfg=untraced" time_ns | fmt_spread %.2f 1e9)" \
			"$(values "$f cfg=memtrack" time_ns | fmt_spread %.2f 1e9)" \
			"$(ratios "$f" time_ns memtrack untraced | fmt_spread %.1f)" \
			"$(num %.2f "$e" "$(awk -v t="${t:-0}" 'BEGIN { print t / 1e3 }')")" \
			"$(num %.1f "$(maxv "$f cfg=memtrack" kb)" 1024)" \
			"$(num %.1f "$(med "$f cfg=memtrack" bytes)" 1048576)" \
			"$(num %.2f "$(med "$f cfg=memtrack" bytes)" "$e")" "$(maxv "$f cfg=memtrack" drops)" \
			"$(num %.2f "$(med "part=events_report n=$e" time_ns)" 1e9)" \
			"$(num %.1f "$(med "part=events_report n=$e" kb)" 1024)"
	done
	echo
	echo "memtrack's peak RSS against its ring (10^7 events, one run each): $(for rs in 4 8 32; do
		printf -- '--ring-size %s: %s MiB, %s drops; ' "$rs" "$(num %.1f "$(maxv "part=ring ring=$rs" kb)" 1024)" \
			"$(maxv "part=ring ring=$rs" drops)"; done | sed 's/; $//')."
	echo
	echo "memtrack's resident memory by mapping, half-way through a 10^7-event run (KiB, mappings over 512 KiB):"
	echo
	echo "| mapping | Rss KiB |"
	echo "|---|---:|"
	awk '{ printf "| `%s` | %d |\n", $1, $2 }' "$TMP/smaps" 2>/dev/null || true
	echo
}

# ---- 2. processes: 1, 100, 1000 children at once, 10,000 one after another; at 1000 also with a link pair of its
# own for every process (MEMTRACK_SHARED_LINKS=0: no shared link past 64 live processes, as before it existed)
WIDE=(1 100 1000)
SEQ=$(q 10000 1000)
part_processes() {
	local rep c n cfgs
	for ((rep = 1; rep <= RUNS; rep++)); do
		for n in "${WIDE[@]}" "seq$SEQ"; do
			cfgs=(untraced memtrack)
			[[ $n == 1000 ]] && cfgs+=(own)
			for c in "${cfgs[@]}"; do
				note "processes $n, round $rep/$RUNS: $c"
				KEYS="part=processes n=$n cfg=$c rep=$rep"
				local cmd=("$BENCH/spawn_wide" "$n")
				[[ $n == seq* ]] && cmd=("$BENCH/spawn" "${n#seq}" fork)
				case $c in
				untraced) run "${cmd[@]}" ;;
				memtrack) run "$MEMTRACK" record -q -o "$TMP/art" -- "${cmd[@]}" ;;
				own) run env MEMTRACK_SHARED_LINKS=0 "$MEMTRACK" record -q -o "$TMP/art" -- "${cmd[@]}" ;;
				esac
			done
		done
	done
}

report_processes() {
	local n f procs
	echo "#### Processes (each child makes 100 malloc/free pairs; \"at once\": all alive together)"
	echo
	echo "| children | untraced s | memtrack s | ms added / process (less the 1-child run's) | memtrack fds (max) | closer fds (max) | tracer RSS MiB | processes seen | events seen | drops | attach failures |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	local c
	for n in "${WIDE[@]}" "seq$SEQ" "own1000"; do
		c=memtrack
		[[ $n == own* ]] && n=${n#own} c=own
		f="part=processes n=$n"
		procs=${n#seq}
		[[ $c == own && -z $(values "$f cfg=own" time_ns) ]] && continue
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$([[ $n == seq* ]] && echo "$procs one after another" || echo "$n at once")$([[ $c == own ]] &&
				echo ", a link pair each (MEMTRACK_SHARED_LINKS=0)")" \
			"$(values "$f cfg=untraced" time_ns | fmt_spread %.3f 1e9)" \
			"$(values "$f cfg=$c" time_ns | fmt_spread %.3f 1e9)" \
			"$( ((procs > 1)) && join <(added "$f" time_ns "$c") <(added "part=processes n=1" time_ns) |
				awk -v n="$procs" '{ print ($2 - $3) / (n - 1) / 1e6 }' | fmt_spread %.2f || echo "—")" \
			"$(maxv "$f cfg=$c" fds)" "$(maxv "$f cfg=$c" closer_fds)" \
			"$(num %.1f "$(maxv "$f cfg=$c" kb)" 1024)" "$(maxv "$f cfg=$c" procs)" \
			"$(med "$f cfg=$c" events)" "$(maxv "$f cfg=$c" drops)" "$(maxv "$f cfg=$c" attach_failed)"
	done
	echo
	echo "Open-file limit: soft $(ulimit -Sn), hard $(ulimit -Hn) (memtrack raises its soft limit to the hard one)."
	echo
}

# ---- 2b. neighbours: a process outside the tree (churn, its own CPU time) while memtrack records 100 children
# alive at once: with the shared link (past 64 processes) every process that maps libc traps, and BPF passes over
# those outside the tree; with a link pair of each process's own (MEMTRACK_SHARED_LINKS=0) none does. The floor's
# empty programs in a shared link's place split that cost (floor -k): the pair, its entry link alone, one session link
# that declines each return. The floor probes a private copy of libc that the neighbour runs on, so that other
# tracers' links on the system's libc (whose return consumers would plant a return probe at each of its hits) stay
# out of it.
NPAIRS=$(q 1000000 200000)
NEIGHBOURS=(none own shared floor-pair floor-entry floor-session)
part_neighbours() {
	local rep c mpid holder t
	cp "$(ldd "$BENCH/churn" | awk '/libc\.so/ { print $3 }')" "$TMP/libc.so.6"
	for ((rep = 1; rep <= RUNS; rep++)); do
		for c in "${NEIGHBOURS[@]}"; do
			note "neighbours, round $rep/$RUNS: $c"
			wait_quiet
			mpid=
			rm -rf "$TMP/art"
			if [[ $c == floor-* ]]; then
				record "part=neighbours cfg=$c rep=$rep $("$BENCH/floor" -k "${c#floor-}" -f "$TMP/libc.so.6" -- \
					env LD_LIBRARY_PATH="$TMP" "$BENCH/churn" "$NPAIRS" --cpu | tr ' ' '=')"
				continue
			fi
			if [[ $c != none ]]; then
				env MEMTRACK_SHARED_LINKS="$([[ $c == own ]] && echo 0)" "$MEMTRACK" record -q -o "$TMP/art" \
					-- "$BENCH/spawn_wide" 100 hold >/dev/null 2>"$TMP/err" </dev/null &
				mpid=$!
				holder=
				for ((t = 0; t < 1200; t++)); do
					[[ -n $holder ]] || holder=$(pgrep -P "$mpid" -x spawn_wide | head -n 1 || true)
					[[ -n $holder && $(pgrep -P "$holder" | wc -l) -ge 100 ]] && break
					sleep 0.05
				done
				sleep 1	# the last children's binds
			fi
			record "part=neighbours cfg=$c rep=$rep $("$BENCH/churn" "$NPAIRS" --cpu | tr ' ' '=')"
			if [[ -n $mpid ]]; then
				[[ -z $holder ]] || kill -USR1 "$holder" 2>/dev/null || true
				wait "$mpid" || note "neighbours $c: memtrack failed: $(tail -n 3 "$TMP/err" | tr '\n' ' ')"
				rm -rf "$TMP/art"
			fi
		done
	done
}

report_neighbours() {
	local c
	echo "#### Untracked neighbours (\`churn $NPAIRS\` outside the tree, its own CPU time, while memtrack records"
	echo "\`spawn_wide 100 hold\`: 100 children alive at once)"
	echo
	echo "| memtrack's links | neighbour's CPU ms | ns / call (malloc or free) | × alone, per round |"
	echo "|---|---:|---:|---:|"
	for c in "${NEIGHBOURS[@]}"; do
		printf '| %s | %s | %s | %s |\n' \
			"$(case $c in none) echo "none (memtrack not running)" ;; own) echo "a pair per process (MEMTRACK_SHARED_LINKS=0)" ;;
				shared) echo "one shared pair (default, past 64 processes)" ;;
				floor-pair) echo "floor, shared pair (empty programs; private libc)" ;;
				floor-entry) echo "floor, shared entry link alone" ;;
				floor-session) echo "floor, one shared session link declining the return" ;; esac)" \
			"$(values "part=neighbours cfg=$c" cpu_ms | fmt_spread %.1f)" \
			"$(num %.1f "$(med "part=neighbours cfg=$c" cpu_ms)" "$(awk -v n="$NPAIRS" 'BEGIN { print 2 * n / 1e6 }')")" \
			"$(ratios "part=neighbours" cpu_ms "$c" none | fmt_spread %.2f)"
	done
	echo
}

# ---- 3. threads: churn over 1, 16, 64, 256 threads on the machine's CPUs
THREADS=(1 16 64 256)
TPAIRS=$(q 2000000 200000)
part_threads() {
	local rep c t
	for ((rep = 1; rep <= RUNS; rep++)); do
		for t in "${THREADS[@]}"; do
			for c in untraced memtrack; do
				note "threads $t, round $rep/$RUNS: $c"
				KEYS="part=threads n=$t cfg=$c rep=$rep"
				case $c in
				untraced) run "$BENCH/churn_threads" "$TPAIRS" "$t" ;;
				memtrack) run "$MEMTRACK" record -q -o "$TMP/art" -- "$BENCH/churn_threads" "$TPAIRS" "$t" ;;
				esac
			done
		done
	done
}

report_threads() {
	local t f
	echo "#### Threads ($TPAIRS malloc/free pairs split over T threads, $(nproc) CPUs; default ring)"
	echo
	echo "| threads | untraced s | memtrack s | slowdown × | events seen (of $((2 * TPAIRS))) | drops (max) | ring drops (max) | memtrack CPU s | ÷ wall (CPUs) | ÷ the run's CPU |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for t in "${THREADS[@]}"; do
		f="part=threads n=$t"
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
			"$(values "$f cfg=untraced" time_ns | fmt_spread %.2f 1e9)" \
			"$(values "$f cfg=memtrack" time_ns | fmt_spread %.2f 1e9)" \
			"$(ratios "$f" time_ns memtrack untraced | fmt_spread %.1f)" \
			"$(med "$f cfg=memtrack" events)" "$(maxv "$f cfg=memtrack" drops)" "$(maxv "$f cfg=memtrack" ringbuf)" \
			"$(values "$f cfg=memtrack" cpu_ms | fmt_spread %.2f 1000)" \
			"$(awk -v filter="$f cfg=memtrack" "$AWK_KV"'
				{ parse() } matches(filter) && v["time_ns"] > 0 && v["cpu_ms"] >= 0 { print v["cpu_ms"] * 1e6 / v["time_ns"] }' \
				"$RESULTS" | fmt_spread %.2f)" \
			"$(awk -v filter="$f cfg=memtrack" "$AWK_KV"'
				{ parse() } matches(filter) && v["cpu_ms"] >= 0 && v["tree_cpu_ms"] > 0 { print v["cpu_ms"] / (v["cpu_ms"] + v["tree_cpu_ms"]) }' \
				"$RESULTS" | fmt_spread %.2f)"
	done
	echo
	echo "memtrack CPU: the tracer process's own user + system time (its reader, attach worker and ptrace loop;"
	echo "not the probes, which the kernel charges to the threads that trap). \"÷ the run's CPU\": its share of all the CPU"
	echo "the run used (memtrack's and the workload's)."
	echo
}

# ---- 4. stacks: N distinct call paths, each taken twice, under --stacks
PATHS_N=(1000 10000 100000)
((QUICK)) || PATHS_N+=(1000000)
part_stacks() {
	local n rep c runs t kb
	for n in "${PATHS_N[@]}"; do
		runs=$RUNS
		((n >= 1000000)) && runs=1
		for ((rep = 1; rep <= runs; rep++)); do
			for c in untraced memtrack stacks; do
				note "paths $n, round $rep/$runs: $c"
				KEYS="part=stacks n=$n cfg=$c rep=$rep"
				case $c in
				untraced) run "$BENCH/paths" "$n" 2 ;;
				memtrack) run "$MEMTRACK" record -q -o "$TMP/art" -- "$BENCH/paths" "$n" 2 ;;
				stacks) run "$MEMTRACK" record -q --stacks -o "$TMP/art" -- "$BENCH/paths" "$n" 2 ;;
				esac
			done
			[[ $rep == 1 && -d $TMP/art ]] || continue
			"$MEMTRACK" dump "$TMP/art" 2>/dev/null | grep '"event":"stack"' | grep -o '"hash":[0-9]*' >"$TMP/hashes" || true
			read -r t kb < <(one_core "$MEMTRACK" unwind --stats "$TMP/art")
			record "part=stacks_unwind n=$n time_ns=$t kb=$kb defs=$(wc -l <"$TMP/hashes")" \
				"distinct=$(sort -u "$TMP/hashes" | wc -l)" \
				"rate=$(sed -n 's/.*: \([0-9]*\) stacks\/s on one core.*/\1/p' "$TMP/one_core.out" | head -n 1)"
			read -r t kb < <(one_core "$MEMTRACK" report "$TMP/art")
			record "part=stacks_report n=$n time_ns=$t kb=$kb"
		done
	done
}

report_stacks() {
	local n f u
	echo "#### Stacks (\`bench/paths N 2\`: N distinct call paths 14 frames deep, each taken twice: 2N malloc/free pairs)"
	echo
	echo "| paths | untraced s | memtrack s | --stacks s | --stacks ×, per round | --stacks ÷ memtrack | --stacks drops (events lost; 4 per path made) | tracer RSS MiB | artifact MiB | bytes / path | definitions / path | unwind s, one core | unwound stacks/s | report s, one core | report RSS MiB |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for n in "${PATHS_N[@]}"; do
		f="part=stacks n=$n"
		u="part=stacks_unwind n=$n"
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" \
			"$(values "$f cfg=untraced" time_ns | fmt_spread %.3f 1e9)" \
			"$(values "$f cfg=memtrack" time_ns | fmt_spread %.3f 1e9)" \
			"$(values "$f cfg=stacks" time_ns | fmt_spread %.3f 1e9)" \
			"$(ratios "$f" time_ns stacks untraced | fmt_spread %.1f)" \
			"$(ratios "$f" time_ns stacks memtrack | fmt_spread %.2f)" \
			"$(values "$f cfg=stacks" drops | fmt_spread %.0f)" \
			"$(num %.1f "$(maxv "$f cfg=stacks" kb)" 1024)" "$(num %.1f "$(med "$f cfg=stacks" bytes)" 1048576)" \
			"$(num %.0f "$(med "$f cfg=stacks" bytes)" "$n")" "$(num %.3f "$(med "$u" defs)" "$n")" \
			"$(num %.2f "$(med "$u" time_ns)" 1e9)" "$(med "$u" rate)" \
			"$(num %.2f "$(med "part=stacks_report n=$n" time_ns)" 1e9)" \
			"$(num %.1f "$(med "part=stacks_report n=$n" kb)" 1024)"
	done
	echo
	echo "Distinct hashes among the definitions: $(for n in "${PATHS_N[@]}"; do
		printf '%s paths: %s of %s; ' "$n" "$(med "part=stacks_unwind n=$n" distinct)" "$(med "part=stacks_unwind n=$n" defs)"
	done | sed 's/; $//')."
	echo
}

# ---- 5. costs: where the time goes per process and per event, by the BPF statistics and the tracer's CPU
# Programs that process $1 holds (its file descriptors' prog_id: this bpftool lists no pids) as "name run_cnt
# run_time_ns" lines.
bpf_sample() {
	local ids
	ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -u | paste -sd, || true)
	[[ -n $ids ]] || return 0
	bpftool prog show -j 2>/dev/null | jq -r --arg ids "$ids" '($ids | split(",") | map(tonumber)) as $ids |
		.[] | select(.run_cnt != null and (.id as $i | $ids | index($i))) | "\(.name) \(.run_cnt) \(.run_time_ns)"' \
		2>/dev/null || true
}
# Runs "$@" (memtrack or the floor) sampling its programs' statistics and its CPU (user, system) until it ends.
cost_run() {
	local pid t0 t1 st=() cut=""
	rm -rf "$TMP/art"
	wait_quiet
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 </dev/null &
	pid=$!
	: >"$TMP/bpf"
	while kill -0 "$pid" 2>/dev/null; do
		bpf_sample "$pid" >"$TMP/bpf.tmp"
		[[ -s $TMP/bpf.tmp ]] && mv "$TMP/bpf.tmp" "$TMP/bpf"
		{ read -r -a st <"/proc/$pid/stat"; } 2>/dev/null && cut="${st[13]} ${st[14]}"
		sleep 0.1
	done
	wait "$pid" || note "$KEYS: exit $?"
	t1=$(date +%s%N)
	local hz
	hz=$(getconf CLK_TCK)
	read -r ut stt <<<"${cut:-0 0}"
	record "$KEYS time_ns=$((t1 - t0)) user_ms=$((ut * 1000 / hz)) sys_ms=$((stt * 1000 / hz))" \
		"bpf_ns=$(awk '{ s += $3 } END { print s + 0 }' "$TMP/bpf") bpf_runs=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/bpf")" \
		"$( [[ -d $TMP/art ]] && saw "$TMP/art")"
	awk -v k="${KEYS/part=costs/part=bpfprog}" '{ print k, "prog=" $1, "runs=" $2, "ns=" $3 }' "$TMP/bpf" >>"$RESULTS"
}

COST_FORKS=$(q 2000 300)
COST_STRMAP=$(q 300000 50000)
part_costs() {
	local rep w c ff
	STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	for ((rep = 1; rep <= RUNS; rep++)); do
		for w in forks strmap; do
			local cmd=("$BENCH/spawn" "$COST_FORKS" fork)
			[[ $w == strmap ]] && cmd=("$BENCH/strmap" "$COST_STRMAP")
			read -r -a ff <<<"-f ${cmd[0]} $(ldd "${cmd[0]}" | awk '$2 == "=>" && $3 ~ /^\// { printf "-f %s ", $3 }')"
			for c in untraced floor memtrack; do
				note "costs $w, round $rep/$RUNS: $c"
				KEYS="part=costs w=$w cfg=$c rep=$rep"
				case $c in
				untraced) cost_run "${cmd[@]}" ;;
				floor) cost_run "$BENCH/floor" -s "${ff[@]}" -- "${cmd[@]}" ;;
				memtrack) cost_run "$MEMTRACK" record -q -o "$TMP/art" -- "${cmd[@]}" ;;
				esac
			done
		done
	done
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	STATS_WAS=
}

report_costs() {
	local w f per unit
	echo "#### Costs, with the BPF statistics on (\`kernel.bpf_stats_enabled=1\`: each program run is timed, which"
	echo "adds two clock reads a run, so these walls are longer than elsewhere)"
	echo
	echo "| workload | per | untraced | floor + sys_exit | memtrack | floor's added | memtrack's added | memtrack's BPF | floor's BPF | memtrack user CPU | memtrack system CPU |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for w in forks strmap; do
		f="part=costs w=$w"
		if [[ $w == forks ]]; then per=$COST_FORKS unit="process (µs)"; else per=$(med "$f cfg=memtrack" events) unit="event (ns)"; fi
		local scale=1
		[[ $w == forks ]] && scale=1000
		local u fl m
		u=$(med "$f cfg=untraced" time_ns) fl=$(med "$f cfg=floor" time_ns) m=$(med "$f cfg=memtrack" time_ns)
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
			"$([[ $w == forks ]] && echo "spawn $COST_FORKS fork" || echo "strmap $COST_STRMAP ($per events)")" "$unit" \
			"$(num %.1f "$u" "$((per * scale))")" "$(num %.1f "$fl" "$((per * scale))")" "$(num %.1f "$m" "$((per * scale))")" \
			"$(num %.1f "$(awk -v a="$fl" -v b="$u" 'BEGIN { print a - b }')" "$((per * scale))")" \
			"$(num %.1f "$(awk -v a="$m" -v b="$u" 'BEGIN { print a - b }')" "$((per * scale))")" \
			"$(num %.1f "$(med "$f cfg=memtrack" bpf_ns)" "$((per * scale))")" \
			"$(num %.1f "$(med "$f cfg=floor" bpf_ns)" "$((per * scale))")" \
			"$(num %.1f "$(med "$f cfg=memtrack" user_ms)" "$(awk -v p="$per" -v s="$scale" 'BEGIN { print p * s / 1e6 }')")" \
			"$(num %.1f "$(med "$f cfg=memtrack" sys_ms)" "$(awk -v p="$per" -v s="$scale" 'BEGIN { print p * s / 1e6 }')")"
	done
	echo
	echo "memtrack's BPF programs (median over rounds; runs and ns per unit as above):"
	echo
	echo "| workload | program | runs / unit | ns / run | per unit |"
	echo "|---|---|---:|---:|---:|"
	for w in forks strmap; do
		if [[ $w == forks ]]; then per=$COST_FORKS scale=1000; else per=$(med "part=costs w=$w cfg=memtrack" events) scale=1; fi
		local prog r
		for prog in $(values "part=bpfprog w=$w cfg=memtrack" prog 2>/dev/null | sort -u); do
			r=$(med "part=bpfprog w=$w cfg=memtrack prog=$prog" runs)
			printf '| %s | %s | %s | %s | %s |\n' "$w" "$prog" "$(num %.2f "$r" "$per")" \
				"$(num %.0f "$(med "part=bpfprog w=$w cfg=memtrack prog=$prog" ns)" "$r")" \
				"$(num %.2f "$(med "part=bpfprog w=$w cfg=memtrack prog=$prog" ns)" "$((per * scale))")"
		done
	done
	echo
}

# ---- the parts, then the report
T0=$SECONDS
LOAD_START=$(load_now)
for p in "${PARTS[@]}"; do
	declare -F "part_$p" >/dev/null || die "unknown part '$p'"
	[[ -n $FROM ]] || "part_$p"
done
[[ -z $FROM ]] || cp "$FROM" "$RESULTS"
ELAPSED=$((SECONDS - T0))
LOAD_END=$(load_now)
[[ -z $OUT ]] || cp "$RESULTS" "$OUT.results"
{
	echo "### Scale — $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs, kernel $(uname -r); memtrack tree $VERSION. $RUNS round(s) (the largest events and"
	echo "paths sizes once), configurations interleaved; $((ELAPSED / 60)) min $((ELAPSED % 60)) s in all. Load average"
	echo "(1, 5, 15 min) at the start $LOAD_START, at the end $LOAD_END; $DISTURBED run(s) began while another tracer ran."
	echo
	for p in "${PARTS[@]}"; do "report_$p"; done
} >"$TMP/report.md"
cat "$TMP/report.md"
[[ -z $OUT ]] || cp "$TMP/report.md" "$OUT"
