#!/bin/sh
# Delay costs through a chain of waits (issue 16; match/exchange.c
# "Propagation"): tests/mpi/ws_chain.c on 4 ranks, 10 iterations in which
# rank 1 computes 0.1 s longer in late_work() before its send to rank 2,
# and rank 2 computes 0.03 s in relay_work() between its receive from rank
# 1 and its send to rank 3.  Rank 2 waits for rank 1 directly; rank 3 waits
# for rank 2, mostly because rank 2 itself waited.  With the default source
# and with WAITPROF_SOURCE=wrappers, report.json's causes must give:
# - rank 1's paths through late_work: short_term_s within 15% of the truth
#   (the sum of rank 2's waits: 0.1 s, then 0.07 s per iteration, as rank 2
#   spends 0.03 s of each 0.1 s relaying) and long_term_s within 15% of the
#   truth (the part of rank 3's waits rank 2 passed on, as much), with its
#   propagated waits on rank 3;
# - rank 2's paths through relay_work: short_term_s within 15% or 30 ms of
#   the truth (rank 3's waits less what was propagated, about 0.3 s);
# and both of rank 1's truths must be at least 0.6 s, so a program that
# failed to inject its delays cannot pass.  The report's first line names rank
# 1 as the largest cause, with waits through ranks that waited for it.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_chain
for src in default wrappers; do
    out=$WP_TMP/run-$src
    if [ $src = wrappers ]; then
        WAITPROF_SOURCE=wrappers wp_profile 4 "$out" "$prog" 0.1 0.03 10 >"$WP_TMP/truth-$src" 2>"$WP_TMP/err-$src"
    else
        wp_profile 4 "$out" "$prog" 0.1 0.03 10 >"$WP_TMP/truth-$src" 2>"$WP_TMP/err-$src"
    fi || { cat "$WP_TMP/err-$src" >&2; wp_fail "$src: the profiled run failed"; }
    truth=$(grep '^truth ' "$WP_TMP/truth-$src") || wp_fail "$src: the program printed no truth"
    wp_check_chain_costs "$out/report.json" "$truth" "$src" || { cat "$WP_TMP/err-$src" >&2; wp_fail "$src: delay costs off the truth (see above)"; }
    grep '^waitprof report: ' "$WP_TMP/err-$src" | head -n 1 | grep -q "largest cause: .* because rank 1 computed longer in .* through ranks that waited for it" ||
        { head -n 3 "$WP_TMP/err-$src" >&2; wp_fail "$src: the report's first line does not name rank 1 with propagated waits"; }
done
