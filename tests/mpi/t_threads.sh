#!/bin/sh
# MPI_THREAD_MULTIPLE with 4 worker threads per rank: every application
# thread is sampled at the configured rate, the MPI library's own threads
# are not, and the workers' computation lands under worker_compute.
. "$(dirname "$0")/../lib.sh"
hz=200 nt=4 delay=0.1 iter=10
out=$WP_TMP/out
WAITPROF_HZ=$hz wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/threads" $nt $delay $iter \
    >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || { cat "$WP_TMP/stderr" >&2; wp_fail "threads exited with $?"; }
wp_folded check "$out"/rank.*.folded "$out/all.folded" || wp_fail "folded format"
for r in 0 1; do
    meta=$out/rank.$r.meta
    th=$(wp_meta "$meta" threads)
    [ "$th" = $((nt + 1)) ] || wp_fail "rank $r sampled $th threads, expected main + $nt workers (runtime threads excluded)"
    # Each worker's samples follow its own lifetime, found by thread id.
    for t in 1 2 3 4; do
        tid=$(wp_meta "$meta" thread.$t.tid)
        life=$(sed -n "s/^truth rank=$r tid=$tid lifetime=\([0-9.]*\) .*/\1/p" "$WP_TMP/stdout")
        [ -n "$life" ] || wp_fail "rank $r: sampled thread $t (tid $tid) is not one of the workers"
        got=$(wp_meta "$meta" thread.$t.samples)
        want=$(wp_calc "$life * $hz")
        wp_check_between "rank $r thread $t samples (it lived $life s)" "$got" \
            "$(wp_calc "$want * 0.85 - 2")" "$(wp_calc "$want * 1.15 + 2")"
    done
    # The workers' computing time, as they measured it (it overshoots the
    # requested delay when 2 cores run 10 threads).
    comp=$(sed -n "s/^truth rank=$r tid=.* compute=//p" "$WP_TMP/stdout" | awk '{ s += $1 } END { print s }')
    got=$(wp_folded sum "$out/rank.$r.folded" --state Not-in-MPI --path ';worker_compute(;.*)?$')
    want=$(wp_calc "$comp * $hz")
    wp_check_between "rank $r Not-in-MPI samples in worker_compute (workers computed $comp s)" "$got" \
        "$(wp_calc "$want * 0.85")" "$(wp_calc "$want * 1.15 + 5")"
    got=$(wp_folded sum "$out/rank.$r.folded" --path '^MPI-(Work|Stall);.*;MPI_Sendrecv$')
    [ "$got" -gt 0 ] || wp_fail "rank $r: no samples in MPI_Sendrecv"
done
