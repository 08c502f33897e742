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
    "$PYTHON" - "$out/report.json" "$truth" "$mode" <<'PY' || { cat "$WP_TMP/err-$mode" >&2; wp_fail "$mode: delay costs off the truth (see above)"; }
import json, sys
c = json.load(open(sys.argv[1]))["causes"]
t = dict(kv.split("=") for kv in sys.argv[2].split()[1:])
s1, l1, s2 = float(t["short1"]), float(t["long1"]), float(t["short2"])
def of(rank, fn):
    return [x for x in c if x["rank"] == rank and x["path"] and fn in x["path"].split(";")]
r1, r2 = of(1, "late_work"), of(2, "relay_work")
m_s1 = sum(x["short_term_s"] for x in r1)
m_l1 = sum(x["long_term_s"] for x in r1)
m_s2 = sum(x["short_term_s"] for x in r2)
prop_ranks = sorted({w["rank"] for x in r1 for w in x["waits"] if w["kind"] == "propagated"})
print("[t_ws_rounds, %s] truth: rank 1 %.3f s direct, %.3f s propagated; rank 2 %.3f s direct" % (sys.argv[3], s1, l1, s2))
print("[t_ws_rounds, %s] measured: rank 1 %.3f s direct, %.3f s propagated (waits on ranks %s); rank 2 %.3f s direct"
      % (sys.argv[3], m_s1, m_l1, prop_ranks, m_s2))
ok = s1 >= 0.6 and l1 >= 0.6
ok = ok and abs(m_s1 - s1) <= 0.15 * s1 and abs(m_l1 - l1) <= 0.15 * l1 and prop_ranks == [3]
ok = ok and abs(m_s2 - s2) <= max(0.15 * s2, 0.03)
sys.exit(0 if ok else 1)
PY
done
for r in 0 1 2 3; do
    a=$(wp_meta "$WP_TMP/run-gathered/rank.$r.meta" match_rounds)
    b=$(wp_meta "$WP_TMP/run-rounds/rank.$r.meta" match_rounds)
    [ -n "$a" ] && [ -n "$b" ] && [ "$a" -ge 2 ] && [ "$a" -le 4 ] && [ "$b" -ge 2 ] && [ "$b" -le 4 ] ||
        wp_fail "rank $r: match_rounds=$a gathered and $b in rounds of messages, expected 2 to 4 each"
done
wp_note "rank 3: match_rounds=$a gathered, $b in rounds of messages"
