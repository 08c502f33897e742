#!/bin/sh
# Blocking sends numbered after their call (match/numbering.h, wp_mlast,
# wp_mlast_take): tests/mpi/ws_mix.c sends 6000 messages from rank 1 to
# rank 0, most by MPI_Send on one channel, with MPI_Isend on it, MPI_Isend
# on a channel that takes its slot in the sender's channel cache, a
# persistent send, MPI_Send on another channel and MPI_Send to
# MPI_PROC_NULL on the channel's tag (on MPICH -1, the peer that stands
# for "no last channel") in between; then 600 by
# MPI_Send on a duplicate of MPI_COMM_WORLD, and 600 on a second duplicate
# made after the first was freed (often under the same handle); at
# WAITPROF_MATCH=4, so that about a quarter of them are chosen.  A send on
# the thread's last channel takes the number the send before it
# predicted, from the channel's slot; the others must make it predict
# again, or a chosen send would go untimed and unrecorded, and a send
# whose slot another channel took must not count on that channel's
# counter.  So: on both ranks match_unnumbered=0 and match_unmatched=0
# (every record found its partner's), the same match_records on both, all
# of rank 0's matched (match_matched; a sender counts only its blocking
# sends'), and at least 1000 of them (the first 16 of each channel and
# about one in 4 after).
. "$(dirname "$0")/../lib.sh"
out=$WP_TMP/mix
WAITPROF_MATCH=4 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_mix" 6000 >"$WP_TMP/truth" 2>"$WP_TMP/err" ||
    { cat "$WP_TMP/err" >&2; wp_fail "the profiled run failed"; }
for r in 0 1; do
    grep -q "^truth rank=$r messages=6000 reused=[01]$" "$WP_TMP/truth" ||
        { cat "$WP_TMP/truth" "$WP_TMP/err" >&2; wp_fail "rank $r's truth line is missing (a message arrived out of order)"; }
    for k in match_unnumbered match_unmatched; do
        v=$(wp_meta "$out/rank.$r.meta" $k)
        [ "$v" = 0 ] || { cat "$out/rank.$r.meta" >&2; wp_fail "rank $r: $k=$v, not 0"; }
    done
done
grep -q "^truth rank=0 .* reused=1$" "$WP_TMP/truth" ||
    wp_note "the second duplicate communicator did not reuse the first one's handle"
n0=$(wp_meta "$out/rank.0.meta" match_records) n1=$(wp_meta "$out/rank.1.meta" match_records)
m0=$(wp_meta "$out/rank.0.meta" match_matched)
[ "$n0" = "$n1" ] || wp_fail "match_records $n0 on rank 0, $n1 on rank 1"
[ "$m0" = "$n0" ] || wp_fail "rank 0 matched $m0 of its $n0 records"
wp_check_between "matched instances" "$m0" 1000 6000
