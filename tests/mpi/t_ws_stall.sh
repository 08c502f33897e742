#!/bin/sh
# MPI-Stall from samples by the estimator alone (WAITPROF_SOURCE=wrappers, as
# on an MPI without a runtime hook): rank 0 receives
# 16 MiB messages, half of them from a late sender (tests/mpi/ws_stall.c).
# The share of its samples in MPI_Recv that are MPI-Stall must be within 5
# percentage points of the share of its receive time it spent waiting, as the
# program measured it; and some samples must be MPI-Work (the transfers).
# Then the same for MPI_Allreduce with a rank that is late in every call
# (below).
. "$(dirname "$0")/../lib.sh"
# One attempt in a subshell: wp_fail ends the attempt.  Timing noise on a
# loaded machine seldom strikes twice, a wrong result always does, so a failed
# attempt is run again up to WP_WAITS_TRIES (default 2) times in all, as in
# wp_check_waits_run.
attempt() (
    out=$WP_TMP/out-$try
    WAITPROF_SOURCE=wrappers WAITPROF_HZ=1000 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_stall" 0.1 10 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
        { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "ws_stall exited with $rc"; }
    truth=$(sed -n 's/^truth rank=0 stall_share=\([0-9.]*\) .*/\1/p' "$WP_TMP/stdout")
    [ -n "$truth" ] || wp_fail "no truth line"
    stall=$(wp_folded sum "$out/rank.0.folded" --state MPI-Stall --path ';main;MPI_Recv$')
    work=$(wp_folded sum "$out/rank.0.folded" --state MPI-Work --path ';main;MPI_Recv$')
    [ "$((stall + work))" -gt 100 ] || wp_fail "only $((stall + work)) samples in MPI_Recv"
    [ "$work" -gt 0 ] || wp_fail "no MPI-Work sample in MPI_Recv: the transfers were classified as waiting"
    share=$(wp_calc "$stall / ($stall + $work)")
    wp_check_between "sampled MPI-Stall share in MPI_Recv ($stall of $((stall + work)); truth $truth)" "$share" \
        "$(wp_calc "$truth - 0.05")" "$(wp_calc "$truth + 0.05")"
    [ "$(wp_meta "$out/rank.0.meta" source)" = wrappers ] || wp_fail "meta does not name the source that classified"
)
try=1
until attempt; do
    [ "$try" -lt "${WP_WAITS_TRIES:-2}" ] || exit 1
    try=$((try + 1))
    wp_note "attempt failed: running it again ($try of ${WP_WAITS_TRIES:-2})"
done

# The same for a collective whose waiting rank never makes a call that does
# not wait (ws_stall allreduce: rank 1 is late in every MPI_Allreduce).
# Rank 0's own minimum is then itself a wait; only the global minimum, known
# at MPI_Finalize, tells its waiting from the reduction's work, so its
# samples are held until then (sampler/store.h).  Same tolerance.
attempt_coll() (
    out=$WP_TMP/coll-$try
    WAITPROF_SOURCE=wrappers WAITPROF_HZ=1000 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_stall" 0.05 10 allreduce \
        >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "ws_stall allreduce exited with $rc"; }
    truth=$(sed -n 's/^truth rank=0 stall_share=\([0-9.]*\) .*/\1/p' "$WP_TMP/stdout")
    [ -n "$truth" ] || wp_fail "allreduce: no truth line"
    stall=$(wp_folded sum "$out/rank.0.folded" --state MPI-Stall --path ';main;MPI_Allreduce$')
    work=$(wp_folded sum "$out/rank.0.folded" --state MPI-Work --path ';main;MPI_Allreduce$')
    [ "$((stall + work))" -gt 100 ] || wp_fail "allreduce: only $((stall + work)) samples in MPI_Allreduce"
    share=$(wp_calc "$stall / ($stall + $work)")
    wp_check_between "allreduce: sampled MPI-Stall share in MPI_Allreduce ($stall of $((stall + work)); truth $truth)" \
        "$share" "$(wp_calc "$truth - 0.05")" "$(wp_calc "$truth + 0.05")"
)
try=1
until attempt_coll; do
    [ "$try" -lt "${WP_WAITS_TRIES:-2}" ] || exit 1
    try=$((try + 1))
    wp_note "attempt failed: running it again ($try of ${WP_WAITS_TRIES:-2})"
done
