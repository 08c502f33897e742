#!/bin/sh
# The per-rank timeline (rank.R.timeline, report.json "timeline",
# timeline.svg) of tests/mpi/timeline on 4 ranks: in phase A the late rank
# (3) computes for 0.6 s while the others wait in MPI_Allreduce, in phase B
# the others compute while it waits in MPI_Recv.  Inside each phase (0.12 s
# from its ends) report.json's bins and the pixels of a headless Chromium
# screenshot of timeline.svg show the late rank's row Not-in-MPI in A and
# MPI-Stall in B, and the other rows the reverse; the waiting bins name
# the waiting call.  The Allreduce waits are MPI-Stall through the global
# minimum on both MPIs (held samples); the MPI_Recv wait through the MPI_T
# source on Open MPI and through matched instances on MPICH.  Each rank's
# timeline holds its folded file's samples per state (within 2 + 2%).  Then with
# WAITPROF_RANKS=1,3 only ranks 1 and 3 appear, in the JSON and as rows.
# Skips (77) only when chromium is not installed, like t_report_svg.sh.
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null 2>&1 || wp_skip "chromium is not installed (./quickstart check installs it)"
prog=$WP_BUILDDIR/tests/mpi/timeline
check() { "$PYTHON" "$WP_SRCDIR/tests/report_check.py" "$@"; }

out=$WP_TMP/run
wp_profile 4 "$out" "$prog" 0.6 >"$WP_TMP/truth" 2>"$WP_TMP/err" || { cat "$WP_TMP/err" >&2; wp_fail "the profiled run failed"; }
for r in 0 1 2 3; do
    head -n 1 "$out/rank.$r.timeline" | grep -q '^# waitprof-timeline 1$' || wp_fail "rank.$r.timeline: no format line"
done
grep -q '<script' "$out/timeline.svg" && wp_fail "timeline.svg has a script"
grep -q '<title>rank 3, .*MPI-Stall' "$out/timeline.svg" || wp_fail "timeline.svg has no tooltips"
check timeline-totals "$out" || wp_fail "the timelines do not classify the samples as the profiles do"
check timeline "$out/report.json" "$WP_TMP/truth" || wp_fail "report.json's timeline does not show the phases"
wp_shot "$out/timeline.svg" "$WP_TMP/shot.png"
check png-timeline "$WP_TMP/shot.png" "$out/timeline.svg" "$WP_TMP/truth" || wp_fail "the screenshot does not show the phases"

sel=$WP_TMP/sel
WAITPROF_RANKS=1,3 wp_profile 4 "$sel" "$prog" 0.5 >"$WP_TMP/truth.sel" 2>"$WP_TMP/err" ||
    { cat "$WP_TMP/err" >&2; wp_fail "the profiled run with WAITPROF_RANKS failed"; }
ranks=$("$PYTHON" -c 'import json, sys; print(",".join(str(r["rank"]) for r in json.load(open(sys.argv[1]))["timeline"]["ranks"]))' "$sel/report.json")
[ "$ranks" = "1,3" ] || wp_fail "WAITPROF_RANKS=1,3: report.json's timeline has ranks $ranks"
rows=$(sed -n 's/.*<g class="row" data-rank="\([0-9]*\)".*/\1/p' "$sel/timeline.svg" | tr '\n' ',')
[ "$rows" = "1,3," ] || wp_fail "WAITPROF_RANKS=1,3: timeline.svg has rows for ranks $rows"
check timeline "$sel/report.json" "$WP_TMP/truth.sel" || wp_fail "WAITPROF_RANKS=1,3: the timeline does not show the phases"
wp_shot "$sel/timeline.svg" "$WP_TMP/sel.png"
check png-timeline "$WP_TMP/sel.png" "$sel/timeline.svg" "$WP_TMP/truth.sel" || wp_fail "WAITPROF_RANKS=1,3: the screenshot does not show the phases"
wp_note "the timeline shows both phases in report.json and in Chromium, with all ranks and with ranks 1,3"
