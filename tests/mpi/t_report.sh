#!/bin/sh
# The cross-rank report (report/report.h) of a known imbalanced 4-rank
# program (tests/mpi/report_imb.c: rank r computes (r+1) x 50 ms before
# each of 10 MPI_Allreduce calls, then a ring of MPI_Sendrecv), with the
# transfer matrices on:
# - the first 25 lines of stderr name the main waiting call path
#   (exchange;MPI_Allreduce), and the first line the measured largest cause:
#   rank 3, whose computation made ranks 0-2 wait (3.0 s nominal; the
#   time they timed in the calls, +-15%);
#   seconds per state come before the run line and agree with the truth;
#   report.txt opens with the same and keeps the meta's key=value lines
#   after its tables;
# - report.json validates against doc/report.schema.json;
# - the report's numbers equal the per-rank files' (tests/report_check.py
#   consistency) and match the injected truth (... truth): events per rank,
#   time in the call per rank within 5% or 20 ms, rank 0's estimated wait
#   within 10% + 30 ms, the imbalance, bytes sent and the matrices;
# - every CSV the run wrote (ranks.csv, the six mpi_*.csv tables, the three
#   matrices) reads with Python's csv module as it is: its first line is a
#   header row naming each column, every row has as many fields as the
#   header and one row per rank; report.json's csv_files names these ten
#   files with format waitprof-csv 2 (tests/report_check.py csvs);
# - an undocumented field in report.json fails the schema;
# - the folded files pass the parsing rules of flamegraph.pl, inferno and
#   speedscope;
# - `waitprof report DIR` regenerates the same outputs; --ranks, --state
#   stall, --top and --diff do what they say.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/report_imb
out=$WP_TMP/run
check() { "$PYTHON" "$WP_SRCDIR/tests/report_check.py" "$@" || wp_fail "report_check.py $1 failed"; }
# All 10 iterations are imbalanced (report_imb.c, BALANCED 0): the waiting
# ranks never make an MPI_Allreduce that does not wait, so on an MPI without
# a stall source their samples are MPI-Stall only through the global minimum
# (held samples, sampler/store.h).  With the per-rank minimum instead, the
# main waiting path was left to chance on MPICH (ring;MPI_Sendrecv with 0.4 %
# of the samples), which a balanced first iteration used to hide.
WAITPROF_MATRIX=1 wp_profile 4 "$out" "$prog" 0.05 10 0 >"$WP_TMP/truth" 2>"$WP_TMP/err" ||
    { cat "$WP_TMP/err" >&2; wp_fail "the profiled run failed"; }
head -n 25 "$WP_TMP/err" >"$WP_TMP/err25"
grep -A1 "^main waiting call path" "$WP_TMP/err25" | grep -q "exchange;MPI_Allreduce$" ||
    { cat "$WP_TMP/err" >&2; wp_fail "the first 25 lines of stderr do not name exchange;MPI_Allreduce as the main waiting call path"; }
grep -q "^waitprof report: largest cause: rank [0-2] waited .* in MPI_Allreduce .* because rank 3 computed longer in " \
    "$WP_TMP/err25" ||
    { cat "$WP_TMP/err" >&2; wp_fail "the first line of the report on stderr does not name rank 3 as the largest cause"; }
# The first screen: seconds per state before the run line, and they agree
# with the truth: Not-in-MPI summed over the ranks with the compute the
# ranks timed, MPI-Work + MPI-Stall with their MPI_Allreduce time (the ring
# and MPI_Init add a little), each within 15% + 0.3 s.
"$PYTHON" - "$WP_TMP/err25" "$WP_TMP/truth" <<'PY' || { cat "$WP_TMP/err25" >&2; wp_fail "the first screen's seconds per state do not match the truth"; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
truth = [dict(kv.split("=") for kv in l.split()[1:]) for l in open(sys.argv[2]) if l.startswith("truth ")]
comp = sum(float(t["compute"]) for t in truth)
allr = sum(float(t["allreduce"]) for t in truth)
secs = {}
for i, l in enumerate(lines):
    m = re.match(r"^(Not-in-MPI|MPI-Work|MPI-Stall) +([0-9.]+) +([0-9.]+) +[0-9.]+%", l)
    if m:
        secs[m.group(1)] = (i, float(m.group(2)), float(m.group(3)))
run = [i for i, l in enumerate(lines) if l.startswith("run: ")]
ok = len(secs) == 3 and run and max(v[0] for v in secs.values()) < run[0]
nim = secs.get("Not-in-MPI", (0, 0, 0))[1]
mpi = secs.get("MPI-Work", (0, 0, 0))[1] + secs.get("MPI-Stall", (0, 0, 0))[1]
print("[t_report] first screen: Not-in-MPI %.3f s (truth %.3f), MPI %.3f s (truth %.3f)" % (nim, comp, mpi, allr))
ok = ok and abs(nim - comp) <= 0.15 * comp + 0.3 and abs(mpi - allr) <= 0.15 * allr + 0.3
sys.exit(0 if ok else 1)
PY
# report.txt: the same first section; the meta files' key=value lines only
# after every table.
awk '/^== ranks by/ { t = 1 } /^[a-z_]+=/ && !t { bad = 1 } END { exit bad }' "$out/report.txt" ||
    wp_fail "report.txt has settings or counters (key=value) before its tables"
sed -n '4,12p' "$out/report.txt" | grep -q '^MPI-Stall  *[0-9.][0-9.]*  *[0-9.][0-9.]* ' ||
    wp_fail "report.txt's first section has no seconds per state"
# The measured cause (match/match.h): rank 3 made ranks 0, 1 and 2 wait
# 0.15 + 0.10 + 0.05 s in each of the 10 MPI_Allreduce calls, 3.0 s in all
# on a machine with a core per rank.  With 4 ranks on 2 cores the waits are
# what the ranks timed, so the truth is the time ranks 0-2 spent in the
# MPI_Allreduce calls (their truth lines), within 15%.
"$PYTHON" - "$out/report.json" "$WP_TMP/truth" <<'PY' || wp_fail "report.json causes: rank 3 is not the largest cause with the waits of ranks 0-2 +-15%"
import json, sys
c = json.load(open(sys.argv[1]))["causes"]
truth = [dict(kv.split("=") for kv in l.split()[1:]) for l in open(sys.argv[2]) if l.startswith("truth ")]
waited = sum(float(t["allreduce"]) for t in truth if t["rank"] != "3")
# A cause is a (rank, call path): rank 3's samples in work() and in the
# clock_gettime it calls are two paths.
mine = [x for x in c if x["rank"] == 3]
total = sum(x["short_term_s"] for x in mine)
print("[t_report] largest cause: rank %d, path %s; rank 3's causes: %s, %.3f s in all; ranks 0-2 timed %.3f s"
      % (c[0]["rank"], c[0]["path"], [x["path"] for x in mine], total, waited))
ok = c and c[0]["rank"] == 3 and abs(total - waited) <= 0.15 * waited and \
    sorted({w["rank"] for x in mine for w in x["waits"] if w["function"] == "MPI_Allreduce"}) == [0, 1, 2]
sys.exit(0 if ok else 1)
PY
wp_note "stderr: $(grep -A2 '^main waiting' "$WP_TMP/err25" | tr '\n' ' ')"
[ "$(head -n 1 "$out/report.txt")" = "waitprof-report 1" ] || wp_fail "report.txt: first line is not the format"
"$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$out/report.json" ||
    wp_fail "report.json does not validate against doc/report.schema.json"
# The schema is strict: a field it does not name fails, at the top and
# nested (additionalProperties false).
"$PYTHON" - "$out/report.json" "$WP_TMP" <<'PY' || wp_fail "could not write the altered report.json copies"
import json, sys
j = json.load(open(sys.argv[1]))
a = json.loads(json.dumps(j)); a["undocumented"] = 1
b = json.loads(json.dumps(j)); b["run"]["undocumented"] = 1
c = json.loads(json.dumps(j)); c["csv_files"]["ranks.csv"]["undocumented"] = 1
for name, x in (("top", a), ("run", b), ("csv", c)):
    json.dump(x, open("%s/extra-%s.json" % (sys.argv[2], name), "w"))
PY
for x in top run csv; do
    "$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$WP_TMP/extra-$x.json" \
        2>/dev/null && wp_fail "report.json with an undocumented field ($x) validates against doc/report.schema.json"
done
check csvs "$out" 10
check consistency "$out"
check truth "$out" "$WP_TMP/truth" 4
check foldtools "$out/all.folded" "$out/all.diff.folded"
wp_folded check "$out/all.folded" || wp_fail "all.folded breaks the folded rules"

# The report tool regenerates the same outputs from the same files.
tool=$WP_BUILDDIR/bin/waitprof
mkdir "$WP_TMP/again"
"$tool" report --quiet --out "$WP_TMP/again" "$out" || wp_fail "waitprof report exited with $?"
for f in all.folded all.diff.folded report.json report.txt ranks.csv mpi_time.csv matrix_size.csv summary.txt; do
    cmp -s "$out/$f" "$WP_TMP/again/$f" || wp_fail "waitprof report wrote a different $f than rank 0 did"
done
# Filters.
mkdir "$WP_TMP/f1" "$WP_TMP/f2"
"$tool" report --quiet --ranks 0-1 --top 1 --out "$WP_TMP/f1" "$out" || wp_fail "--ranks 0-1 failed"
[ "$(tail -n +2 "$WP_TMP/f1/ranks.csv" | cut -d, -f1 | tr '\n' ' ')" = "0 1 " ] ||
    wp_fail "--ranks 0-1: ranks.csv lists $(tail -n +2 "$WP_TMP/f1/ranks.csv" | cut -d, -f1 | tr '\n' ' ')"
"$PYTHON" - "$WP_TMP/f1/report.json" <<'PY' || wp_fail "--top 1 / --ranks 0-1 not applied to report.json"
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["top_stall_paths"]) == 1, j["top_stall_paths"]
assert [r["rank"] for r in j["ranks"]] == [0, 1]
assert j["filters"] == {"ranks": "0-1", "state": "all", "top": 1}
PY
"$tool" report --quiet --state stall --out "$WP_TMP/f2" "$out" || wp_fail "--state stall failed"
cut -d';' -f1 "$WP_TMP/f2/all.folded" | sort -u | grep -qv '^MPI-Stall$' && wp_fail "--state stall: all.folded has other states"
stall=$(wp_folded sum "$out/all.folded" --state MPI-Stall)
[ "$(wp_folded sum "$WP_TMP/f2/all.folded")" = "$stall" ] || wp_fail "--state stall: not every stall sample kept"
# --diff: B is the same run without ranks 0-2, so the Allreduce path lost stall.
mkdir "$WP_TMP/b"
cp "$out"/rank.3.* "$WP_TMP/b/"
"$tool" report --diff "$out" "$WP_TMP/b" --out "$WP_TMP/diff.folded" >"$WP_TMP/diff.txt" || wp_fail "--diff failed"
grep -q " lost .*exchange;MPI_Allreduce$" "$WP_TMP/diff.txt" || { cat "$WP_TMP/diff.txt"; wp_fail "--diff does not say exchange;MPI_Allreduce lost stall"; }
cp "$WP_TMP/diff.folded" "$WP_TMP/d.diff.folded"
check foldtools "$WP_TMP/d.diff.folded"
wp_note "report, tool, filters and diff agree with the per-rank files and the truth"
