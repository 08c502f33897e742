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
    "$PYTHON" - "$out/report.json" "$truth" "$src" <<'PY' || { cat "$WP_TMP/err-$src" >&2; wp_fail "$src: delay costs off the truth (see above)"; }
import json, sys
c = json.load(open(sys.argv[1]))["causes"]
t = dict(kv.split("=") for kv in sys.argv[2].split()[1:])
s1, l1, s2 = float(t["short1"]), float(t["long1"]), float(t["short2"])
def of(rank, fn):
    # A cause is a (rank, call path): samples in late_work() and in the
    # clock_gettime its loop calls are two paths of one delay.
    return [x for x in c if x["rank"] == rank and x["path"] and fn in x["path"].split(";")]
r1, r2 = of(1, "late_work"), of(2, "relay_work")
m_s1 = sum(x["short_term_s"] for x in r1)
m_l1 = sum(x["long_term_s"] for x in r1)
m_s2 = sum(x["short_term_s"] for x in r2)
prop_ranks = sorted({w["rank"] for x in r1 for w in x["waits"] if w["kind"] == "propagated"})
print("[t_ws_chain, %s] truth: rank 1 %.3f s direct, %.3f s propagated; rank 2 %.3f s direct" % (sys.argv[3], s1, l1, s2))
print("[t_ws_chain, %s] measured: rank 1 %.3f s direct, %.3f s propagated (waits on ranks %s); rank 2 %.3f s direct"
      % (sys.argv[3], m_s1, m_l1, prop_ranks, m_s2))
ok = s1 >= 0.6 and l1 >= 0.6
ok = ok and abs(m_s1 - s1) <= 0.15 * s1 and abs(m_l1 - l1) <= 0.15 * l1 and prop_ranks == [3]
ok = ok and abs(m_s2 - s2) <= max(0.15 * s2, 0.03)
sys.exit(0 if ok else 1)
PY
    grep '^waitprof report: ' "$WP_TMP/err-$src" | head -n 1 | grep -q "largest cause: .* because rank 1 computed longer in .* through ranks that waited for it" ||
        { head -n 3 "$WP_TMP/err-$src" >&2; wp_fail "$src: the report's first line does not name rank 1 with propagated waits"; }
done
