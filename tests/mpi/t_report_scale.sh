#!/bin/sh
# The cross-rank report of a synthetic 3 000-rank run
# (bench/gen_report_ranks.py: three groups of ranks laid out as the ocean
# example of White's multi-resolution timers): rank lists come out as ranges, the 3 000 histograms of a
# function reduce to three groups, the sums are exact, and report.json
# validates.  No MPI run and no timing: doc/performance.md has the figures at
# 100 000 ranks.
. "$(dirname "$0")/../lib.sh"
d=$WP_TMP/syn
"$PYTHON" "$WP_SRCDIR/bench/gen_report_ranks.py" "$d" 3000 || wp_fail "the generator failed"
"$WP_BUILDDIR/bin/waitprof" report --quiet "$d" || wp_fail "waitprof report exited with $?"
r=$d/report.txt
grep -q "^run: 3000 ranks, 3000 sampled (0-2999)," "$r" || wp_fail "run line: $(grep '^run:' "$r")"
# Groups of report.txt's MPI_Waitall block: fullest bins 43, 41 and 31.
sed -n '/^\*\*\* MPI_Waitall/,/^$/p' "$r" >"$WP_TMP/waitall"
[ "$(grep '^event histogram' "$WP_TMP/waitall" | tr '\n' '|')" = \
  "event histogram for ranks: 2500-2999|event histogram for ranks: 0-999,1500-2499|event histogram for ranks: 1000-1499|" ] ||
    { cat "$WP_TMP/waitall"; wp_fail "MPI_Waitall histogram groups are not the generator's three"; }
grep -q "^events per rank: 128 max (rank 0), 128 min (rank 0), 128.0 avg (3000 ranks)$" "$WP_TMP/waitall" ||
    wp_fail "events per rank: $(grep '^events per rank' "$WP_TMP/waitall")"
# The generator: time = 128 x base + rank, base 12 ms (groups 0), 1.5 ms (1), 25 ms (2).
want=$(awk 'BEGIN { t = 0; for (r = 0; r < 3000; r++) { g = (r < 1000 || (r >= 1500 && r < 2500)) ? 0 : (r < 1500 ? 1 : 2);
                     b = g == 0 ? 12000000 : g == 1 ? 1500000 : 25000000; t += 128 * b + r }; printf "%.6f", t * 1e-9 }')
grep -q "^aggregate total: $want s$" "$WP_TMP/waitall" || wp_fail "aggregate total: $(grep '^aggregate' "$WP_TMP/waitall"), expected $want s"
grep -q "^longest event: 0.050003 s, rank 2999, event " "$WP_TMP/waitall" || wp_fail "$(grep '^longest event' "$WP_TMP/waitall")"
"$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$d/report.json" ||
    wp_fail "report.json does not validate"
"$PYTHON" "$WP_SRCDIR/tests/report_check.py" consistency "$d" || wp_fail "the report differs from the per-rank files"
wp_note "3000 synthetic ranks: ranges, three histogram groups, exact sums"
