#!/bin/sh
# bench/record_cost.sh — what the estimator's per-call statistics add to a
# recorded MPI call, in one invocation:
#
#   bench/record_cost.sh BUILD_DIR [rounds]       (rounds: default 7)
#
# bench/record_cost.c (a zero-byte MPI_Sendrecv with MPI_PROC_NULL partners,
# recorded by its wrapper, paired with PMPI_Sendrecv in the same process) is
# run as a singleton in three configurations per round, in an order rotated
# each round:
#   none   without waitprof
#   off    under waitprof with WAITPROF_ESTIMATE=0: the core wrappers only
#   on     under waitprof (the default): wrappers and statistics
# all at WAITPROF_HZ=1, so sampling does not count.  Each run reports
# added_ns = median over repeats of (MPI - PMPI) ns per call; the
# statistics' cost is on - off of the same round, the core wrappers' off -
# none; the table gives medians over rounds and the spread.  Then, where
# valgrind exists, instructions per call under callgrind (off and on,
# counting only rc_loop): repeatable where times are not.
# Sizes: BENCH_RC_CALLS (1000000), BENCH_RC_REPEATS (9).
# BENCH_RC_BASE_LIB=path/libwaitprof.so adds a fourth configuration, "base":
# that library (e.g. an earlier build) with its default settings, so an
# earlier recording path is timed against this build's core wrappers (base
# - off) in the same rounds.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/record_cost.sh BUILD_DIR [rounds]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-7}
case $ROUNDS in
'' | *[!0-9]* | 0) echo "bench/record_cost.sh: rounds must be a positive integer" >&2; exit 2 ;;
esac
[ -r "$BUILD/tests/env.sh" ] || { echo "bench/record_cost.sh: $BUILD/tests/env.sh not found" >&2; exit 2; }
. "$BUILD/tests/env.sh"
[ -r "$WP_LIB" ] || { echo "bench/record_cost.sh: $WP_LIB not found; run make in $BUILD first" >&2; exit 2; }
SRC=$(cd "$(dirname "$0")" && pwd)
CALLS=${BENCH_RC_CALLS:-1000000}
REPEATS=${BENCH_RC_REPEATS:-9}
OUT="$BUILD/bench-out"
BIN="$OUT/bin"
RES="$OUT/record_cost.$(date +%Y%m%d-%H%M%S)"
mkdir -p "$BIN" "$RES"
$MPICC -std=c11 -O2 -g -Wall -Wextra -o "$BIN/record_cost" "$SRC/record_cost.c"
# Singletons: Open MPI refuses root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # CONFIG -> added_ns
    case $1 in
    none) "$BIN/record_cost" "$CALLS" "$REPEATS" ;;
    off) env LD_PRELOAD="$WP_LIB" WAITPROF_HZ=1 WAITPROF_QUIET=1 WAITPROF_ESTIMATE=0 \
        WAITPROF_OUT="$RES/wp.$1.$r" "$BIN/record_cost" "$CALLS" "$REPEATS" ;;
    on) env LD_PRELOAD="$WP_LIB" WAITPROF_HZ=1 WAITPROF_QUIET=1 \
        WAITPROF_OUT="$RES/wp.$1.$r" "$BIN/record_cost" "$CALLS" "$REPEATS" ;;
    base) env LD_PRELOAD="$BASE" WAITPROF_HZ=1 WAITPROF_QUIET=1 \
        WAITPROF_OUT="$RES/wp.$1.$r" "$BIN/record_cost" "$CALLS" "$REPEATS" ;;
    esac >"$RES/out.$1.$r" 2>&1 || { cat "$RES/out.$1.$r" >&2; exit 1; }
    sed -n 's/.* added_ns=\([-0-9.]*\).*/\1/p' "$RES/out.$1.$r"
}

BASE=${BENCH_RC_BASE_LIB:-}
printf 'round\tnone\toff\ton\tstats_ns\twrappers_ns\tbase\tbase_stats_ns\n' >"$RES/raw.tsv"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    case $((r % 3)) in
    0) order="none off on" ;;
    1) order="off on none" ;;
    *) order="on none off" ;;
    esac
    a_base=
    [ -n "$BASE" ] && order="$order base"
    for c in $order; do
        eval "a_$c=\$(run $c)"
    done
    printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$a_none" "$a_off" "$a_on" \
        "$(awk -v a="$a_on" -v b="$a_off" 'BEGIN { printf "%.2f", a - b }')" \
        "$(awk -v a="$a_off" -v b="$a_none" 'BEGIN { printf "%.2f", a - b }')" \
        "${a_base:-0}" "$(awk -v a="${a_base:-0}" -v b="$a_off" 'BEGIN { printf "%.2f", a - b }')" >>"$RES/raw.tsv"
    r=$((r + 1))
done

# median COLUMN — lower median over rounds; also min and max.
stat() {
    awk -F '\t' -v c="$1" 'NR > 1 { v[NR - 1] = $c; n++ }
        END { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
              printf "%.1f (%.1f .. %.1f)", v[int((n + 1) / 2)], v[1], v[n] }' "$RES/raw.tsv"
}
IR_OFF='' IR_ON=''
if command -v valgrind >/dev/null 2>&1; then
    for c in off on ${BASE:+base}; do
        est=1 lib=$WP_LIB
        [ $c = off ] && est=0
        [ $c = base ] && lib=$BASE
        env LD_PRELOAD="$lib" WAITPROF_HZ=1 WAITPROF_QUIET=1 WAITPROF_ESTIMATE=$est WAITPROF_OUT="$RES/cg.$c.wp" \
            valgrind --tool=callgrind --callgrind-out-file="$RES/cg.$c.out" --collect-atstart=no \
            --toggle-collect=rc_loop "$BIN/record_cost" 100000 1 >"$RES/cg.$c.log" 2>&1 || {
            echo "bench/record_cost.sh: callgrind run ($c) failed; see $RES/cg.$c.log" >&2; exit 1; }
        ir=$(sed -n 's/^summary: //p' "$RES/cg.$c.out" | head -n 1)
        calls=$(sed -n 's/.* total_calls=\([0-9]*\).*/\1/p' "$RES/cg.$c.log")
        eval "IR_$(echo $c | tr a-z A-Z)=$(echo "$ir $calls" | awk '{printf "%.1f", $1 / $2}')"
    done
fi
{
    echo "record_cost: $MPI_FLAVOR, $ROUNDS rounds x $REPEATS repeats x $CALLS calls; load: $(uptime | sed 's/.*load average: //')"
    echo
    echo "| ns per recorded call (MPI - PMPI, median over rounds; min .. max) | |"
    echo "|---|---|"
    echo "| without waitprof | $(stat 2) |"
    echo "| core wrappers (WAITPROF_ESTIMATE=0) | $(stat 3) |"
    echo "| wrappers + statistics (default) | $(stat 4) |"
    echo "| **statistics alone (on - off, per round)** | **$(stat 5)** |"
    echo "| core wrappers alone (off - none, per round) | $(stat 6) |"
    if [ -n "$BASE" ]; then
        echo "| base library ($BASE) | $(stat 7) |"
        echo "| **base library's statistics (base - off, per round)** | **$(stat 8)** |"
    fi
    if [ -n "$IR_ON" ]; then
        echo
        echo "callgrind, instructions per call in rc_loop: off $IR_OFF, on $IR_ON, statistics $(echo "$IR_ON $IR_OFF" | awk '{printf "%.1f", $1 - $2}')"
        [ -n "$BASE" ] && echo "callgrind, base library: $IR_BASE per call, its statistics $(echo "$IR_BASE $IR_OFF" | awk '{printf "%.1f", $1 - $2}')"
    fi
} | tee "$RES/table.md"
