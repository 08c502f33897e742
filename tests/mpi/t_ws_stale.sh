#!/bin/sh
# A followed receive completed by MPI_Test, whose handle the next request
# takes (tests/mpi/ws_stale.c, 2 ranks, 4 rounds): rank 0 receives each of
# rank 1's messages with MPI_Irecv and MPI_Test, which leaves the receive's
# entry in the matching table, then waits for a generalized request.
# MPICH hands that request the receive's handle every round; the wait must
# not be taken for the receive's completion, so MPI_Grequest_start's
# wrapper drops the entry (wrap/mpi_functions.tbl, req=unknown; without
# it rank 0 recorded the 4 waits as receives and matched rank 1's sends).
# So rank 0 records no receive (match_matched 0) and rank 1's 4 sends stay
# unmatched.  Open MPI takes generalized requests from other memory, so
# there the handles differ and the counts hold without the drop; the
# script requires the reuse on MPICH only.
. "$(dirname "$0")/../lib.sh"
out=$WP_TMP/stale
wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_stale" 4 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "the profiled run failed"; }
reused=$(sed -n 's/^info rank=0 reused=\([0-9]*\)$/\1/p' "$WP_TMP/stdout")
[ -n "$reused" ] || { cat "$WP_TMP/stdout" >&2; wp_fail "no info line"; }
if [ "$MPI_FLAVOR" = mpich ] && [ "$reused" != 4 ]; then
    wp_fail "the generalized requests took $reused of the 4 receives' handles: the case is not tested"
fi
m0=$(wp_meta "$out/rank.0.meta" match_matched)
u1=$(wp_meta "$out/rank.1.meta" match_unmatched)
wp_note "reused=$reused; rank 0: match_matched=$m0; rank 1: match_unmatched=$u1"
[ "$m0" = 0 ] || wp_fail "rank 0 recorded $m0 receives: a generalized request's wait was taken for a tested receive's completion"
[ "$u1" = 4 ] || wp_fail "rank 1: $u1 sends unmatched, expected the 4 whose receives completed in MPI_Test"
