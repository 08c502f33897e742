#!/bin/sh
# WAITPROF_COUNTERS with PAPI names (sampler/ctr_papi.c, sampler/counters.c),
# WAITPROF_COUNTERS=perf::TASK-CLOCK,PAPI_TOT_INS on the counters program
# (rank 1 computes in counted_work for a CPU time it measures), every rank
# returning status 3.  What to expect is found without waitprof, by
# tests/mpi/ctr_probe (which links libpapi itself):
# - perf::TASK-CLOCK: where PAPI offers it, PAPI counts it (meta says papi)
#   and nothing is printed about it; where it does not (PAPI not built, or
#   it offers no event, as on a machine without a hardware PMU), exactly
#   one line says what PAPI lacked and that task-clock counted it with
#   Linux perf_event (meta says perf_event).  Either way the file keeps the
#   user's name (rank.R.perf::TASK-CLOCK.folded), its unit is ns in
#   report.json, and its count under counted_work is within 5 % of the CPU
#   time rank 1 measured;
# - PAPI_TOT_INS: counted by PAPI where it offers it, else by perf_event's
#   instructions with one line where there is a PMU, else exactly one line
#   saying it is not counted, and no file for it;
# - no other WAITPROF_COUNTERS line, and the program's status 3 is the
#   launcher's;
# - where PAPI is built but libpapi cannot be loaded (the file hidden by
#   an empty one in a private mount namespace, as root), perf::TASK-CLOCK
#   is counted by task-clock with exactly one line saying PAPI cannot be
#   loaded.
. "$(dirname "$0")/../lib.sh"
[ -r /proc/sys/kernel/perf_event_paranoid ] || wp_skip "no perf_event on this system"
"$WP_BUILDDIR/tests/mpi/ctr_probe" >"$WP_TMP/probe" || wp_fail "ctr_probe failed"
probe() { sed -n "s/^$1=//p" "$WP_TMP/probe" | head -n 1; }
wp_note "probe: $(tr '\n' ' ' <"$WP_TMP/probe")"
[ "$(probe perf_task-clock)" = 1 ] || wp_skip "perf_event_open refuses task-clock here ($(probe perf_task-clock_error))"
papi_tc=$(probe papi_perf::TASK-CLOCK); papi_ins=$(probe papi_PAPI_TOT_INS)

out=$WP_TMP/out
rc=0
WAITPROF_HZ=200 WAITPROF_COUNTERS=perf::TASK-CLOCK,PAPI_TOT_INS \
    wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/counters" 0.6 0 3 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || rc=$?
cat "$WP_TMP/stderr" >&2
[ "$rc" = 3 ] || wp_fail "the launcher returned $rc, the program returns 3"
[ -s "$out/report.json" ] || wp_fail "no report"
nlines=$(grep -c '^waitprof: WAITPROF_COUNTERS' "$WP_TMP/stderr")

# perf::TASK-CLOCK
tc_lines=$(grep -c 'perf::TASK-CLOCK' "$WP_TMP/stderr")
backend=$(wp_meta_counter "$out/rank.1.meta" perf::TASK-CLOCK)
if [ "$papi_tc" = 1 ]; then
    [ "$tc_lines" = 0 ] || wp_fail "PAPI offers perf::TASK-CLOCK, yet $tc_lines line(s) speak of it"
    [ "$backend" = "ns papi" ] || wp_fail "rank.1.meta gives perf::TASK-CLOCK '$backend', expected PAPI to count it"
    want_lines=0
else
    [ "$tc_lines" = 1 ] || wp_fail "$tc_lines lines speak of perf::TASK-CLOCK, expected exactly one"
    if [ "$(probe papi_built)" = 1 ] && [ "$(probe papi_started)" != 1 ]; then
        why="perf::TASK-CLOCK is a PAPI name, and PAPI did not start"
    elif [ "$(probe papi_built)" = 1 ]; then
        why="PAPI [0-9.]* offers no event perf::TASK-CLOCK here ($(probe papi_events) events available"
    else
        why="perf::TASK-CLOCK is a PAPI name, and this waitprof was built without PAPI"
    fi
    grep -q "^waitprof: WAITPROF_COUNTERS: $why.*; counted task-clock with Linux perf_event instead\$" \
        "$WP_TMP/stderr" || wp_fail "the perf::TASK-CLOCK line does not say '$why ...; counted task-clock with Linux perf_event instead'"
    [ "$backend" = "ns perf_event" ] ||
        wp_fail "rank.1.meta gives perf::TASK-CLOCK '$backend', expected perf_event to count it"
    want_lines=1
fi
wp_note "perf::TASK-CLOCK counted by ${backend##* }"
for f in "$out/rank.0.perf::TASK-CLOCK.folded" "$out/rank.1.perf::TASK-CLOCK.folded" \
    "$out/all.perf::TASK-CLOCK.folded"; do
    [ -s "$f" ] || wp_fail "$(basename "$f") missing or empty"
done
wp_folded check "$out"/rank.*.perf::TASK-CLOCK.folded "$out/all.perf::TASK-CLOCK.folded" || wp_fail "folded format"
truth=$(wp_truth "$WP_TMP/stdout" 1 cpu_ns)
[ -n "$truth" ] || wp_fail "no truth line from rank 1"
got=$(wp_folded sum "$out/all.perf::TASK-CLOCK.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
wp_check_between "perf::TASK-CLOCK (ns) under Not-in-MPI;...;counted_work, rank 1 measured $truth ns" "$got" \
    "$(wp_calc "$truth * 0.95")" "$(wp_calc "$truth * 1.05")"
"$PYTHON" - "$out" <<'PY' || wp_fail "report.json does not give perf::TASK-CLOCK in ns"
import json, sys
j = json.load(open(sys.argv[1] + "/report.json"))
ev = {c["event"]: c for c in j["counters"]}
assert ev["perf::TASK-CLOCK"]["unit"] == "ns", ev["perf::TASK-CLOCK"]
PY

# PAPI_TOT_INS
ins_lines=$(grep -c 'PAPI_TOT_INS' "$WP_TMP/stderr")
if [ "$papi_ins" = 1 ] || [ "$(probe perf_instructions)" = 1 ]; then
    if [ "$papi_ins" = 1 ]; then
        [ "$ins_lines" = 0 ] || wp_fail "PAPI offers PAPI_TOT_INS, yet $ins_lines line(s) speak of it"
        want="events papi"
    else
        [ "$ins_lines" = 1 ] || wp_fail "$ins_lines lines speak of PAPI_TOT_INS, expected one (counted by perf)"
        grep -q 'PAPI_TOT_INS.*; counted instructions with Linux perf_event instead$' "$WP_TMP/stderr" ||
            wp_fail "the PAPI_TOT_INS line does not say instructions counted it"
        want="events perf_event"
        want_lines=$((want_lines + 1))
    fi
    [ "$(wp_meta_counter "$out/rank.1.meta" PAPI_TOT_INS)" = "$want" ] ||
        wp_fail "rank.1.meta gives PAPI_TOT_INS '$(wp_meta_counter "$out/rank.1.meta" PAPI_TOT_INS)', expected $want"
    ins=$(wp_folded sum "$out/rank.1.PAPI_TOT_INS.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
    wp_check_between "PAPI_TOT_INS under counted_work (${want##* })" "$ins" 1000000 1e15
else
    [ "$ins_lines" = 1 ] || wp_fail "$ins_lines lines speak of PAPI_TOT_INS, expected exactly one"
    grep -q '^waitprof: WAITPROF_COUNTERS: .*PAPI_TOT_INS.*; PAPI_TOT_INS is not counted, the run goes on$' \
        "$WP_TMP/stderr" || wp_fail "the PAPI_TOT_INS line does not say it is not counted"
    ls "$out" | grep -q 'PAPI_TOT_INS' && wp_fail "a file for the uncounted PAPI_TOT_INS"
    [ "$(wp_meta "$out/rank.1.meta" counters)" = "perf::TASK-CLOCK:ns:${backend##* }" ] ||
        wp_fail "rank.1.meta counters=$(wp_meta "$out/rank.1.meta" counters), expected perf::TASK-CLOCK alone"
    want_lines=$((want_lines + 1))
    wp_note "PAPI_TOT_INS: no PAPI event and no PMU, one line and not counted"
fi
[ "$nlines" = "$want_lines" ] || wp_fail "$nlines WAITPROF_COUNTERS lines, expected $want_lines"

# libpapi present at build time but not loadable at run time.
if [ "$(probe papi_built)" != 1 ]; then
    wp_note "this build has no PAPI: the unloadable-libpapi case is not checked"
    exit 0
fi
lib=$(ldd "$WP_BUILDDIR/tests/mpi/ctr_probe" | awk '/libpapi/ { print $3 }')
lib=$(readlink -f "$lib")
[ -f "$lib" ] || wp_fail "ctr_probe links no libpapi"
if ! unshare -m true 2>/dev/null; then
    wp_note "no private mount namespace here (unshare -m): the unloadable-libpapi case is not checked"
    exit 0
fi
out4=$WP_TMP/out4
WAITPROF_HZ=200 WAITPROF_COUNTERS=perf::TASK-CLOCK WP_LIBPAPI=$lib WP_SRC=$WP_SRCDIR unshare -m sh -c '
    mount --bind /dev/null "$WP_LIBPAPI" || exit 99
    . "$WP_SRC/tests/lib.sh" >/dev/null 2>&1
    wp_profile 2 "$1" "$WP_BUILDDIR/tests/mpi/counters" 0.3' sh "$out4" >"$WP_TMP/stdout4" 2>"$WP_TMP/stderr4" ||
    { cat "$WP_TMP/stderr4" >&2; wp_fail "counters with libpapi hidden exited with $?"; }
n=$(grep -c 'perf::TASK-CLOCK' "$WP_TMP/stderr4")
[ "$n" = 1 ] || { cat "$WP_TMP/stderr4" >&2; wp_fail "$n lines speak of perf::TASK-CLOCK with libpapi hidden, expected one"; }
grep -q '^waitprof: WAITPROF_COUNTERS: perf::TASK-CLOCK is a PAPI name, and PAPI cannot be loaded (.*); counted task-clock with Linux perf_event instead$' \
    "$WP_TMP/stderr4" || { cat "$WP_TMP/stderr4" >&2; wp_fail "the line does not say PAPI cannot be loaded"; }
[ "$(wp_meta "$out4/rank.1.meta" counters)" = "perf::TASK-CLOCK:ns:perf_event" ] ||
    wp_fail "with libpapi hidden rank.1.meta counters=$(wp_meta "$out4/rank.1.meta" counters)"
truth=$(wp_truth "$WP_TMP/stdout4" 1 cpu_ns)
got=$(wp_folded sum "$out4/all.perf::TASK-CLOCK.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
wp_check_between "perf::TASK-CLOCK (ns) under counted_work with libpapi hidden, measured $truth ns" "$got" \
    "$(wp_calc "$truth * 0.95")" "$(wp_calc "$truth * 1.05")"
wp_note "libpapi hidden: $(grep 'perf::TASK-CLOCK' "$WP_TMP/stderr4")"
