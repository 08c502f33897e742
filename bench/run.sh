#!/bin/sh
# bench/run.sh — measure what waitprof costs, with and without it in the same
# invocation, and print markdown tables of medians and ratios.
#
#   bench/run.sh BUILD_DIR [rounds]        (rounds: default 5)
#
# BUILD_DIR is a configured and built waitprof build directory; its
# tests/env.sh says which MPI (MPICC, MPIEXEC, MPI_FLAVOR) and which
# libwaitprof.so (WP_LIB) to use.  The bench programs are compiled here with
# that MPICC into BUILD_DIR/bench-out/bin; raw results go to
# BUILD_DIR/bench-out/results.<time>/ (raw.tsv, table.md, the run outputs).
#
# Configurations:
#   none    the program alone
#   hz1     under waitprof with WAITPROF_HZ=1: waitprof has no "off" switch;
#           at 1 Hz the sampler fires about once a second, so this isolates
#           the cost of the wrappers
#   hz100   under waitprof at the default 100 Hz
#   hz1000  under waitprof at 1000 Hz
#   src-S   under waitprof at 100 Hz with WAITPROF_SOURCE=S (wrappers, mpit,
#           peruse): the cost of each stall source; the meta file must name
#           S, or the run stops (a source that fell back measures nothing)
#   lean-S  the same with WAITPROF_LEAN=1: wrappers that read no clock and
#           keep no per-call figures (wrap/wrap.h); the meta file must say
#           wrappers=lean
#   free-H  under waitprof at H Hz with WAITPROF_TIMER=free: free-running
#           timers instead of expirations on the kernel's tick (the meta file
#           must say timer=free)
#   ctr-H   under waitprof at H Hz with WAITPROF_COUNTERS=task-clock,
#           context-switches: one read of a two-counter perf_event group
#           per sample (the meta file must list both)
#   split-H the same with WAITPROF_COUNTERS_SPLIT=1: also a read at every
#           MPI entry and exit (the meta file must have counters_split=)
#   floor-wrap    the ping-pong under bench/floor_wrap.c: not waitprof, the
#           least any wrapper that keeps a per-thread state adds (ping-pong
#           only).  Open MPI's PERUSE by itself is measured in-run by
#           bench/peruse_cost.c, run after the ping-pongs on a PERUSE build.
# BENCH_CONFIGS="none src-wrappers src-mpit" picks the configurations.
# Every round runs every benchmark in every configuration, the configurations
# of a benchmark back to back in an order rotated each round, so that a slow
# spell on a shared machine hits all configurations alike and no
# configuration always runs first.  The ratios are medians over rounds of
# per-round ratios (configuration / none of the same round).
#
# Benchmarks: wrapper_cost (MPI_Iprobe loop), pingpong, workload (the
# run-time dilation, one run against another), coll_cost (MPI_Barrier and
# 8-byte MPI_Allreduce loops, in-run against PMPI, when named in
# BENCH_ONLY), poll_cost (MPI_Test, MPI_Testany over 64 requests,
# MPI_Iprobe, MPI_Irecv + MPI_Isend + MPI_Waitall loops, in-run against
# PMPI, when named in BENCH_ONLY), fpoll_cost (MPI_TESTANY from Fortran,
# over BENCH_POLL_REQUESTS requests on BENCH_POLL_COMM, in-run against
# PMPI_TESTANY, when named in BENCH_ONLY and the build has an MPI Fortran
# compiler), randomaccess (a RandomAccess-like
# kernel of small Isend/Irecv/Waitall exchanges, in-run against PMPI, when
# named in BENCH_ONLY) and, when named in
# BENCH_ONLY, inrun: the workload with waitprof's cost measured inside each
# run (bench/workload.c's block mode: blocks with the MPI calls through
# waitprof and sampling on alternate with blocks that call the PMPI names
# with sampling paused; the ratio of the two is all of waitprof's cost, and
# under none it shows the method's own noise).
#
# Sizes can be changed for a quick check: BENCH_IPROBE_CALLS (1000000),
# BENCH_PP_TRIPS (5000) and BENCH_PP_REPEATS (181), BENCH_WORK_ITERS (7000),
# BENCH_INRUN_ITERS (40000) and BENCH_INRUN_BLOCK (50 sweeps),
# BENCH_COLL_CALLS (2000) and BENCH_COLL_REPEATS (101), BENCH_POLL_CALLS (200000),
# BENCH_POLL_COMM (self; world polls on MPI_COMM_WORLD, which waitprof numbers),
# BENCH_POLL_REQUESTS (64, the requests MPI_Testany polls, up to 1024),
# BENCH_RA_ITERS (2000) and BENCH_RA_REPEATS (31);
# BENCH_PP_SPLIT_US (0.35) separates fast from slow ping-pong runs by their
# PMPI latency; BENCH_ONLY="pingpong ..." runs only the named benchmarks; BENCH_CALLGRIND=0
# skips the instruction counts and the two machine probes (cold_cache.c,
# signal_cost.c).
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/run.sh BUILD_DIR [rounds]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-5}
case $ROUNDS in
'' | *[!0-9]* | 0) echo "bench/run.sh: rounds must be a positive integer" >&2; exit 2 ;;
esac
[ -r "$BUILD/tests/env.sh" ] || { echo "bench/run.sh: $BUILD/tests/env.sh not found (not a configured build dir?)" >&2; exit 2; }
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
[ -r "$WP_LIB" ] || { echo "bench/run.sh: $WP_LIB not found; run make in $BUILD first" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd)

CALLS=${BENCH_IPROBE_CALLS:-1000000}
TRIPS=${BENCH_PP_TRIPS:-5000}
PP_REPEATS=${BENCH_PP_REPEATS:-181}
ONLY=${BENCH_ONLY:-wrapper_cost pingpong workload}
ITERS=${BENCH_WORK_ITERS:-7000}
INRUN_ITERS=${BENCH_INRUN_ITERS:-40000}
INRUN_BLOCK=${BENCH_INRUN_BLOCK:-50}
CONFIGS=${BENCH_CONFIGS:-none hz1 hz100 hz1000}
SPLIT=${BENCH_PP_SPLIT_US:-0.35}
COLL_CALLS=${BENCH_COLL_CALLS:-2000}
POLL_CALLS=${BENCH_POLL_CALLS:-200000}
POLL_COMM=${BENCH_POLL_COMM:-self}
POLL_REQUESTS=${BENCH_POLL_REQUESTS:-64}
COLL_REPEATS=${BENCH_COLL_REPEATS:-101}
RA_ITERS=${BENCH_RA_ITERS:-2000}
RA_REPEATS=${BENCH_RA_REPEATS:-31}

OUT="$BUILD/bench-out"
BIN="$OUT/bin"
RES="$OUT/results.$(date +%Y%m%d-%H%M%S)"
mkdir -p "$BIN" "$RES"
RAW="$RES/raw.tsv"
printf 'round\tbench\tconfig\tmetric\tvalue\n' >"$RAW"

for p in wrapper_cost pingpong workload coll_cost poll_cost randomaccess; do
    $MPICC -std=c11 -O2 -g -Wall -Wextra -o "$BIN/$p" "$SRC/$p.c" -lm
done
case " $ONLY " in
*" fpoll_cost "*)
    [ -n "$MPIFC" ] || { echo "bench/run.sh: fpoll_cost needs the build's MPI Fortran compiler (MPIFC)" >&2; exit 2; }
    $MPIFC -O2 -g -Wall -o "$BIN/fpoll_cost" "$SRC/fpoll_cost.F90" ;;
esac
case " $CONFIGS " in
*" floor-wrap "*) $MPICC -std=c11 -O2 -Wall -Wextra -shared -fPIC -o "$BIN/floor_wrap.so" "$SRC/floor_wrap.c" ;;
esac

# The launcher flags: Open MPI refuses root without --allow-run-as-root, and
# --oversubscribe lets 2 ranks start on a 2-core machine whatever it counts
# as slots.  Nothing else is changed from each MPI's defaults.

now_ns() { date +%s%N; }

# field KEY < line — the value of KEY=value in a program's output line.
field() { tr ' \t' '\n\n' | sed -n "s/^$1=//p" | head -n 1; }

record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$RAW"; }

# want_meta KEY VALUE — stop unless the run just made (in $wpdir, output in
# $log) wrote KEY=VALUE in rank.0.meta: a configuration that fell back to
# something else measures nothing.
want_meta() {
    got=$(sed -n "s/^$1=//p" "$wpdir/rank.0.meta" 2>/dev/null)
    [ "$got" = "$2" ] || { echo "bench/run.sh: $b ($c) ran with $1 '$got'" >&2; cat "$log" >&2; exit 1; }
}

# run ROUND BENCH CONFIG NP PROGRAM ARGS... — one run; its output is kept in
# $RES/BENCH.CONFIG.ROUND.out, the waitprof output in ...wp/.
run() {
    r=$1 b=$2 c=$3 np=$4 rc=0; shift 4
    log="$RES/$b.$c.$r.out"
    wpdir="$RES/$b.$c.$r.wp"
    load=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(now_ns)
    case $c in
    none) bench_mpirun "$np" "$@" >"$log" 2>&1 || rc=$? ;;
    hz*)
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=${c#hz} WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
            bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$? ;;
    src-*)
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=100 WAITPROF_SOURCE=${c#src-} WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
            bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$?
        want_meta source "${c#src-}" ;;
    free-*)
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=${c#free-} WAITPROF_TIMER=free WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
            bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$?
        want_meta timer free ;;
    floor-*)
        # Preloaded by env(1) in each rank, not into the launcher.
        bench_mpirun "$np" env LD_PRELOAD="$BIN/floor_${c#floor-}.so" "$@" >"$log" 2>&1 || rc=$? ;;
    match0-*)
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=${c#match0-} WAITPROF_MATCH=0 WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
            bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$?
        [ -z "$(sed -n 's/^match_rate=//p' "$wpdir/rank.0.meta" 2>/dev/null)" ] ||
            { echo "bench/run.sh: $b ($c) ran with matching on" >&2; exit 1; } ;;
    ctr-* | split-*)
        split=0
        case $c in split-*) split=1 ;; esac
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=${c#*-} WAITPROF_COUNTERS=task-clock,context-switches \
            WAITPROF_COUNTERS_SPLIT=$split WAITPROF_OUT=$wpdir WAITPROF_QUIET=1 \
            bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$?
        want_meta counters task-clock:ns:perf_event,context-switches:events:perf_event
        [ $split = 0 ] || [ -n "$(sed -n 's/^counters_split=//p' "$wpdir/rank.0.meta")" ] ||
            { echo "bench/run.sh: $b ($c) ran without the split" >&2; exit 1; } ;;
    lean-*)
        WAITPROF_LIB=$WP_LIB WAITPROF_HZ=100 WAITPROF_LEAN=1 WAITPROF_SOURCE=${c#lean-} WAITPROF_OUT=$wpdir \
            WAITPROF_QUIET=1 bench_mpirun "$np" "$WP_LAUNCHER" "$@" >"$log" 2>&1 || rc=$?
        want_meta source "${c#lean-}"
        want_meta wrappers lean ;;
    esac
    t1=$(now_ns)
    if [ "$rc" != 0 ]; then
        echo "bench/run.sh: $b ($c, round $r) failed with status $rc; output in $log:" >&2
        cat "$log" >&2
        exit 1
    fi
    record "$r" "$b" "$c" load1 "$load"
    record "$r" "$b" "$c" wall_s "$(echo "$t0 $t1" | awk '{printf "%.4f", ($2 - $1) / 1e9}')"
    case $c in
    hz* | src-* | lean-* | free-* | match0-* | ctr-* | split-*)
        # A profiled run that wrote no meta file was not profiled: stop
        # rather than report the program's own speed as waitprof's.
        [ -r "$wpdir/rank.0.meta" ] || { echo "bench/run.sh: $b ($c) wrote no $wpdir/rank.0.meta; was libwaitprof preloaded?" >&2; cat "$log" >&2; exit 1; }
        # Handler cost over all ranks: total ns / calls is the mean; the
        # per-rank histogram medians are combined by taking the largest; the
        # share is handler time over the ranks' profiled time (duration_ns,
        # MPI_Init to MPI_Finalize; one sampled thread per rank here).
        cat "$wpdir"/rank.*.meta | awk -F= -v r="$r" -v b="$b" -v c="$c" '
            $1 == "handler_ns_total" { ns += $2 }
            $1 == "handler_calls" { calls += $2 }
            $1 == "samples" { samples += $2 }
            $1 == "duration_ns" { dur += $2 }
            $1 == "handler_ns_median" && $2 > med { med = $2 }
            $1 == "match_records" { mrec += $2; mranks++ }
            $1 == "match_held" && $2 > mheld { mheld = $2 }
            $1 == "match_finalize_ns" && $2 > mfin { mfin = $2 }
            $1 == "match_rate" && $2 > mrate { mrate = $2 }
            END {
                printf "%s\t%s\t%s\tsamples\t%d\n", r, b, c, samples
                printf "%s\t%s\t%s\thandler_calls\t%d\n", r, b, c, calls
                if (calls > 0) printf "%s\t%s\t%s\thandler_mean_ns\t%.0f\n", r, b, c, ns / calls
                if (calls > 0) printf "%s\t%s\t%s\thandler_median_ns\t%d\n", r, b, c, med
                if (dur > 0) printf "%s\t%s\t%s\thandler_share_pct\t%.4f\n", r, b, c, 100 * ns / dur
                # Matched instances: records per second per rank (all
                # ranks records over all ranks profiled time), the most
                # point-to-point records a rank held at MPI_Finalize, the
                # longest finalize matching and the rate at the end.
                if (mranks > 0 && dur > 0) {
                    printf "%s\t%s\t%s\tmatch_rec_per_s\t%.1f\n", r, b, c, mrec / (dur / 1e9)
                    printf "%s\t%s\t%s\tmatch_records\t%d\n", r, b, c, mrec / mranks
                    printf "%s\t%s\t%s\tmatch_held\t%d\n", r, b, c, mheld
                    printf "%s\t%s\t%s\tmatch_finalize_ms\t%.3f\n", r, b, c, mfin / 1e6
                    printf "%s\t%s\t%s\tmatch_rate\t%d\n", r, b, c, mrate
                }
            }' >>"$RAW"
        # The profile is not needed for the figures; keep the meta files only.
        find "$wpdir" -type f ! -name '*.meta' -delete ;;
    esac
    pat=$b
    [ "$b" = inrun ] && pat=workload_blocks
    line=$(grep "^$pat " "$log" | head -n 1) || true
    [ -n "$line" ] || { echo "bench/run.sh: $b ($c) printed no result; output in $log" >&2; cat "$log" >&2; exit 1; }
    case $b in
    wrapper_cost)
        for k in ns_per_call pmpi_ns_per_call added_ns; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done
        for k in clock_gettime_ns rdtsc_ns; do
            record "$r" "$b" "$c" $k "$(grep '^wrapper_cost clock' "$log" | field $k)"
        done ;;
    pingpong)
        for k in lat_us lat_pmpi_us lat_ratio lat_added_ns bw_MBps bw_pmpi_MBps bw_ratio; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done ;;
    workload)
        record "$r" "$b" "$c" seconds "$(echo "$line" | field seconds)"
        record "$r" "$b" "$c" residual "$(echo "$line" | field residual)" ;;
    coll_cost)
        for k in barrier_us barrier_pmpi_us barrier_ratio barrier_added_ns allreduce_us allreduce_pmpi_us \
            allreduce_ratio allreduce_added_ns; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done ;;
    randomaccess)
        for k in ns_per_update pmpi_ns_per_update ratio added_ns_per_iter; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done ;;
    fpoll_cost)
        for k in testany_ns testany_pmpi_ns testany_added_ns; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done ;;
    poll_cost)
        for l in test testany iprobe isendrecv; do
            for k in ${l}_ns ${l}_pmpi_ns ${l}_added_ns; do
                record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
            done
        done ;;
    inrun)
        for k in pairs ratio_median ratio_sum median_se; do
            record "$r" "$b" "$c" $k "$(echo "$line" | field $k)"
        done ;;
    esac
}

# order ROUND — the configurations, rotated left by ROUND - 1.
order() {
    rot=$(( ($1 - 1) % $(echo $CONFIGS | wc -w) ))
    echo $CONFIGS | awk -v k="$rot" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k) % NF + 1) }'
}

{
    echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); uptime:$(uptime)"
    echo "mpi: $MPI_FLAVOR ($MPIEXEC); library: $WP_LIB"
    # Which waitprof was measured: the checkout's commit, and whether files
    # outside bench/ and doc/ differed from it (the build may include them).
    if command -v git >/dev/null 2>&1 && git -C "$WP_SRCDIR" rev-parse HEAD >/dev/null 2>&1; then
        dirty=$(git -C "$WP_SRCDIR" status --porcelain -- . ':!bench' ':!doc' 2>/dev/null | wc -l)
        echo "source: $(git -C "$WP_SRCDIR" rev-parse --short HEAD), $dirty files changed or untracked outside bench/ and doc/"
    fi
    # The checkout may have moved on since the library was built: list the
    # library sources newer than it (they are not in what is measured).
    stale=$(find "$WP_SRCDIR" \( -name .git -o -name build -o -name bench -o -name tests \) -prune -o \
        -newer "$WP_LIB" \( -name '*.c' -o -name '*.h' -o -name '*.tbl' -o -name '*.py' \) -print 2>/dev/null |
        sed "s|^$WP_SRCDIR/||" | tr '\n' ' ')
    echo "library built: $(date -u -r "$WP_LIB" '+%Y-%m-%d %H:%M:%S UTC'); sources changed since: ${stale:-none}"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores; kernel $(uname -r)"
} | tee "$RES/env.txt" >&2

r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "round $r/$ROUNDS: $(order $r)(load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    for b in $ONLY; do
        for c in $(order "$r"); do
            case $c in floor-*) [ "$b" = pingpong ] || continue ;; esac
            case $b in
            wrapper_cost) run "$r" $b "$c" 1 "$BIN/wrapper_cost" "$CALLS" 9 ;;
            pingpong) run "$r" $b "$c" 2 "$BIN/pingpong" "$TRIPS" "$PP_REPEATS" ;;
            workload) run "$r" $b "$c" 2 "$BIN/workload" "$ITERS" ;;
            coll_cost) run "$r" $b "$c" 2 "$BIN/coll_cost" "$COLL_CALLS" "$COLL_REPEATS" ;;
            poll_cost) run "$r" $b "$c" 1 "$BIN/poll_cost" "$POLL_CALLS" 9 "$POLL_COMM" "$POLL_REQUESTS" ;;
            fpoll_cost) run "$r" $b "$c" 1 "$BIN/fpoll_cost" "$POLL_CALLS" 9 "$POLL_COMM" "$POLL_REQUESTS" ;;
            randomaccess) run "$r" $b "$c" 2 "$BIN/randomaccess" "$RA_ITERS" "$RA_REPEATS" ;;
            inrun) run "$r" $b "$c" 2 "$BIN/workload" "$INRUN_ITERS" 1024 256 "$INRUN_BLOCK" direct ;;
            *) echo "bench/run.sh: unknown benchmark $b in BENCH_ONLY" >&2; exit 2 ;;
            esac
        done
    done
    r=$((r + 1))
done

# Instructions per MPI_Iprobe under callgrind: one singleton run each, without
# waitprof and with it preloaded (1 Hz: at most a few handler runs during the
# counted loop).  Only wc_loop and its callees are counted (see
# wrapper_cost.c).  These are instructions, not time: an rdtsc is one, and
# valgrind hides the vDSO, so a clock_gettime is a system call of a few.
IR_NONE='' IR_WP='' IR_HANDLER='' IR_SEND='' IR_RECV=''
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
    for c in none hz1; do
        cg="$RES/callgrind.$c"
        pre=
        [ $c = hz1 ] && pre=$WP_LIB
        env ${pre:+LD_PRELOAD=$pre} WAITPROF_HZ=1 WAITPROF_QUIET=1 WAITPROF_OUT="$RES/callgrind.$c.wp" \
            valgrind --tool=callgrind --callgrind-out-file="$cg.out" --collect-atstart=no \
            --toggle-collect=wc_loop "$BIN/wrapper_cost" 100000 1 >"$cg.log" 2>&1 || {
            echo "bench/run.sh: callgrind run ($c) failed; see $cg.log" >&2; exit 1; }
        ir=$(sed -n 's/^summary: //p' "$cg.out" | head -n 1)
        calls=$(grep '^wrapper_cost ns' "$cg.log" | field total_calls)
        ipc=$(echo "$ir $calls" | awk '{printf "%.1f", $1 / $2}')
        record 0 callgrind "$c" instr_per_call "$ipc"
        [ $c = none ] && IR_NONE=$ipc || IR_WP=$ipc
    done
    # Instructions per SIGPROF handler run: a short singleton workload at
    # 1000 Hz, everything counted; the inclusive cost of wp_on_sigprof
    # (callgrind_annotate lists its inlined parts under their own file names,
    # hence the sum) over the handler_calls in the meta file.
    cg="$RES/callgrind.handler"
    env LD_PRELOAD="$WP_LIB" WAITPROF_HZ=1000 WAITPROF_QUIET=1 WAITPROF_OUT="$cg.wp" \
        valgrind --tool=callgrind --callgrind-out-file="$cg.out" "$BIN/workload" 300 >"$cg.log" 2>&1 || {
        echo "bench/run.sh: callgrind handler run failed; see $cg.log" >&2; exit 1; }
    hir=$(callgrind_annotate --inclusive=yes --threshold=100 "$cg.out" 2>/dev/null |
        awk 'NF >= 2 && ($NF ~ /:wp_on_sigprof$/ || $(NF - 1) ~ /:wp_on_sigprof$/) { gsub(",", "", $1); s += $1 } END { print s + 0 }')
    hcalls=$(sed -n 's/^handler_calls=//p' "$cg.wp/rank.0.meta")
    if [ "${hcalls:-0}" -gt 0 ] && [ "$hir" -gt 0 ]; then
        IR_HANDLER=$(echo "$hir $hcalls" | awk '{printf "%.0f", $1 / $2}')
        record 0 callgrind hz1000 instr_per_handler "$IR_HANDLER"
    fi
    # Instructions a wrapper adds to MPI_Send and MPI_Recv: a short ping-pong
    # with both ranks under callgrind (through the launcher, so the preload
    # reaches the program inside valgrind).  For each, the exported
    # wrapper's inclusive cost minus that of the PMPI calls its full and
    # fast forms (wp_full_MPI_*, wp_fast_MPI_*) make, per call, from the
    # call tree of one rank.  Time
    # spent polling inside PMPI_Recv varies from run to run, but it is on
    # both sides of the subtraction.
    cg="$RES/callgrind.pingpong"
    WAITPROF_LIB=$WP_LIB WAITPROF_HZ=1 WAITPROF_QUIET=1 WAITPROF_OUT="$cg.wp" \
        bench_mpirun 2 "$WP_LAUNCHER" valgrind --tool=callgrind --callgrind-out-file="$cg.%p.out" \
        "$BIN/pingpong" 2000 3 1 1 >"$cg.log" 2>&1 || {
        echo "bench/run.sh: callgrind ping-pong run failed; see $cg.log" >&2; exit 1; }
    for cgf in "$cg".*.out; do break; done
    for f in MPI_Send MPI_Recv; do
        v=$(callgrind_annotate --inclusive=yes --tree=calling --threshold=100 "$cgf" 2>/dev/null |
            awk -v f="$f" '
                $0 ~ "\\* +\\?\\?\\?:" f " \\[" { gsub(",", "", $1); incl = $1; inside = 1; next }
                $0 ~ "\\* +\\?\\?\\?:wp_(full|fast)_" f " \\[" { inside = 2; next }
                inside && NF == 0 { inside = 0 }
                inside == 2 && $0 ~ ":P" f " \\(" { gsub(",", "", $1); sub_ += $1; k = $0; sub(/.*\(/, "", k); sub(/x\).*/, "", k); gsub(",", "", k); n += k }
                END { if (n > 0) printf "%.0f", (incl - sub_) / n }')
        [ -n "$v" ] && record 0 callgrind hz1 "added_instr_$f" "$v"
        case $f in MPI_Send) IR_SEND=$v ;; MPI_Recv) IR_RECV=$v ;; esac
    done
fi

# Open MPI's PERUSE alone, inside one run (peruse_cost.c: empty callbacks on
# the five events waitprof follows, on MPI_COMM_WORLD and on a duplicate
# without them in alternate repeats), on a PERUSE-enabled build when the
# ping-pong ran: the floor under the PERUSE source's cost.  Three runs, the
# median of each reported.
PCOST=''
case " $ONLY " in
*" pingpong "*)
    if [ "${WP_HAVE_PERUSE:-0}" = 1 ] && $MPICC -std=c11 -O2 -Wall -Wextra -o "$BIN/peruse_cost" "$SRC/peruse_cost.c" >"$RES/peruse_cost.log" 2>&1; then
        for k in 1 2 3; do
            bench_mpirun 2 "$BIN/peruse_cost" "$TRIPS" "$PP_REPEATS" >>"$RES/peruse_cost.out" 2>>"$RES/peruse_cost.log" ||
                { echo "bench/run.sh: peruse_cost failed; see $RES/peruse_cost.log" >&2; exit 1; }
        done
        PCOST=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                       printf "%s%+.1f ns per one-way trip (%s µs with the events, %s µs without)", (NR > 1 ? "; " : ""), f["added_ns"], f["lat_on_us"], f["lat_off_us"] }' "$RES/peruse_cost.out")
    fi ;;
esac

# The same short piece of code every 0.1, 1 and 10 ms, without MPI or
# waitprof (see cold_cache.c): how much of the handler's time per sample is
# this machine's cold caches rather than the handler's own work.
COLD=''
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && ${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$BIN/cold_cache" "$SRC/cold_cache.c" -lunwind >"$RES/cold_cache.log" 2>&1; then
    "$BIN/cold_cache" 300 >"$RES/cold_cache.out" 2>>"$RES/cold_cache.log" &&
        COLD=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                      printf "%s%s ms: %s ns", (NR > 1 ? "; " : ""), f["period_us"] / 1000, f["median_ns"] }' "$RES/cold_cache.out")
fi

# What one timer signal costs a computing thread, with an empty handler (see
# signal_cost.c): the part of a sample's cost that the handler's own clock
# (handler_ns_total) cannot see.
SIGCOST=''
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && ${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$BIN/signal_cost" "$SRC/signal_cost.c" >"$RES/signal_cost.log" 2>&1; then
    "$BIN/signal_cost" 9 >"$RES/signal_cost.out" 2>>"$RES/signal_cost.log" &&
        SIGCOST=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                         if (f["hz"] > 0) printf "%s%s Hz %s: %s µs (%s signals, %s interrupts)", (n++ ? "; " : ""), f["hz"], f["timer"], f["us_per_signal"], f["signals"], f["interrupts"] }' "$RES/signal_cost.out")
fi

echo "end: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); uptime:$(uptime)" | tee -a "$RES/env.txt" >&2

# The size of a point-to-point record, as the library was built
# (bench/match_sim prints sizeof(struct wp_mrec)).
RECBYTES=$("$BUILD/bench/match_sim" 2 1 2>/dev/null | field rec_bytes) || true
RECBYTES=${RECBYTES:-96}

# --- tables -------------------------------------------------------------------

# values BENCH CONFIG METRIC — one value per round.
values() { awk -F'\t' -v b="$1" -v c="$2" -v m="$3" 'NR > 1 && $2 == b && $3 == c && $4 == m { print $5 }' "$RAW"; }


# pratio BENCH CONFIG METRIC — median over rounds of CONFIG / none of the same round.
pratio() {
    awk -F'\t' -v b="$1" -v c="$2" -v m="$3" '
        NR > 1 && $2 == b && $4 == m && $3 == "none" { base[$1] = $5 }
        NR > 1 && $2 == b && $4 == m && $3 == c { val[$1] = $5 }
        END { for (r in val) if ((r in base) && base[r] > 0) print val[r] / base[r] }' "$RAW" | bench_median
}

# pdiff BENCH CONFIG METRIC — median over rounds of CONFIG - none of the same round.
pdiff() {
    awk -F'\t' -v b="$1" -v c="$2" -v m="$3" '
        NR > 1 && $2 == b && $4 == m && $3 == "none" { base[$1] = $5 }
        NR > 1 && $2 == b && $4 == m && $3 == c { val[$1] = $5 }
        END { for (r in val) if (r in base) print val[r] - base[r] }' "$RAW" | bench_median
}

fmt() { awk -v f="$1" -v x="$2" 'BEGIN { if (x == "-") print "-"; else printf f, x }'; }
# split_med CONFIG KIND FIELD — median of FIELD (3 latency, 4 in-run ratio,
# 5 in-run added ns) over the ping-pong runs of CONFIG in placement KIND
# (fast or slow), from $RES/split.tmp.
split_med() { awk -v c="$1" -v k="$2" -v f="$3" '$1 == c && $2 == k { print $f }' "$RES/split.tmp" | bench_median; }
med() { values "$1" "$2" "$3" | bench_median; }

{
    echo "### $MPI_FLAVOR — $ROUNDS rounds, medians over rounds"
    echo
    echo "Load (1-min average, includes the benchmark's own 1-2 ranks) during the runs: $(awk -F'\t' 'NR > 1 && $4 == "load1" { print $5 }' "$RAW" | sort -g | awk '{ v[NR] = $1 } END { printf "min %s, median %s, max %s", v[1], v[int((NR + 1) / 2)], v[NR] }')."
    echo
    echo "Per MPI call (MPI_Iprobe, $CALLS calls x 9 repeats, 1 rank); 'vs none' is the median over rounds of this run minus the 'none' run of the same round, 'in-run' the median of MPI_Iprobe minus PMPI_Iprobe timed alternately in the same process:"
    echo
    echo "| configuration | MPI_Iprobe ns/call | added vs none, ns | PMPI_Iprobe ns/call (same run) | added in-run, ns |"
    echo "|---|---|---|---|---|"
    for c in $CONFIGS; do
        add=-
        [ "$c" = none ] || add=$(fmt '%+.1f' "$(pdiff wrapper_cost "$c" ns_per_call)")
        printf '| %s | %s | %s | %s | %s |\n' "$c" "$(fmt '%.1f' "$(med wrapper_cost "$c" ns_per_call)")" "$add" \
            "$(fmt '%.1f' "$(med wrapper_cost "$c" pmpi_ns_per_call)")" "$(fmt '%+.1f' "$(med wrapper_cost "$c" added_ns)")"
    done
    echo
    echo "A clock read alone, same loop (median of the 'none' runs): clock_gettime(CLOCK_MONOTONIC) $(fmt '%.1f' "$(med wrapper_cost none clock_gettime_ns)") ns, rdtsc $(fmt '%.1f' "$(med wrapper_cost none rdtsc_ns)") ns."
    if [ -n "$IR_NONE" ]; then
        echo "Instructions per MPI_Iprobe (callgrind, singleton): $IR_NONE without waitprof, $IR_WP with it (+$(echo "$IR_WP $IR_NONE" | awk '{printf "%.1f", $1 - $2}')); instructions, not time: an rdtsc counts as one, and valgrind hides the vDSO, so a clock_gettime counts as a system call of a few."
    fi
    echo
    echo "Ping-pong, 2 ranks ($TRIPS round trips x $PP_REPEATS repeats; 1 MiB: 50 round trips x 15); 'vs none' is the median over rounds of the per-round ratio to the 'none' run, 'in-run' the median over repeats of MPI_Send/Recv over PMPI_Send/Recv timed alternately in the same process, the PMPI half on a duplicate of MPI_COMM_WORLD that waitprof never saw (so it pays neither wrappers nor a stall source's hooks):"
    echo
    echo "| configuration | 8 B one-way latency µs | ratio vs none | PMPI latency µs (same run) | ratio in-run | added in-run, ns | 1 MiB bandwidth MB/s | ratio vs none | ratio in-run |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for c in $CONFIGS; do
        lr=- br=-
        if [ "$c" != none ]; then
            lr=$(fmt '%.3f' "$(pratio pingpong "$c" lat_us)")
            br=$(fmt '%.3f' "$(pratio pingpong "$c" bw_MBps)")
        fi
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$c" \
            "$(fmt '%.3f' "$(med pingpong "$c" lat_us)")" "$lr" \
            "$(fmt '%.3f' "$(med pingpong "$c" lat_pmpi_us)")" "$(fmt '%.3f' "$(med pingpong "$c" lat_ratio)")" \
            "$(fmt '%+.1f' "$(med pingpong "$c" lat_added_ns)")" \
            "$(fmt '%.0f' "$(med pingpong "$c" bw_MBps)")" "$br" "$(fmt '%.3f' "$(med pingpong "$c" bw_ratio)")"
    done
    echo
    echo "The same ping-pongs split by where the two vCPUs ran: the 8 B latency of this machine is bimodal between runs (about 0.2 and about 0.5 µs), which decides a run's latency more than any configuration does. A run counts as 'fast' when its PMPI latency is below $SPLIT µs (BENCH_PP_SPLIT_US). Medians over the runs of each kind; 'vs none' is that median over the 'none' median of the same kind, 'in-run' the median of the runs' in-run ratios and added ns:"
    echo
    echo "| configuration | fast runs | 8 B latency µs, fast | vs none, fast | in-run, fast | slow runs | 8 B latency µs, slow | vs none, slow | in-run, slow |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for c in $CONFIGS; do
        awk -F'\t' -v c="$c" -v cut="$SPLIT" '
            NR > 1 && $2 == "pingpong" && $4 == "lat_pmpi_us" { pm[$3 "," $1] = $5 }
            NR > 1 && $2 == "pingpong" && $4 == "lat_us" { lat[$3 "," $1] = $5 }
            NR > 1 && $2 == "pingpong" && $4 == "lat_ratio" { ir[$3 "," $1] = $5 }
            NR > 1 && $2 == "pingpong" && $4 == "lat_added_ns" { ia[$3 "," $1] = $5 }
            END { for (k in lat) if (k in pm) { split(k, a, ","); print a[1], (pm[k] < cut ? "fast" : "slow"), lat[k], ir[k], ia[k] } }' "$RAW" >"$RES/split.tmp"
        row="| $c"
        for kind in fast slow; do
            n=$(awk -v c="$c" -v k="$kind" '$1 == c && $2 == k' "$RES/split.tmp" | wc -l)
            m=$(split_med "$c" "$kind" 3)
            b=$(split_med none "$kind" 3)
            r=$(awk -v m="$m" -v b="$b" 'BEGIN { if (m == "-" || b == "-" || b == 0) print "-"; else printf "%.3f", m / b }')
            [ "$c" = none ] && r=-
            i=$(split_med "$c" "$kind" 4)
            a=$(split_med "$c" "$kind" 5)
            ir=-
            [ "$i" != - ] && ir="$(fmt '%.3f' "$i"), $(fmt '%+.1f' "$a") ns"
            row="$row | $n | $(fmt '%.3f' "$m") | $r | $ir"
        done
        echo "$row |"
    done
    rm -f "$RES/split.tmp"
    if [ -n "$PCOST" ]; then
        echo
        echo "Open MPI's PERUSE alone (bench/peruse_cost.c, no waitprof: the five events with empty callbacks, on MPI_COMM_WORLD minus on a duplicate without them, in alternate repeats of the same run; three runs): $PCOST."
    fi
    if [ -n "$IR_SEND$IR_RECV" ]; then
        echo
        echo "Instructions the wrapper adds per call (callgrind, 2 ranks, wrapper inclusive minus its PMPI call): MPI_Send ${IR_SEND:--}, MPI_Recv ${IR_RECV:--}."
    fi
    echo
    echo "Workload, 2 ranks ($ITERS Jacobi sweeps + halo exchange + allreduce); seconds inside the program (after MPI_Init to before MPI_Finalize, slowest rank) and wall seconds of the whole mpiexec; ratios are medians of per-round ratios to 'none':"
    echo
    echo "| configuration | workload s | ratio vs none | wall s (mpiexec) | ratio vs none |"
    echo "|---|---|---|---|---|"
    for c in $CONFIGS; do
        wr=- er=-
        if [ "$c" != none ]; then
            wr=$(fmt '%.4f' "$(pratio workload "$c" seconds)")
            er=$(fmt '%.4f' "$(pratio workload "$c" wall_s)")
        fi
        printf '| %s | %s | %s | %s | %s |\n' "$c" "$(fmt '%.3f' "$(med workload "$c" seconds)")" "$wr" \
            "$(fmt '%.3f' "$(med workload "$c" wall_s)")" "$er"
    done
    case " $ONLY " in
    *" inrun "*)
        echo
        echo "In-run dilation, 2 ranks ($INRUN_ITERS sweeps of the workload in blocks of $INRUN_BLOCK; blocks with the MPI calls through waitprof and sampling on alternate with blocks that call the PMPI names with sampling paused, in pairs on-off, off-on). Per run: the median over pairs of on/off, its standard error from the quartiles, and the sum of on over the sum of off. Medians over rounds, then each round's median ratio:"
        echo
        echo "| configuration | pairs per run | on/off, median over pairs | its standard error | sum on / sum off | per round (median over pairs) |"
        echo "|---|---|---|---|---|---|"
        for c in $CONFIGS; do
            printf '| %s | %s | %s | %s | %s | %s |\n' "$c" "$(fmt '%.0f' "$(med inrun "$c" pairs)")" \
                "$(fmt '%.4f' "$(med inrun "$c" ratio_median)")" "$(fmt '%.4f' "$(med inrun "$c" median_se)")" \
                "$(fmt '%.4f' "$(med inrun "$c" ratio_sum)")" "$(values inrun "$c" ratio_median | tr '\n' ' ' | sed 's/ $//')"
        done ;;
    esac
    case " $ONLY " in
    *" coll_cost "*)
        echo
        echo "Collective calls, 2 ranks ($COLL_CALLS calls x $COLL_REPEATS repeats of each, the slowest rank's time per call); 'in-run' is the median over repeats of MPI_ over PMPI_ (on a duplicate of MPI_COMM_WORLD that waitprof never saw) timed alternately in the same process, and of MPI_ - PMPI_ per call; medians over rounds, then each round's added ns:"
        echo
        echo "| configuration | MPI_Barrier µs | PMPI µs | in-run ratio | added ns | per round | 8 B MPI_Allreduce µs | PMPI µs | in-run ratio | added ns | per round |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|"
        for c in $CONFIGS; do
            row="| $c"
            for k in barrier allreduce; do
                row="$row | $(fmt '%.3f' "$(med coll_cost "$c" ${k}_us)") | $(fmt '%.3f' "$(med coll_cost "$c" ${k}_pmpi_us)")"
                row="$row | $(fmt '%.3f' "$(med coll_cost "$c" ${k}_ratio)") | $(fmt '%+.1f' "$(med coll_cost "$c" ${k}_added_ns)")"
                row="$row | $(values coll_cost "$c" ${k}_added_ns | awk '{ printf "%s%+.0f", (NR > 1 ? " " : ""), $1 }')"
            done
            echo "$row |"
        done ;;
    esac
    case " $ONLY " in
    *" randomaccess "*)
        echo
        echo "RandomAccess-like kernel, 2 ranks ($RA_ITERS iterations x $RA_REPEATS repeats; each iteration 64 updates per rank, one MPI_Irecv and one MPI_Isend per peer and an MPI_Waitall); 'in-run' is the median over repeats of MPI_ over PMPI_ (on a duplicate of MPI_COMM_WORLD that waitprof never saw) timed alternately in the same process, and of MPI_ - PMPI_ per iteration; medians over rounds, then each round's added ns:"
        echo
        echo "| configuration | ns per update | PMPI ns per update | in-run ratio | added ns per iteration | per round |"
        echo "|---|---|---|---|---|---|"
        for c in $CONFIGS; do
            printf '| %s | %s | %s | %s | %s | %s |\n' "$c" "$(fmt '%.2f' "$(med randomaccess "$c" ns_per_update)")" \
                "$(fmt '%.2f' "$(med randomaccess "$c" pmpi_ns_per_update)")" "$(fmt '%.4f' "$(med randomaccess "$c" ratio)")" \
                "$(fmt '%+.1f' "$(med randomaccess "$c" added_ns_per_iter)")" \
                "$(values randomaccess "$c" added_ns_per_iter | awk '{ printf "%s%+.0f", (NR > 1 ? " " : ""), $1 }')"
        done ;;
    esac
    case " $ONLY " in
    *" poll_cost "*)
        echo
        echo "Polls and nonblocking calls, 1 rank ($POLL_CALLS calls x 9 repeats per loop, on MPI_COMM_$(echo "$POLL_COMM" | tr a-z A-Z)): ns per call through MPI_ and through PMPI_ in the same process, timed alternately, and the median over repeats of MPI_ - PMPI_; medians over rounds (range over rounds of the added ns). isendrecv is one MPI_Irecv, one MPI_Isend and one MPI_Waitall of 8 bytes to itself:"
        echo
        echo "| configuration | MPI_Test ns | added | MPI_Testany ($POLL_REQUESTS) ns | added | MPI_Iprobe ns | added | isendrecv ns | added |"
        echo "|---|---|---|---|---|---|---|---|---|"
        for c in $CONFIGS; do
            row="| $c"
            for k in test testany iprobe isendrecv; do
                rng=$(values poll_cost "$c" ${k}_added_ns | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%+.1f to %+.1f", v[1], v[NR] }')
                row="$row | $(fmt '%.1f' "$(med poll_cost "$c" ${k}_ns)") | $(fmt '%+.1f' "$(med poll_cost "$c" ${k}_added_ns)") ($rng)"
            done
            echo "$row |"
        done ;;
    esac
    case " $ONLY " in
    *" fpoll_cost "*)
        echo
        echo "MPI_TESTANY from Fortran, 1 rank ($POLL_CALLS calls x 9 repeats, $POLL_REQUESTS requests, on MPI_COMM_$(echo "$POLL_COMM" | tr a-z A-Z)): ns per call through MPI_TESTANY and PMPI_TESTANY in the same process, timed alternately, and the median over repeats of MPI - PMPI; medians over rounds (range over rounds of the added ns):"
        echo
        echo "| configuration | MPI_TESTANY ns | PMPI_TESTANY ns | added |"
        echo "|---|---|---|---|"
        for c in $CONFIGS; do
            rng=$(values fpoll_cost "$c" testany_added_ns | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%+.1f to %+.1f", v[1], v[NR] }')
            echo "| $c | $(fmt '%.1f' "$(med fpoll_cost "$c" testany_ns)") | $(fmt '%.1f' "$(med fpoll_cost "$c" testany_pmpi_ns)") | $(fmt '%+.1f' "$(med fpoll_cost "$c" testany_added_ns)") ($rng) |"
        done ;;
    esac
    # Matched instances, from the meta files of the configurations that
    # match (all profiled ones but match0-*).
    if awk -F'\t' 'NR > 1 && $4 == "match_records" { f = 1 } END { exit !f }' "$RAW"; then
        echo
        echo "Matched instances (WAITPROF_MATCH default unless the configuration says otherwise), from rank.R.meta: records per second per rank (point-to-point and collective records over the ranks' profiled time, match_records / duration_ns), records per rank, the most point-to-point records a rank held at MPI_Finalize (match_held) and their bytes at $RECBYTES B per record, the longest matching at MPI_Finalize over the ranks (match_finalize_ns), the rate at the end (match_rate: one in N); medians over rounds:"
        echo
        echo "| benchmark | configuration | records/s per rank | records per rank | held at MPI_Finalize | bytes held | finalize matching ms | rate at the end |"
        echo "|---|---|---|---|---|---|---|---|"
        for b in $ONLY; do
            for c in $CONFIGS; do
                h=$(med $b "$c" match_held)
                [ "$h" = - ] && continue
                printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$b" "$c" "$(fmt '%.0f' "$(med $b "$c" match_rec_per_s)")" \
                    "$(fmt '%.0f' "$(med $b "$c" match_records)")" "$(fmt '%.0f' "$h")" \
                    "$(awk -v h="$h" -v s="$RECBYTES" 'BEGIN { printf "%.0f", h * s }')" \
                    "$(fmt '%.2f' "$(med $b "$c" match_finalize_ms)")" "$(fmt '%.0f' "$(med $b "$c" match_rate)")"
            done
        done
    fi
    echo
    echo "Handler cost per sample, from rank.R.meta (mean = handler_ns_total / handler_calls over all ranks; median = the larger rank's handler_ns_median, the middle of an eighth-octave bin, within about 6 % (quarter-octave, 12 %, for libraries from 28fa86c to 9b4edf9)), medians over the rounds that had samples:"
    echo
    echo "| benchmark | configuration | samples per run | handler calls per run | handler mean ns | handler median ns | handler time / run time |"
    echo "|---|---|---|---|---|---|---|"
    for b in $ONLY; do
        for c in $CONFIGS; do
            [ "$c" = none ] && continue
            printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$b" "$c" \
                "$(fmt '%.0f' "$(med $b "$c" samples)")" "$(fmt '%.0f' "$(med $b "$c" handler_calls)")" \
                "$(fmt '%.0f' "$(med $b "$c" handler_mean_ns)")" "$(fmt '%.0f' "$(med $b "$c" handler_median_ns)")" \
                "$(fmt '%.3f%%' "$(med $b "$c" handler_share_pct)")"
        done
    done
    if [ -n "$IR_HANDLER" ]; then
        echo
        echo "Instructions per SIGPROF handler run (callgrind, singleton workload at 1000 Hz): $IR_HANDLER."
    fi
    if [ -n "$COLD" ]; then
        echo
        echo "The same short piece of code (bench/cold_cache.c: unw_backtrace of 13 frames + 64 scattered reads) run once per period from a spinning thread, no MPI, no waitprof, median time per run: $COLD."
    fi
    if [ -n "$SIGCOST" ]; then
        echo
        echo "Cost of one timer signal to a computing thread, empty handler, no MPI, no waitprof (bench/signal_cost.c; time with the timer minus time without, per signal; median of 9; free: a free-running timer, tick: every expiration on the kernel tick, halftick: half a tick off it; interrupts: the CPU's local timer interrupts during the work): $SIGCOST."
    fi
    echo
    echo "Workload residuals (must be one value): $(awk -F'\t' 'NR > 1 && $4 == "residual" { print $5 }' "$RAW" | sort -u | tr '\n' ' ')"
} | tee "$RES/table.md"
echo "raw results: $RAW" >&2
