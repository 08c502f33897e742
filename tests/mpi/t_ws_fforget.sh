#!/bin/sh
# A followed receive whose completion waitprof does not see, then a new
# request under its Fortran handle (tests/mpi/ws_fforget.F90, 2 ranks, 4
# rounds): rank 0 posts MPI_IRECV, completes it through the C PMPI_Wait
# (no wrapper sees it), then MPI_ISSEND takes the same Fortran handle and
# MPI_WAIT completes it.  The receive's entry under that handle must be
# dropped when the send's request is made: otherwise the send's MPI_WAIT
# is taken for the receive's completion and recorded as its instance.  On
# Open MPI the send's C handle is another, so only the Fortran handle's
# entry names it (match/numbering.c, wp_match_fforget: with it a no-op
# the test fails there); on MPICH a Fortran handle is its C handle, and
# the C handle's entry goes with its twin (wp_match_forget; with both
# no-ops the test fails there).  So rank 0 records no receive
# (match_matched 0) and rank 1's four blocking sends of the unseen
# receives stay unmatched (match_unmatched 4), while its receives of the
# four synchronous sends are matched.
. "$(dirname "$0")/../lib.sh"
[ -n "$MPIFC" ] || wp_skip "no MPI Fortran compiler"
out=$WP_TMP/ff
wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_fforget_f" 4 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "the profiled run failed"; }
grep -q '^truth rank=1 unseen=4$' "$WP_TMP/stdout" || { cat "$WP_TMP/stdout" >&2; wp_fail "no truth line"; }
# Without reuse the program tests nothing.
grep -q '^info rank=0 reused=4$' "$WP_TMP/stdout" ||
    { cat "$WP_TMP/stdout" >&2; wp_fail "the synchronous sends did not all take the receives' Fortran handles"; }
m0=$(wp_meta "$out/rank.0.meta" match_matched)
u1=$(wp_meta "$out/rank.1.meta" match_unmatched) m1=$(wp_meta "$out/rank.1.meta" match_matched)
wp_note "rank 0: match_matched=$m0; rank 1: match_matched=$m1 match_unmatched=$u1"
[ "$m0" = 0 ] || wp_fail "rank 0 recorded $m0 receives: a send's completion was taken for an unseen receive's"
[ "$u1" = 4 ] || wp_fail "rank 1: $u1 sends unmatched, expected the 4 whose receives waitprof did not see complete"
[ "$m1" = 4 ] || wp_fail "rank 1: $m1 receives matched, expected the 4 synchronous sends'"
