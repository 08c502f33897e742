#!/bin/sh
# doc/report.md and doc/example/ are what this build's `waitprof report`
# writes for the example run kept in doc/example/run (doc/gen_report_doc.py
# --check): the first screen, report.txt, the flame graph, the timeline and
# every figure the page quotes.  A change of the report that leaves the
# page behind fails here until `make doc-example` (a new run) or the
# generator (the same run) brings it up to date.  The check itself must
# fail on a stale copy: a changed line of the stored report.txt, and a
# changed figure in the page's text.
. "$(dirname "$0")/../lib.sh"
gen=$WP_SRCDIR/doc/gen_report_doc.py
"$PYTHON" "$gen" --check "$WP_LAUNCHER" "$WP_SRCDIR/doc" ||
    wp_fail "doc/report.md or doc/example/ is stale (see above): run 'make doc-example' and commit doc/"
cp -R "$WP_SRCDIR/doc" "$WP_TMP/doc"
echo "an old line" >>"$WP_TMP/doc/example/stencil-report.txt"
"$PYTHON" "$gen" --check "$WP_LAUNCHER" "$WP_TMP/doc" 2>"$WP_TMP/err" &&
    wp_fail "--check passed with a changed doc/example/stencil-report.txt"
grep -q "stencil-report.txt is stale" "$WP_TMP/err" || { cat "$WP_TMP/err" >&2; wp_fail "--check did not name the stale file"; }
rm -rf "$WP_TMP/doc" && cp -R "$WP_SRCDIR/doc" "$WP_TMP/doc"
sed -i 's/<!-- v:samples -->[^<]*<!-- \/v -->/<!-- v:samples -->12345678<!-- \/v -->/' "$WP_TMP/doc/report.md"
grep -q 'v:samples -->12345678' "$WP_TMP/doc/report.md" || wp_fail "doc/report.md quotes no sample count"
"$PYTHON" "$gen" --check "$WP_LAUNCHER" "$WP_TMP/doc" 2>/dev/null &&
    wp_fail "--check passed with a changed figure in doc/report.md"
wp_note "doc/report.md and doc/example/ match the report of doc/example/run"
