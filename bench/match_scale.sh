#!/bin/sh
# bench/match_scale.sh — the cost of matching at MPI_Finalize: measured at
# 2, 4, 8, 16 and 32 ranks, and the rank-local part simulated for one rank
# of up to 100 000.
#
#   bench/match_scale.sh BUILD_DIR [rounds]     (rounds: default 3)
#
# 1. examples/stencil (a 1-D halo exchange: MPI_Irecv, MPI_Isend and
#    MPI_Waitall with both neighbours every step, MPI_Allreduce every 10
#    steps, rank r computing 5 % longer per rank, so waits propagate along
#    the chain) under the launcher with matching at its default rate, on
#    2 to 32 ranks.  From every rank's meta file: match_finalize_ns (the
#    wall time of wp_match_finalize on that rank: the clocks' second
#    measurement, the collective batches still open, the exchange of the
#    point-to-point records, matching and the propagation rounds),
#    match_clock_ns (its clock part), match_rounds, match_records and
#    match_held.  Per run the maximum and the median over ranks; the table
#    gives medians over rounds.  Ranks above 2 are oversubscribed on a
#    2-core machine: every rank that waits in a round of the exchange
#    shares the cores with the others, so the times are upper bounds for a
#    core per rank.
# 2. bench/match_sim (built with the library: make in BUILD_DIR) for one
#    rank of a ring and of a 2-D grid of P = 2 ... 100 000 ranks: CPU time
#    of the lookup table, the matching loop and the propagation's local
#    work, the bytes the finalize step allocates, peak RSS; with valgrind
#    (BENCH_CALLGRIND=1, the default when it is installed) also the
#    instructions of those steps alone.
#
# Sizes: BENCH_MS_STEPS (2000 stencil steps), BENCH_MS_RANKS ("2 4 8 16
# 32"; empty skips the first part), BENCH_MS_P ("2 10 100 1000 10000
# 100000"), BENCH_MS_ITERS ("20000 200000": halo-exchange iterations of the
# simulated rank; 200 000 fills the 4 MiB buffer, so the rate is halved as
# in a long run).
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
STEPS=${BENCH_MS_STEPS:-2000}
RANKS=${BENCH_MS_RANKS-2 4 8 16 32}
PS=${BENCH_MS_P:-2 10 100 1000 10000 100000}
ITERS=${BENCH_MS_ITERS:-20000 200000}
SIM=$BUILD/bench/match_sim
[ -x "$SIM" ] || { echo "bench/match_scale.sh: $SIM not built (make in $BUILD)" >&2; exit 2; }
export WAITPROF_LIB="$WP_LIB" WAITPROF_QUIET=1
OUT=$BUILD/bench-out/match.$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
run() { # NP (WAITPROF_OUT exported by the caller)
    bench_mpirun "$1" "$WP_LAUNCHER" "$BUILD/examples/stencil" -s "$STEPS" -n 2000 -u 2 -i 0.05 >/dev/null
}
# meta KEY DIR — KEY's value in every rank's meta file, one a line.
meta() { cat "$2"/rank.*.meta | sed -n "s/^$1=//p"; }
{
    echo "start: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "mpi: $MPI_FLAVOR; library: $WP_LIB; source: $(git -C "$WP_SRCDIR" rev-parse --short HEAD 2>/dev/null || echo '?')"
} | tee "$OUT/env.txt" >&2

echo "### $MPI_FLAVOR: matching at MPI_Finalize, examples/stencil -s $STEPS -n 2000 -u 2 -i 0.05, $ROUNDS rounds"
echo
echo "| ranks | finalize matching ms, max over ranks | median over ranks | of which clock ms, max | propagation rounds | records per rank (median) | held at MPI_Finalize (max) | load |"
echo "|---|---|---|---|---|---|---|---|"
for np in $RANKS; do
    : >"$OUT/max.txt"; : >"$OUT/med.txt"; : >"$OUT/clk.txt"; : >"$OUT/rnd.txt"; : >"$OUT/rec.txt"
    : >"$OUT/held.txt"; : >"$OUT/load.txt"
    r=0
    while [ "$r" -lt "$ROUNDS" ]; do
        d=$OUT/np$np-$r
        cut -d' ' -f1 /proc/loadavg >>"$OUT/load.txt"
        WAITPROF_OUT=$d run "$np"
        [ "$(ls "$d"/rank.*.meta | wc -l)" = "$np" ] || { echo "bench/match_scale.sh: $d lacks meta files" >&2; exit 1; }
        meta match_finalize_ns "$d" | sort -g | tail -n 1 >>"$OUT/max.txt"
        meta match_finalize_ns "$d" | bench_median >>"$OUT/med.txt"
        meta match_clock_ns "$d" | sort -g | tail -n 1 >>"$OUT/clk.txt"
        meta match_rounds "$d" | sort -g | tail -n 1 >>"$OUT/rnd.txt"
        meta match_records "$d" | bench_median >>"$OUT/rec.txt"
        meta match_held "$d" | sort -g | tail -n 1 >>"$OUT/held.txt"
        # Only the meta files are needed.
        find "$d" -type f ! -name '*.meta' -delete
        r=$((r + 1))
    done
    printf '| %d | %.2f | %.2f | %.2f | %s | %s | %s | %s–%s |\n' "$np" "$(bench_median <"$OUT/max.txt" | awk '{ print $1 / 1e6 }')" \
        "$(bench_median <"$OUT/med.txt" | awk '{ print $1 / 1e6 }')" "$(bench_median <"$OUT/clk.txt" | awk '{ print $1 / 1e6 }')" \
        "$(bench_median <"$OUT/rnd.txt")" "$(bench_median <"$OUT/rec.txt")" "$(bench_median <"$OUT/held.txt")" \
        "$(sort -g "$OUT/load.txt" | head -n 1)" "$(sort -g "$OUT/load.txt" | tail -n 1)"
done

echo
echo "### the rank-local work for one rank of P (bench/match_sim, CPU time, medians of 5 repeats)"
echo
CG=
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
    CG=1
fi
echo "| P | neighbours | iterations | rate at the end | records | waits | sends that made a partner wait | table µs | matching µs | propagation µs (8 rounds) | ns per record | instructions per record | bytes allocated | peak RSS KiB (before the records) | check |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for it in $ITERS; do
    for nb in 2 4; do
        for p in $PS; do
            line=$("$SIM" "$p" "$it" "$nb")
            f() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
            ipr=-
            if [ -n "$CG" ]; then
                cgo=$OUT/cg.$p.$nb.$it
                valgrind --tool=callgrind --callgrind-out-file="$cgo" --collect-atstart=no \
                    --toggle-collect=wp_wtab_build --toggle-collect=wp_match_local --toggle-collect=wp_prop_sort \
                    --toggle-collect=wp_prop_out --toggle-collect=wp_prop_in --toggle-collect=wp_prop_open \
                    --toggle-collect=wp_prop_direct "$SIM" "$p" "$it" "$nb" 16 8 1 >/dev/null 2>"$cgo.log"
                ipr=$(sed -n 's/^summary: //p' "$cgo" | awk -v n="$(f records)" '{ printf "%.0f", $1 / n }')
            fi
            printf '| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.0f | %s | %s | %s | %s (%s) | %s |\n' "$p" "$nb" "$it" \
                "$(f rate)" "$(f records)" "$(f waits)" "$(f sends_waited)" "$(f table_ns | awk '{ print $1 / 1e3 }')" \
                "$(f match_ns | awk '{ print $1 / 1e3 }')" "$(f prop_ns | awk '{ print $1 / 1e3 }')" "$(f ns_per_record)" \
                "$ipr" "$(f bytes)" "$(f rss_kb)" "$(f rss_base_kb)" "$(f check)"
        done
    done
done
echo
echo "end: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg); raw: $OUT" >&2
