#!/bin/sh
# Request kinds (tests/mpi/ws_sendwait.c, 2 ranks): rank 0's MPI_Waitall on
# sends only, which really waits for a late receiver, is not Late Sender
# (its row has pattern none and completes=send), while its MPI_Waitall on
# receives, at another call site of the same run, is Late Sender within 10%
# or 5 ms of the measured truth.  Were the send Waitall counted as Late
# Sender, the Late Sender sum of MPI_Waitall would hold its waits too and
# miss the truth by about ITER/2 x DELAY.
. "$(dirname "$0")/../lib.sh"
attempt() (
    out=$WP_TMP/out-$try
    wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_sendwait" 0.1 8 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
        { rc=$?; cat "$WP_TMP/stderr" >&2; wp_fail "ws_sendwait exited with $rc"; }
    waited=$(sed -n 's/^sendwait rank=0 waited=//p' "$WP_TMP/stdout")
    # The send Waitall must really have waited for the late receiver (4 of
    # 8 iterations 0.1 s late): else this test could not tell anything.
    wp_ge "$waited" 0.3 || wp_fail "rank 0 spent only $waited s in the send MPI_Waitall; the sends did not wait"
    # Rank 0's MPI_Waitall rows, by column name: the send one.
    send_rows=$(awk -F '\t' 'NR == 2 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        NR > 2 && $c["function"] == "MPI_Waitall" && $c["completes"] == "send" {
            print $c["pattern"], $c["wait_ns"], $c["time_ns"] }' "$out/rank.0.waits")
    [ -n "$send_rows" ] || { cat "$out/rank.0.waits" >&2; wp_fail "no MPI_Waitall row with completes=send"; }
    echo "$send_rows" | awk '$1 != "none" { exit 1 }' ||
        { cat "$out/rank.0.waits" >&2; wp_fail "the send MPI_Waitall has a pattern: $send_rows"; }
    wp_note "send MPI_Waitall: waited $waited s, row (pattern wait_ns time_ns): $send_rows"
    wp_check_waits 2 "$out" "$WP_TMP/stdout" 1
)
try=1
until attempt; do
    [ "$try" -lt "${WP_WAITS_TRIES:-2}" ] || exit 1
    try=$((try + 1))
    wp_note "attempt failed: running it again ($try of ${WP_WAITS_TRIES:-2})"
done
