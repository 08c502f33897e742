#!/bin/sh
# Both ways of following waits back through ranks at MPI_Finalize
# (match/exchange.c, "Propagation"): tests/mpi/ws_chain.c on 4 ranks as in
# t_ws_chain.sh (rank 1 late by 0.1 s before its send to rank 2, rank 2
# relaying for 0.03 s before its send to rank 3, 10 iterations), with
# WAITPROF_SOURCE=wrappers, once with the default bound, where the waits of
# all ranks are gathered on every rank (match_gathered=1 in every meta
# file), and once with WAITPROF_TEST_GATHER=0, which forces the rounds of
# messages (match_gathered=0).  Each run must give t_ws_chain.sh's delay
# costs within its margins (rank 1 direct and propagated within 15%, its
# propagated waits on rank 3; rank 2 direct within 15% or 30 ms), and on
# every rank both must have followed the chain's two links (match_rounds
# at least 2) without running away (at most 4).  The two counts need not
# be equal: in rounds of messages a rank can take a round's answers early
# or finish a round after the others (a CI run read 2 gathered against 3
# in messages; 8-rank runs have read the gathered count 1-2 higher), while
# the delay costs checked above are the same.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_chain
for mode in gathered rounds; do
    out=$WP_TMP/run-$mode
    if [ $mode = rounds ]; then
        WAITPROF_TEST_GATHER=0 WAITPROF_SOURCE=wrappers wp_profile 4 "$out" "$prog" 0.1 0.03 10 \
            >"$WP_TMP/truth-$mode" 2>"$WP_TMP/err-$mode"
    else
        WAITPROF_SOURCE=wrappers wp_profile 4 "$out" "$prog" 0.1 0.03 10 >"$WP_TMP/truth-$mode" 2>"$WP_TMP/err-$mode"
    fi || { cat "$WP_TMP/err-$mode" >&2; wp_fail "$mode: the profiled run failed"; }
    want=1
    [ $mode = rounds ] && want=0
    for r in 0 1 2 3; do
        g=$(wp_meta "$out/rank.$r.meta" match_gathered)
        [ "$g" = "$want" ] || wp_fail "$mode: rank $r says match_gathered=$g, expected $want"
    done
    truth=$(grep '^truth ' "$WP_TMP/truth-$mode") || wp_fail "$mode: the program printed no truth"
    wp_check_chain_costs "$out/report.json" "$truth" "$mode" || { cat "$WP_TMP/err-$mode" >&2; wp_fail "$mode: delay costs off the truth (see above)"; }
done
for r in 0 1 2 3; do
    a=$(wp_meta "$WP_TMP/run-gathered/rank.$r.meta" match_rounds)
    b=$(wp_meta "$WP_TMP/run-rounds/rank.$r.meta" match_rounds)
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge 2 ] && [ "$a" -le 4 ] && [ "$b" -ge 2 ] && [ "$b" -le 4 ] ||
        wp_fail "rank $r: match_rounds=$a gathered and $b in rounds of messages, expected 2 to 4 each"
done
wp_note "rank 3: match_rounds=$a gathered, $b in rounds of messages"
