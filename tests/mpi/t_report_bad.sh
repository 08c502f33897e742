#!/bin/sh
# `waitprof report` on a directory with damaged files: a 2-rank run of
# tests/mpi/report_imb, then copies of its directory with one file
# truncated in the middle of a line, one corrupted, one foreign (binary),
# one of a newer format version, one missing.  Each time: one clear line on
# stderr naming the file (its path), exit status 1, and every output still written from
# the rest (report.txt lists the problem; the undamaged rank's figures are
# those of the intact run).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/report_imb
tool=$WP_BUILDDIR/bin/waitprof
out=$WP_TMP/run
wp_profile 2 "$out" "$prog" 0.02 4 >/dev/null 2>"$WP_TMP/err" || { cat "$WP_TMP/err" >&2; wp_fail "the profiled run failed"; }
for f in rank.0.meta rank.0.folded rank.0.calls rank.0.waits rank.1.folded rank.1.calls; do
    [ -s "$out/$f" ] || wp_fail "the run left no $f"
done

# damage NAME FILE MESSAGE-REGEX COMMAND: copy the run, apply COMMAND to FILE
# in the copy, run the tool and check its answer.
damage() {
    name=$1 file=$2 re=$3; shift 3
    d=$WP_TMP/$name
    rm -rf "$d"; cp -r "$out" "$d"
    ( cd "$d" && eval "$*" ) || wp_fail "$name: could not damage $file"
    rm -f "$d"/report.* "$d"/all.* "$d"/*.csv "$d"/summary.txt
    rc=0
    "$tool" report --quiet "$d" 2>"$d.err" || rc=$?
    [ "$rc" -eq 1 ] || { cat "$d.err" >&2; wp_fail "$name: exit status $rc, expected 1"; }
    grep -q "^waitprof report: $d/$file: $re" "$d.err" || { cat "$d.err" >&2; wp_fail "$name: no line naming $file ($re)"; }
    for o in report.txt report.json all.folded all.svg ranks.csv mpi_time.csv summary.txt; do
        [ -s "$d/$o" ] || wp_fail "$name: $o not written"
    done
    sed -n '/^== problems/,$p' "$d/report.txt" | grep -q "$file" || wp_fail "$name: report.txt does not list the problem"
    "$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$d/report.json" ||
        wp_fail "$name: report.json does not validate"
    wp_note "$name: $(head -n 1 "$d.err")"
}
# Rank 0's state counts must survive damage to rank 1's files.
r0() { sed -n 's/^0,[a-z]*,//p' "$1/ranks.csv" | cut -d, -f1-4; }
sz=$(wc -c <"$out/rank.1.folded")
damage truncated rank.1.folded "truncated" "head -c $((sz - 3)) rank.1.folded >t && mv t rank.1.folded"
[ "$(r0 "$WP_TMP/truncated")" = "$(r0 "$out")" ] || wp_fail "truncated: rank 0's figures changed"
damage corrupted rank.1.calls "1 line(s) are malformed (corrupted), the first is line 3" "sed -i '3s/\t[0-9]*\t/\tx1y\t/' rank.1.calls"
damage corrupted-folded rank.1.folded "1 line(s) are not .*the first is line 1" "sed -i '1i MPI-Stall;main;f many' rank.1.folded"
damage foreign rank.1.waits "not a waitprof waits file" "head -c 3000 /bin/sh >rank.1.waits"
damage foreign-folded rank.1.folded "not a folded-stack file" "head -c 3000 /bin/sh >rank.1.folded"
damage newer rank.1.meta "format waitprof-meta 9 is newer" "sed -i '1s/.*/format=waitprof-meta 9/' rank.1.meta"
damage missing rank.1.meta "missing" "rm rank.1.meta"
[ "$(r0 "$WP_TMP/missing")" = "$(r0 "$out")" ] || wp_fail "missing: rank 0's figures changed"
# Nothing readable at all: a clear message, status 2.
mkdir "$WP_TMP/empty"
rc=0; "$tool" report "$WP_TMP/empty" 2>"$WP_TMP/empty.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "holds no rank.R.meta" "$WP_TMP/empty.err" || wp_fail "empty directory: status $rc, $(cat "$WP_TMP/empty.err")"
wp_note "every damaged file named, every output still written"
