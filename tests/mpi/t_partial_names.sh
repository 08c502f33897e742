#!/bin/sh
# A partial profile left by SIGTERM shows function names after
# `waitprof report` (symbols/offline.h): 2 ranks of a position-independent
# program that computes in partial_crunch() are killed mid-run; their
# rank.R.folded hold module+0xOFFSET frames and no name; the report names
# them, at least half of the samples under partial_crunch, with the same
# call path a complete run of the program writes, keeps the raw text in
# rank.R.folded.partial-raw, marks the run partial, and a second report
# changes nothing.  Then a copy of the program that is deleted before the
# report: one line names it, its frames stay module+offset, the report is
# still written.
# The killed run also counts task-clock (WAITPROF_COUNTERS): each rank
# leaves rank.R.task-clock.folded with the same raw frames (its meta says
# counters=task-clock:ns:perf_event), the report names them as it names rank.R.folded,
# keeps the raw text, and merges all.task-clock.folded with most of the
# CPU time under partial_crunch.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/partial_names

# killed_run OUT PROGRAM: 2 ranks, SIGTERM to the launcher after 1.5 s of
# computing (as t_killed.sh signals it: not through timeout's group).
killed_run() {
    out=$1 exe=$2
    case $MPI_FLAVOR in
    openmpi)
        WAITPROF_OUT=$out timeout -k 10 60 "$MPIEXEC" --allow-run-as-root --oversubscribe \
            --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
            -np 2 "$WP_LAUNCHER" "$exe" run >"$WP_TMP/stdout" 2>&1 & ;;
    *)
        WAITPROF_OUT=$out timeout -k 10 60 "$MPIEXEC" -n 2 "$WP_LAUNCHER" "$exe" run >"$WP_TMP/stdout" 2>&1 & ;;
    esac
    pid=$!
    i=0
    while [ "$(cat "$WP_TMP/stdout" 2>/dev/null | grep -c '^ready')" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ $i -lt 300 ] || wp_fail "the ranks did not start: $(cat "$WP_TMP/stdout")"
    sleep 1.5
    launcher=$(pgrep -P "$pid" | head -n 1)
    [ -n "$launcher" ] || wp_fail "launcher process not found"
    kill -TERM "$launcher"
    wait "$pid"
    for r in 0 1; do
        case $(wp_meta "$out/rank.$r.meta" status) in
        partial*SIGTERM*) ;;
        *) wp_fail "rank $r did not write its profile at SIGTERM: $(wp_meta "$out/rank.$r.meta" status)" ;;
        esac
        [ -s "$out/rank.$r.modules" ] || wp_fail "rank $r wrote no rank.$r.modules"
    done
}

# The weight of a folded file's lines with a frame of the program left as
# partial_names+0xOFFSET.  A PLT stub (the jump partial_crunch makes to
# clock_gettime through .plt), which no symbol table covers, is named
# clock_gettime@plt by both symbolizers (symbols/dwname.h, wp_dw_pltname):
# a sample that lands on it kept its raw frame before (once seen: 1 of 264
# samples, in a run of the whole suite).
raw_frames() {
    awk '/partial_names\+0x[0-9a-f]/ { s += $NF } END { print s + 0 }' "$1"
}
# The call path down to partial_crunch with the most samples in a folded file.
crunch_path() {
    sed -n 's/^\(.*;partial_crunch\)\(;.*\)\{0,1\} \([0-9]*\)$/\3 \1/p' "$1" |
        awk '{ s[$2] += $1 } END { for (p in s) print s[p], p }' | sort -rn | head -n 1 | cut -d' ' -f2
}

# --- a complete run: the names the partial one must agree with ----------------
wp_profile 2 "$WP_TMP/full" "$prog" 1.5 >"$WP_TMP/full.out" 2>&1 || wp_fail "complete run failed: $(cat "$WP_TMP/full.out")"
full_path=$(crunch_path "$WP_TMP/full/rank.0.folded")
[ -n "$full_path" ] || wp_fail "the complete run has no stack through partial_crunch"

# --- killed, then named afterwards --------------------------------------------
out=$WP_TMP/part
WAITPROF_COUNTERS=task-clock killed_run "$out" "$prog"
for r in 0 1; do
    f=$out/rank.$r.folded
    grep -q 'partial_names+0x' "$f" || wp_fail "rank $r: no partial_names+0x frame before the report: $(head -n 3 "$f")"
    ! grep -q 'partial_crunch' "$f" || wp_fail "rank $r: names before the report"
    cp "$f" "$WP_TMP/raw.$r"
    c=$out/rank.$r.task-clock.folded
    [ "$(wp_meta "$out/rank.$r.meta" counters)" = task-clock:ns:perf_event ] ||
        wp_fail "rank $r: meta counters= is '$(wp_meta "$out/rank.$r.meta" counters)', expected task-clock:ns:perf_event"
    [ -s "$c" ] || wp_fail "rank $r: no rank.$r.task-clock.folded after SIGTERM"
    grep -q 'partial_names+0x' "$c" || wp_fail "rank $r: no raw frame in rank.$r.task-clock.folded: $(head -n 3 "$c")"
    cp "$c" "$WP_TMP/rawc.$r"
done
"$WP_LAUNCHER" report "$out" >"$WP_TMP/report.out" 2>"$WP_TMP/report.err"
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || wp_fail "waitprof report exited with $rc: $(cat "$WP_TMP/report.err")"
[ -s "$out/report.txt" ] || wp_fail "no report.txt"
grep -qi 'partial' "$out/report.txt" || wp_fail "report.txt does not mark the run partial"
! grep -q 'is gone\|changed since\|cannot' "$WP_TMP/report.err" || wp_fail "unexpected: $(cat "$WP_TMP/report.err")"
for r in 0 1; do
    f=$out/rank.$r.folded
    wp_folded check "$f" || wp_fail "rank $r: folded format after naming"
    cmp -s "$f.partial-raw" "$WP_TMP/raw.$r" || wp_fail "rank $r: rank.$r.folded.partial-raw is not the original"
    all=$(wp_folded sum "$f")
    named=$(wp_folded sum "$f" --path ';partial_crunch(;|$)')
    raw=$(raw_frames "$f")
    share=$(wp_calc "100 * $named / $all")
    wp_note "rank $r: $named of $all samples under partial_crunch ($share %), $raw still raw in the program"
    wp_ge "$share" 50 || wp_fail "rank $r: only $share % of the samples under partial_crunch"
    [ "$raw" = 0 ] || wp_fail "rank $r: $raw samples still have raw frames of the program"
    [ "$(wp_folded sum "$f")" = "$(wp_folded sum "$f.partial-raw")" ] || wp_fail "rank $r: samples lost in naming"
done
for r in 0 1; do
    c=$out/rank.$r.task-clock.folded
    wp_folded check "$c" || wp_fail "rank $r: task-clock folded format after naming"
    cmp -s "$c.partial-raw" "$WP_TMP/rawc.$r" || wp_fail "rank $r: rank.$r.task-clock.folded.partial-raw is not the original"
    all=$(wp_folded sum "$c")
    named=$(wp_folded sum "$c" --path ';partial_crunch(;|$)')
    raw=$(raw_frames "$c")
    share=$(wp_calc "100 * $named / $all")
    wp_note "rank $r: task-clock $named of $all ns under partial_crunch ($share %), $raw ns still raw in the program"
    wp_ge "$share" 50 || wp_fail "rank $r: only $share % of the task-clock under partial_crunch"
    [ "$raw" = 0 ] || wp_fail "rank $r: $raw ns of task-clock still have raw frames of the program"
    [ "$all" = "$(wp_folded sum "$c.partial-raw")" ] || wp_fail "rank $r: task-clock lost in naming"
done
[ -s "$out/all.task-clock.folded" ] || wp_fail "the report merged no all.task-clock.folded"
[ "$(wp_folded sum "$out/all.task-clock.folded")" = \
  "$(( $(wp_folded sum "$out/rank.0.task-clock.folded") + $(wp_folded sum "$out/rank.1.task-clock.folded") ))" ] ||
    wp_fail "all.task-clock.folded is not the sum of the ranks' files"
part_path=$(crunch_path "$out/rank.0.folded")
[ "$part_path" = "$full_path" ] || wp_fail "named '$part_path', a complete run names '$full_path'"
wp_note "call path: $part_path (as a complete run)"
# A second report changes nothing.
cp "$out/rank.0.folded" "$WP_TMP/named.0"
"$WP_LAUNCHER" report --quiet "$out" >/dev/null 2>"$WP_TMP/report2.err"
cmp -s "$out/rank.0.folded" "$WP_TMP/named.0" || wp_fail "a second report changed rank.0.folded"
cmp -s "$out/rank.0.folded.partial-raw" "$WP_TMP/raw.0" || wp_fail "a second report changed the raw copy"

# --- the program is gone by the time of the report ----------------------------
mkdir -p "$WP_TMP/bin"
copy=$WP_TMP/bin/partial_copy
cp "$prog" "$copy"
out=$WP_TMP/gone
killed_run "$out" "$copy"
rm -f "$copy"
"$WP_LAUNCHER" report "$out" >"$WP_TMP/report.out" 2>"$WP_TMP/report.err"
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || wp_fail "waitprof report (program gone) exited with $rc: $(cat "$WP_TMP/report.err")"
[ -s "$out/report.txt" ] || wp_fail "no report.txt with the program gone"
[ "$(grep -c 'is gone' "$WP_TMP/report.err")" = 1 ] || wp_fail "not one 'is gone' line: $(cat "$WP_TMP/report.err")"
line=$(grep 'is gone' "$WP_TMP/report.err")
case $line in
"waitprof report: $copy is gone; its "*" samples stay module+offset") ;;
*) wp_fail "the line does not name the program: $line" ;;
esac
grep -q 'partial_copy+0x' "$out/rank.0.folded" || wp_fail "the deleted program's frames did not stay module+offset"
wp_note "$line"
