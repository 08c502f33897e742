#!/bin/sh
# bench/finalize_scale.sh — waitprof's finalize time and output size at
# 2, 4, 8, 16 and 32 ranks, all ranks sampled and only ranks 0-1 sampled,
# and the reduction of the wait-state table simulated for 100 000 ranks.
#
#   bench/finalize_scale.sh BUILD_DIR [rounds]     (rounds: default 3)
#
# The program is examples/stencil (halo exchange, MPI_Allreduce every 10
# steps, load imbalance), 200 steps, so that every rank has rows for the
# estimator and samples to write.  Figures, medians over rounds:
# - finalize_s: rank 0's time from the start of waitprof's MPI_Finalize work
#   to the end of its reductions (sampling.txt), which includes waiting for
#   the slowest rank to write its files;
# - finalize_estimate_s: the estimator's share (per-rank file and the tree
#   reduction of the wait-state table);
# - bytes: the size of the output directory (du -sb); files: its file count.
# Ranks above 2 are oversubscribed on this machine (2 cores): the times are
# an upper bound for a machine with a core per rank.
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
. "$BUILD/tests/env.sh"
. "$(dirname "$0")/lib.sh"
export WAITPROF_LIB="$WP_LIB" WAITPROF_QUIET=1
OUT=$BUILD/bench-out/finalize.$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
BENCH_MPIRUN_TIMEOUT=300 BENCH_MPIRUN_OMPI="--mca btl_vader_single_copy_mechanism none"
run() { # NP (WAITPROF_OUT and WAITPROF_RANKS exported by the caller)
    bench_mpirun "$1" "$WP_LAUNCHER" "$BUILD/examples/stencil" -s 200 -n 20000 -u 2 -i 0.05 >/dev/null
}
echo "load: $(uptime)"
printf '| ranks | sampled | finalize s | of which estimator s | output bytes | files |\n|---|---|---|---|---|---|\n'
for np in 2 4 8 16 32; do
    for sel in all 0-1; do
        : >"$OUT/f.txt"; : >"$OUT/e.txt"; : >"$OUT/b.txt"; : >"$OUT/n.txt"
        r=0
        while [ "$r" -lt "$ROUNDS" ]; do
            d=$OUT/np$np-$sel-$r
            export WAITPROF_OUT="$d" WAITPROF_RANKS="$sel"
            run "$np"
            sed -n 's/^finalize_s=//p' "$d/sampling.txt" >>"$OUT/f.txt"
            sed -n 's/^finalize_estimate_s=//p' "$d/sampling.txt" >>"$OUT/e.txt"
            du -sb "$d" | cut -f1 >>"$OUT/b.txt"
            ls "$d" | wc -l >>"$OUT/n.txt"
            r=$((r + 1))
        done
        printf '| %d | %s | %.3f | %.3f | %d | %d |\n' "$np" "$sel" "$(bench_median <"$OUT/f.txt")" \
            "$(bench_median <"$OUT/e.txt")" "$(bench_median <"$OUT/b.txt")" "$(bench_median <"$OUT/n.txt")"
    done
done
echo
echo "reduction of the wait-state table, simulated (bench/reduce_sim):"
for p in 1000 10000 100000; do
    "$BUILD/bench/reduce_sim" "$p" 20 64 | tr '\n' ' '
    echo
done
