#!/bin/sh
# bench/sources.sh — how well each stall source classifies known waits.
#
#   bench/sources.sh BUILD_DIR [rounds] [sources]
#
# Runs tests/mpi/ws_source (built by 'make check' in BUILD_DIR) in each of
# its modes under each source (default: every source this build can use:
# wrappers, mpit on Open MPI, peruse when built with peruse.h) at 1000 Hz,
# ROUNDS times (default 3), and prints a markdown table: per mode and
# source, the truth (the share of the measured call's time spent waiting, as
# the program measured it), the sampled MPI-Stall share of that call's
# samples, and the error in percentage points (median over rounds, and the
# largest).  A run whose meta file names another source than asked (a
# fallback) is reported as such, not measured.  BENCH_SRC_ARGS (default
# "0.1 10": the injected delay in seconds and the number of measured calls)
# is passed to ws_source, except in mode arrived (an 8-byte receive whose
# message is always there, which needs many calls for its samples), which
# takes BENCH_ARRIVED_ARGS (default "0 300000"); the WAITPROF_* variables
# of the environment (WAITPROF_MATCH_DENSE, WAITPROF_LEAN, ...) reach every
# run.
set -eu
[ $# -ge 1 ] || { echo "usage: bench/sources.sh BUILD_DIR [rounds] [sources]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
SRC_ARGS=${BENCH_SRC_ARGS:-0.1 10}
ARRIVED_ARGS=${BENCH_ARRIVED_ARGS:-0 300000}
. "$BUILD/tests/env.sh"
PROG=$BUILD/tests/mpi/ws_source
[ -x "$PROG" ] || { echo "bench/sources.sh: $PROG not built; run 'make check TESTS=' in $BUILD" >&2; exit 2; }
SOURCES=${3:-wrappers}
if [ $# -lt 3 ]; then
    [ "$MPI_FLAVOR" = openmpi ] && SOURCES="$SOURCES mpit"
    [ "${WP_HAVE_PERUSE:-0}" = 1 ] && SOURCES="$SOURCES peruse"
fi
OUT=$BUILD/bench-out/sources.$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # run MODE NP SOURCE ROUND
    d=$OUT/$1.$3.$4
    case $MPI_FLAVOR in
    openmpi) set -- "$1" "$2" "$3" "$4" --oversubscribe --mca mpi_yield_when_idle 1 \
        --mca btl_vader_single_copy_mechanism none -np "$2" ;;
    *) set -- "$1" "$2" "$3" "$4" -n "$2" ;;
    esac
    m=$1 s=$3 a=$SRC_ARGS
    [ "$m" = arrived ] && a=$ARRIVED_ARGS
    shift 4
    WAITPROF_LIB=$WP_LIB WAITPROF_SOURCE=$s WAITPROF_HZ=1000 WAITPROF_OUT=$d WAITPROF_QUIET=1 \
        timeout 300 "$MPIEXEC" "$@" "$WP_LAUNCHER" "$PROG" "$m" $a >"$d.out" 2>&1 || { echo "failed: $d.out" >&2; return 1; }
    truth=$(sed -n 's/^truth rank=0 stall_share=\([0-9.]*\).*/\1/p' "$d.out")
    used=$(sed -n 's/^source=//p' "$d/rank.0.meta")
    case $m in waitall) path=';measured_waitall;MPI_Waitall$' ;; lrecv) path=';measured;MPI_Send$' ;;
    *) path=';measured;MPI_Recv$' ;; esac
    st=$("$PYTHON" "$WP_SRCDIR/tests/folded.py" sum "$d/rank.0.folded" --state MPI-Stall --path "$path")
    wk=$("$PYTHON" "$WP_SRCDIR/tests/folded.py" sum "$d/rank.0.folded" --state MPI-Work --path "$path")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$s" "$used" "$truth" "$st" "$wk" >>"$OUT/raw.tsv"
}

echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load:$(cut -d' ' -f1-3 /proc/loadavg); mpi: $MPI_FLAVOR; sources: $SOURCES; ws_source args: $SRC_ARGS (arrived: $ARRIVED_ARGS); $(env | grep '^WAITPROF_' | tr '\n' ' ')" | tee "$OUT/env.txt" >&2
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for m in eager rndv lrecv there arrived any waitall threads comms; do
        np=2
        [ $m = waitall ] && np=4
        for s in $SOURCES; do
            run $m $np $s $r || true
        done
    done
    r=$((r + 1))
done
awk -F '\t' '
    { k = $1 "\t" $2; if ($2 != $3) { fb[k] = $3; next }
      n[k]++; share = ($5 + $6) > 0 ? $5 / ($5 + $6) : 0; err = 100 * (share - $4)
      e[k, n[k]] = err; t[k] += $4; s[k] += share; if (!(k in keys)) { keys[k] = ++nk; order[nk] = k } }
    END {
        print "| mode | source | truth (stall share) | sampled stall share | error, points (median) | largest error |"
        print "| --- | --- | --- | --- | --- | --- |"
        for (i = 1; i <= nk; i++) {
            k = order[i]; split(k, kk, "\t"); m = n[k]
            for (a = 1; a <= m; a++) v[a] = e[k, a]
            for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] < v[a]) { x = v[a]; v[a] = v[b]; v[b] = x }
            med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
            big = v[1] < 0 && -v[1] > v[m] ? v[1] : v[m]
            printf "| %s | %s | %.3f | %.3f | %+.1f | %+.1f |\n", kk[1], kk[2], t[k] / m, s[k] / m, med, big
        }
        for (k in fb) { split(k, kk, "\t"); printf "| %s | %s | fell back to %s | | | |\n", kk[1], kk[2], fb[k] }
    }' "$OUT/raw.tsv" | tee "$OUT/table.md"
