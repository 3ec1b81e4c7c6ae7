#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# programs.sh — real programs from Debian packages, untraced and under memtrack and its peers, interleaved per round.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/programs.sh [--quick] [--runs N] [--only "PROG..."] [--configs "CFG..."] [--out FILE]
                              [--build-dir DIR]
  --quick          smaller inputs (about a tenth of the work), 2 rounds: a few minutes
  --runs N         rounds (default 3; 2 with --quick); each round runs every program under every configuration
  --only PROGS     programs, of: python gcc make sqlite xz bash strmap
  --configs CFGS   configurations, of: untraced memtrack stacks heaptrack massif memleak bpftrace
  --massif-runs N  rounds that include massif, the first N (default 1: valgrind takes minutes on gcc and
                   make)
  --out FILE       also write the markdown report to FILE, and the raw results to FILE.results
  --build-dir DIR  where memtrack and bench/ were built (default: build)
Needs root, jq, bpftool, and the programs and peers (bench/README.md, "Real programs").
EOF
}

BENCH_NAME=programs
RUNS=
MASSIF_RUNS=
QUICK=0
OUT=
BUILD_DIR=build
PROGS=(python gcc make sqlite xz bash strmap)
CONFIGS=(untraced memtrack stacks heaptrack massif memleak bpftrace)
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
while (($#)); do
	case $1 in
	--quick) QUICK=1 && shift ;;
	--runs) RUNS=${2:?--runs needs a number} && shift 2 ;;
	--only) read -r -a PROGS <<<"${2:?--only needs programs}" && shift 2 ;;
	--configs) read -r -a CONFIGS <<<"${2:?--configs needs configurations}" && shift 2 ;;
	--massif-runs) MASSIF_RUNS=${2:?--massif-runs needs a number} && shift 2 ;;
	--out) OUT=${2:?--out needs a file} && shift 2 ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory} && shift 2 ;;
	-h | --help) usage && exit 0 ;;
	*) usage >&2 && die "unknown option '$1'" ;;
	esac
done
: "${RUNS:=$((QUICK ? 2 : 3))}"
: "${MASSIF_RUNS:=1}"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs takes a positive integer, not '$RUNS'"
bench_setup strmap rss gate
command -v bpftool >/dev/null || die "bpftool is missing: it tells when memleak and bpftrace are attached"
W=$ROOT/bench/workloads
IN=$TMP/in
mkdir -p "$IN"

# ---- the programs; --quick takes about a tenth of the work of each
q() { ((QUICK)) && echo "$2" || echo "$1"; }
declare -A CMD WHAT NEED
export PYTHONHASHSEED=0
CMD[python]="/usr/bin/python3 $W/pyjson.py $(q 200000 20000)"
WHAT[python]="python3: $(q 200000 20000) dicts to JSON and back, indexed and sorted (PYTHONHASHSEED=0)"
NEED[python]=/usr/bin/python3
CMD[gcc]="gcc -O2 -c $IN/gen.c -o $IN/gen.o"
WHAT[gcc]="gcc -O2 -c of a generated $(q 2000 500)-line C file"
NEED[gcc]=gcc
CMD[make]="make -s -j2 -C $IN/proj"
WHAT[make]="make -j2 of a generated 20-file project ($(q 300 60) lines a file, gcc -O2), from clean"
NEED[make]=make
CMD[sqlite]="sqlite3 -init $IN/w.sql $IN/db .quit"
WHAT[sqlite]="sqlite3: $(q 100000 10000) rows inserted in one transaction, two indexes, queries, an update, a delete"
NEED[sqlite]=sqlite3
CMD[xz]="xz -9 -T1 -c $IN/data"
WHAT[xz]="xz -9 of $(q 20 2) MiB of generated log-like text (single-threaded)"
NEED[xz]=xz
CMD[bash]="bash $W/cmds.sh $(q 500 100)"
WHAT[bash]="a bash script running $(q 500 100) short commands (coreutils, pipes, substitutions)"
NEED[bash]=bash
CMD[strmap]="$BENCH/strmap $(q 1000000 100000)"
WHAT[strmap]="C++: $(q 1000000 100000) strings into std::map and std::unordered_map, looked up, erased"
NEED[strmap]=$BENCH/strmap
bash "$W/gen_c.sh" "$(q 2000 500)" >"$IN/gen.c"
bash "$W/gen_project.sh" "$IN/proj" 20 "$(q 300 60)"
bash "$W/gen_sql.sh" "$(q 100000 10000)" >"$IN/w.sql"
bash "$W/gen_data.sh" "$(q 20 2)" >"$IN/data"
# Untimed, before each run: the same starting state every time.
prepare() {
	case $1 in
	make) make -s -C "$IN/proj" clean ;;
	sqlite) rm -f "$IN/db" ;;
	gcc) rm -f "$IN/gen.o" ;;
	esac
}

# ---- the configurations
declare -A LABEL HAVE
LABEL=([untraced]=untraced [memtrack]=memtrack [stacks]="memtrack --stacks" [heaptrack]=heaptrack
	[massif]="valgrind massif" [memleak]="bcc memleak" [bpftrace]="bpftrace count")
# bcc compiles memleak's program against the running kernel's headers. Where the kernel has none (this VM's), a
# Debian linux-headers package of another version does for uprobes (pt_regs is the same), merged here from its two
# halves (-common and -amd64) as bcc wants one tree (BCC_KERNEL_SOURCE).
bcc_headers() {
	local arch common
	[[ -e /lib/modules/$(uname -r)/build || -n ${BCC_KERNEL_SOURCE:-} ]] && return 0
	arch=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)
	common=${arch%-amd64}-common
	[[ -d $arch && -d $common ]] || { note "no kernel headers: bcc's memleak cannot compile (bench/README.md)"; return 1; }
	mkdir -p "$TMP/khdr"
	cp -rs "$common/." "$TMP/khdr/" && cp -rs --remove-destination "$arch/." "$TMP/khdr/" || return 1
	export BCC_KERNEL_SOURCE=$TMP/khdr
}
for c in "${CONFIGS[@]}"; do
	[[ -n ${LABEL[$c]:-} ]] || die "unknown configuration '$c'"
	HAVE[$c]=1
done
have_tool() { command -v "$1" >/dev/null || { note "$1 is missing: $2 is left out" && HAVE[$2]=0; }; }
[[ -n ${HAVE[heaptrack]:-} ]] && have_tool heaptrack heaptrack
[[ -n ${HAVE[massif]:-} ]] && have_tool valgrind massif
[[ -n ${HAVE[memleak]:-} ]] && have_tool memleak-bpfcc memleak
[[ ${HAVE[memleak]:-0} == 1 ]] && { bcc_headers || HAVE[memleak]=0; }
[[ -n ${HAVE[bpftrace]:-} ]] && have_tool bpftrace bpftrace
for p in "${PROGS[@]}"; do
	[[ -n ${CMD[$p]:-} ]] || die "unknown program '$p'"
	command -v "${NEED[$p]}" >/dev/null || die "${NEED[$p]} is missing (bench/README.md lists the packages)"
done
# How many perf-event attachments each attaching peer makes: it is in place when it holds them all.
declare -A ATTACHES=([memleak]=20 [bpftrace]=5) STOP_SIG=([memleak]=TERM [bpftrace]=INT)

# The tracer's command line for configuration $1 around command line $2, writing under $3.
launch_cmd() {
	local cfg=$1 art=$3 cmd
	read -r -a cmd <<<"$2"
	case $cfg in
	untraced) CMDLINE=("${cmd[@]}") ;;
	memtrack) CMDLINE=("$MEMTRACK" record -q -o "$art" -- "${cmd[@]}") ;;
	stacks) CMDLINE=("$MEMTRACK" record -q --stacks -o "$art" -- "${cmd[@]}") ;;
	heaptrack) CMDLINE=(heaptrack -o "$art/heaptrack" "${cmd[@]}") ;;
	massif) CMDLINE=(valgrind --tool=massif --trace-children=yes --massif-out-file="$art/massif.%p" "${cmd[@]}") ;;
	esac
}

dir_bytes() { # total size of the files matching glob $1, or -1
	local f n=0 any=0
	for f in $1; do [[ -f $f ]] && n=$((n + $(stat -c %s "$f"))) any=1; done
	((any)) && echo $n || echo -1
}

# What memtrack counted, as result keys: events (allocations + frees), processes, the root process's allocations.
memtrack_saw() {
	"$MEMTRACK" report --json "$1" 2>/dev/null | jq -r '.totals as $t | "events=\($t.allocations + $t.frees)" +
		" allocs=\($t.allocations) frees=\($t.frees) drops=\($t.dropped_events) procs=\($t.processes)" +
		" root_allocs=\(([.processes[] | select(.pid == $t.root_pid) | .allocations] | add) // -1)"' ||
		echo "events=-1"
}

# One run of a configuration that starts the command itself, under bench/rss.
run_launch() {
	local cfg=$1 p=$2 rep=$3 art=$TMP/art line rc=0 extra="" kb saw
	launch_cmd "$cfg" "${CMD[$p]}" "$art"
	[[ $cfg == heaptrack || $cfg == massif ]] && mkdir -p "$art"
	"$BENCH/rss" -o "$TMP/rss" -- "${CMDLINE[@]}" >/dev/null 2>"$TMP/err" </dev/null || rc=$?
	if ((rc)); then
		note "$cfg on $p failed (exit $rc): $(tail -n 3 "$TMP/err" | tr '\n' ' ')"
		return 0
	fi
	line=$(cat "$TMP/rss")
	kb=$(kv tree_kb "$line")
	case $cfg in
	memtrack | stacks)
		kb=$(kv self_kb "$line")
		extra="bytes=$(dir_bytes "$art/events.mtz") $(memtrack_saw "$art")"
		;;
	heaptrack)
		extra="bytes=$(dir_bytes "$art/heaptrack.*")"
		if ((rep == 1)); then
			saw=$(heaptrack_print "$art"/heaptrack.* 2>/dev/null | sed -n 's/^calls to allocation functions: \([0-9]*\).*/\1/p')
			extra+=" saw=${saw:--1}"
		fi
		;;
	massif) extra="bytes=$(dir_bytes "$art/massif.*") procs=$(find "$art" -name 'massif.*' | wc -l)" ;;
	esac
	local busy tree
	busy=$(kv busy_ms "$line") tree=$(kv tree_cpu_ms "$line")
	record "prog=$p cfg=$cfg rep=$rep time_ns=$(kv wall_ns "$line") total_ns=$(kv wall_ns "$line") kb=$kb" \
		"other_ms=$((busy >= 0 && tree >= 0 && busy > tree ? busy - tree : 0)) $extra"
}

# One run of a peer that attaches by pid: the command waits stopped in bench/gate while the peer starts and
# attaches (its compile is no part of the command's time); it runs from SIGCONT to its exit.
run_attach() {
	local cfg=$1 p=$2 rep=$3 cmd gpid rpid tpid cpid t n extra="" line
	read -r -a cmd <<<"${CMD[$p]}"
	rm -f "$TMP/pid" "$TMP/gate"
	"$BENCH/gate" "$TMP/pid" "$TMP/gate" -- "${cmd[@]}" >/dev/null 2>"$TMP/err" </dev/null &
	gpid=$!
	for ((t = 0; t < 200; t++)); do [[ -s $TMP/pid ]] && break; sleep 0.05; done
	cpid=$(cat "$TMP/pid" 2>/dev/null) || { note "$p did not start under gate" && wait "$gpid"; return 0; }
	CLEANUP="kill -KILL $cpid 2>/dev/null; wait"
	case $cfg in
	memleak) "$BENCH/rss" -o "$TMP/rss" -- /usr/bin/python3 "$ROOT/bench/peers/memleak.py" -p "$cpid" >"$TMP/peer" \
		2>&1 </dev/null & ;;
	bpftrace) "$BENCH/rss" -o "$TMP/rss" -- bpftrace "$ROOT/bench/peers/mallocs.bt" "$cpid" >"$TMP/peer" 2>&1 \
		</dev/null & ;;
	esac
	rpid=$!
	for ((t = 0; t < 100; t++)); do tpid=$(pgrep -P "$rpid" | head -n 1 || true) && [[ -n $tpid ]] && break; sleep 0.05; done
	OURS="$rpid $tpid"
	CLEANUP="kill -KILL $cpid 2>/dev/null; kill -TERM $tpid 2>/dev/null; wait"
	if [[ -z $tpid ]] || ! wait_attached "$tpid" "${ATTACHES[$cfg]}"; then
		note "$cfg did not attach to $p: $(tail -n 3 "$TMP/peer" | tr '\n' ' ')"
		kill -KILL "$cpid" 2>/dev/null || true
		[[ -n $tpid ]] && kill -TERM "$tpid" 2>/dev/null
		wait "$gpid" "$rpid" 2>/dev/null || true
		OURS= CLEANUP=
		return 0
	fi
	kill -CONT "$cpid"
	wait "$gpid" || note "$p under $cfg exited with $?"
	# A script's background jobs start with SIGINT ignored, and Python leaves it so: memleak gets SIGTERM (its
	# links go with its file descriptors). bpftrace installs its own SIGINT handler and prints its maps at it.
	# bpftrace once in a while missed the first one (it was found still waiting in epoll minutes later): again
	# each second until it has gone.
	for ((t = 0; t < 30; t++)); do
		kill "-${STOP_SIG[$cfg]}" "$tpid" 2>/dev/null || break
		for ((n = 0; n < 10; n++)); do kill -0 "$tpid" 2>/dev/null || break 2; sleep 0.1; done
	done
	wait "$rpid" 2>/dev/null || true
	OURS= CLEANUP=
	line=$(cat "$TMP/rss")
	[[ $cfg == bpftrace ]] && extra="saw=$(awk -F': ' '/^@(allocs|frees)\[/ { s += $2 } END { print s + 0 }' "$TMP/peer")"
	record "prog=$p cfg=$cfg rep=$rep time_ns=$(kv wall_ns "$(cat "$TMP/gate")") total_ns=$(kv wall_ns "$line")" \
		"kb=$(kv self_kb "$line") $extra"
}

measure() {
	local cfg=$1 p=$2 rep=$3
	rm -rf "$TMP/art"
	prepare "$p" >/dev/null 2>&1 || true
	wait_quiet
	case $cfg in
	memleak | bpftrace) run_attach "$@" ;;
	*) run_launch "$@" ;;
	esac
}

# ---- the rounds: every program under every configuration, so that drift hits all alike
T0=$SECONDS
LOAD_START=$(load_now)
LOADS=()
for ((rep = 1; rep <= RUNS; rep++)); do
	for p in "${PROGS[@]}"; do
		for c in "${CONFIGS[@]}"; do
			((HAVE[$c])) || continue
			[[ $c == massif ]] && ((rep > MASSIF_RUNS)) && continue
			note "round $rep/$RUNS: $c on $p ($((SECONDS - T0)) s so far, load $(load_now))"
			measure "$c" "$p" "$rep"
		done
		LOADS+=("$(load_now | cut -d' ' -f1)")
	done
done
ELAPSED=$((SECONDS - T0))
LOAD_END=$(load_now)
[[ -z $OUT ]] || cp "$RESULTS" "$OUT.results"

# ---- the report
# Median of key $3 over the runs of program $1 under configuration $2 ("" if none).
med() { values "prog=$1 cfg=$2" "$3" | spread | cut -d' ' -f1; }
maxv() { values "prog=$1 cfg=$2" "$3" | sort -g | tail -n 1; }
num() { awk -v a="$2" -v b="${3:-1}" "BEGIN { if (a == \"\" || a < 0 || b == \"\" || b <= 0) print \"—\"; else printf \"$1\", a / b }"; }

saw_of() {
	local p=$1 c=$2 ev procs root all
	case $c in
	memtrack | stacks)
		ev=$(med "$p" "$c" events) procs=$(maxv "$p" "$c" procs) drops=$(maxv "$p" "$c" drops)
		[[ -n $ev ]] && echo "$(num %.0f "$ev") events, $procs processes, ${drops:-?} drops" || echo "—"
		;;
	heaptrack)
		root=$(med "$p" memtrack root_allocs) all=$(med "$p" memtrack allocs)
		echo "$(num %.0f "$(maxv "$p" heaptrack saw)") allocation calls (memtrack: $(num %.0f "$root") in the" \
			"first process, $(num %.0f "$all") in all)"
		;;
	massif) echo "$(maxv "$p" massif procs) processes" ;;
	bpftrace) echo "$(num %.0f "$(med "$p" bpftrace saw)") calls" ;;
	*) echo "" ;;
	esac
}

report() {
	local p c ev t0 t
	echo "### Real programs — $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs, kernel $(uname -r); memtrack tree $VERSION. $RUNS round(s), every program under every"
	echo "configuration in each (massif in the first $MASSIF_RUNS), in this order: ${CONFIGS[*]}; $((ELAPSED / 60)) min"
	echo "$((ELAPSED % 60)) s in all."
	echo "Load average (1, 5, 15 min) at the start $LOAD_START, at the end $LOAD_END; 1-min load after each program:"
	echo "median $(printf '%s\n' "${LOADS[@]}" | spread | awk '{ print $1 ", range " $2 "–" $3 }'). $DISTURBED run(s) began"
	echo "while another tracer ran."
	echo
	echo "| program | what |"
	echo "|---|---|"
	for p in "${PROGS[@]}"; do echo "| $p | ${WHAT[$p]} |"; done
	echo
	echo "| program | configuration | s, median (min–max) | slowdown ×, per round | M events/s | bytes / event | tracer RSS MiB | counted |"
	echo "|---|---|---:|---:|---:|---:|---:|---|"
	for p in "${PROGS[@]}"; do
		ev=$(med "$p" memtrack events)
		for c in "${CONFIGS[@]}"; do
			((HAVE[$c])) || continue
			t=$(med "$p" "$c" time_ns)
			printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "${LABEL[$c]}" \
				"$(values "prog=$p cfg=$c" time_ns | fmt_spread %.2f 1e9)" \
				"$( [[ $c == untraced ]] && echo 1.0 || ratios "prog=$p" time_ns "$c" untraced | fmt_spread %.2f)" \
				"$(num %.3f "$ev" "$(awk -v t="${t:-0}" 'BEGIN { print t / 1e3 }')")" \
				"$(num %.2f "$(med "$p" "$c" bytes)" "$ev")" \
				"$(num %.1f "$(maxv "$p" "$c" kb)" 1024)" "$(saw_of "$p" "$c")"
		done
	done
	echo
	echo "Slowdowns side by side (per-round ratio to untraced, median), and memtrack's time over each peer's in the"
	echo "same round (median, min–max; below 1: memtrack is faster):"
	echo
	echo "| program | memtrack | --stacks | heaptrack | massif | memleak | bpftrace | memtrack ÷ memleak | memtrack ÷ bpftrace | memtrack ÷ heaptrack |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for p in "${PROGS[@]}"; do
		printf '| %s ' "$p"
		for c in memtrack stacks heaptrack massif memleak bpftrace; do
			printf '| %s ' "$(ratios "prog=$p" time_ns "$c" untraced | spread | awk '{ printf "%.2f", $1 }')"
		done
		for c in memleak bpftrace heaptrack; do
			printf '| %s ' "$(ratios "prog=$p" time_ns memtrack "$c" | fmt_spread %.2f)"
		done
		echo "|"
	done
	echo
	echo "The attaching peers' own start-up and tear-down, outside the times above (median s, the tracer's whole run"
	echo "less the command's): memleak $(for p in "${PROGS[@]}"; do
		printf '%s %s, ' "$p" "$(paste <(values "prog=$p cfg=memleak" total_ns) <(values "prog=$p cfg=memleak" time_ns) |
			awk '{ print ($1 - $2) / 1e9 }' | fmt_spread %.1f)"; done | sed 's/, $//');"
	echo "bpftrace $(for p in "${PROGS[@]}"; do
		printf '%s %s, ' "$p" "$(paste <(values "prog=$p cfg=bpftrace" total_ns) <(values "prog=$p cfg=bpftrace" time_ns) |
			awk '{ print ($1 - $2) / 1e9 }' | fmt_spread %.1f)"; done | sed 's/, $//')."
}

report >"$TMP/report.md"
cat "$TMP/report.md"
[[ -z $OUT ]] || cp "$TMP/report.md" "$OUT"
