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
    secs=$(wp_truth "$WP_TMP/stdout" $r seconds)
    want=$(wp_calc "$secs * $hz")
    for t in 1 2 3 4; do
        got=$(wp_meta "$meta" thread.$t.samples)
        wp_check_between "rank $r thread $t samples (workers ran $secs s)" "$got" \
            "$(wp_calc "$want * 0.85")" "$(wp_calc "$want * 1.15 + 5")"
    done
    got=$(wp_folded sum "$out/rank.$r.folded" --state Not-in-MPI --path ';worker_compute$')
    want=$(wp_calc "$nt * $iter * $delay * $hz")
    wp_check_between "rank $r Not-in-MPI samples in worker_compute" "$got" \
        "$(wp_calc "$want * 0.85")" "$(wp_calc "$want * 1.15 + 5")"
    got=$(wp_folded sum "$out/rank.$r.folded" --path '^MPI-(Work|Stall);.*;MPI_Sendrecv$')
    [ "$got" -gt 0 ] || wp_fail "rank $r: no samples in MPI_Sendrecv"
done
