#!/bin/sh
# The flame graph (all.svg) of a 4-rank run of tests/mpi/report_imb rendered
# by headless Chromium: the screenshot is not blank and shows the three state
# colours of report/svg.c over more than their legend swatches (MPI-Stall
# red, Not-in-MPI green, MPI-Work blue); the MPI-Stall-only flame graph of
# `waitprof report --state stall` is mostly red.  Skips (77) only when chromium is
# not installed; ./quickstart installs it and counts a skip as a failure.
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null 2>&1 || wp_skip "chromium is not installed (./quickstart check installs it)"
prog=$WP_BUILDDIR/tests/mpi/report_imb
out=$WP_TMP/run
# Every iteration is imbalanced (no balanced one, report_imb.c): the waiting
# ranks never make an MPI_Allreduce that does not wait, so on an MPI without
# a stall source their samples are MPI-Stall only through the global minimum
# (held samples, sampler/store.h).
wp_profile 4 "$out" "$prog" 0.05 6 0 >/dev/null 2>"$WP_TMP/err" || { cat "$WP_TMP/err" >&2; wp_fail "the profiled run failed"; }
grep -q '<script' "$out/all.svg" && grep -q 'src=' "$out/all.svg" && wp_fail "all.svg loads an external script"
grep -q '<title>.*stall share' "$out/all.svg" || wp_fail "all.svg frames have no stall share in their tooltips"
wp_shot "$out/all.svg" "$WP_TMP/shot.png"
"$PYTHON" "$WP_SRCDIR/tests/report_check.py" png "$WP_TMP/shot.png" || wp_fail "the screenshot does not show the flame graph"
mkdir "$WP_TMP/stall"
"$WP_BUILDDIR/bin/waitprof" report --quiet --state stall --out "$WP_TMP/stall" "$out" || wp_fail "waitprof report --state stall failed"
wp_shot "$WP_TMP/stall/all.svg" "$WP_TMP/stall.png"
"$PYTHON" "$WP_SRCDIR/tests/report_check.py" png-stall "$WP_TMP/stall.png" || wp_fail "the MPI-Stall flame graph is not red"
