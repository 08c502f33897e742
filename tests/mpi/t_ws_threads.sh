#!/bin/sh
# Matched instances under MPI_THREAD_MULTIPLE: tests/mpi/ws_threads.c runs 4
# threads on each of 2 ranks; thread t of rank 1 sleeps 0.1 s before each of
# its 10 sends to thread t of rank 0 (its own tag), which receives them at a
# call site of its own (recv_tT).  Every receive waits, so the estimate sees
# nothing; for every thread's site:
# - rank.0.waits has a row for it, method measured, from all 10 receives
#   (fewer than WP_MATCH_FIRST instances of a channel: all are chosen);
# - its wait is within 5 % of the truth the program measured with shared
#   CLOCK_MONOTONIC timestamps (the sender's entry travels in the message),
#   and that truth is at least 0.8 s (10 x 0.1 s injected).
# A run outside the tolerance gets a second run (WP_WAITS_TRIES), as in
# wp_check_waits_run: 8 threads on 2 CPUs are descheduled now and then, a
# wrong measurement is wrong every time.  Skips when the library does not
# provide MPI_THREAD_MULTIPLE.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_threads
nt=4 iter=10

try=1
while :; do
    out=$WP_TMP/threads-$try
    rc=0
    WAITPROF_SOURCE=wrappers wp_profile 2 "$out" "$prog" 0.1 $iter >"$out.stdout" 2>"$out.stderr" || rc=$?
    grep -q 'does not provide MPI_THREAD_MULTIPLE' "$out.stderr" && wp_skip "the MPI library does not provide MPI_THREAD_MULTIPLE"
    [ "$rc" -eq 0 ] || { cat "$out.stderr" >&2; wp_fail "ws_threads exited with $rc"; }
    [ "$(grep -c '^truth rank=0 site=recv_t' "$out.stdout")" -eq $nt ] ||
        { cat "$out.stdout" >&2; wp_fail "expected $nt truth lines from ws_threads"; }
    bad=0
    t=0
    while [ $t -lt $nt ]; do
        truth=$(sed -n "s/^truth rank=0 site=recv_t$t .* wait=\([0-9.]*\)$/\1/p" "$out.stdout")
        wp_ge "$truth" 0.8 || { cat "$out.stdout" >&2; wp_fail "thread $t: truth $truth s: ws_threads did not inject its 10 x 0.1 s"; }
        fig=$(wp_waits_site "$out/rank.0.waits" "recv_t$t" MPI_Recv late_sender) ||
            { cat "$out/rank.0.waits" >&2; wp_fail "rank.0.waits: no MPI_Recv late_sender row at site recv_t$t, or not the waits format"; }
        set -- $fig
        [ "$3" = measured ] || { cat "$out/rank.0.waits" >&2; wp_fail "thread $t: recv_t$t is '$3', not measured"; }
        [ "$2" -eq $iter ] || { cat "$out/rank.0.waits" >&2; wp_fail "thread $t: recv_t$t measured from $2 matched instances, not all $iter"; }
        lo=$(wp_calc "$truth * 0.95") hi=$(wp_calc "$truth * 1.05")
        label="thread $t: rank 0 recv_t$t MPI_Recv late_sender, measured from $2, s (truth $truth)"
        if wp_ge "$1" "$lo" && wp_ge "$hi" "$1"; then
            wp_check_between "$label" "$1" "$lo" "$hi"
        elif [ "$try" -lt "${WP_WAITS_TRIES:-2}" ]; then
            wp_note "$label = $1, OUTSIDE $lo .. $hi"
            bad=1
        else
            cat "$out/rank.0.waits" >&2
            wp_check_between "$label" "$1" "$lo" "$hi"
        fi
        t=$((t + 1))
    done
    [ "$bad" -eq 0 ] && break
    wp_note "attempt $try is outside the tolerance: running it again"
    try=$((try + 1))
done
