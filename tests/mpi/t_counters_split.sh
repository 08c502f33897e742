#!/bin/sh
# WAITPROF_COUNTERS_SPLIT=1 (sampler/ctr_split.h): the counters are also
# read at every MPI entry and exit, so what each rank counted outside and
# inside MPI is exact.  counters_split.c alternates 3 ms of computing on
# rank 1 with a message that rank 0 waits for and answers with 1 ms of its
# own, and measures its CPU time outside and inside its MPI calls.  At
# 10 Hz, where a sample's delta covers about 100 ms and the sampled split
# can only guess, each rank's task-clock outside MPI (rank.R.meta
# counters_split=, report.json counters[].split and its ranks) must be the
# program's within 1 % + 40 us per MPI call, and inside MPI within 5 % +
# 40 us per call below and 5 % + 40 ms above.  The allowance per call is
# waitprof's own work in the wrapper on the far side of its reads (one read
# itself, a system call, and the call's statistics after the exit read),
# which the program's brackets count inside the call and the split
# outside: 10-11 us per call here on an idle machine, 25 us with two more
# busy loops than cores (the bound was 20 us and failed there).  The 40 ms is waitprof's own part of MPI_Init and
# MPI_Finalize, outside the program's brackets and inside MPI.  Whatever
# the allowance lets move from one side to the other, the two sides
# together must be the program's total (at most 0.2 % below it, at most
# those 40 ms above).  The totals agree with the meta files.  WAITPROF_COUNTERS_SPLIT=1 without WAITPROF_COUNTERS, and
# with WAITPROF_LEAN=1, each print one line and the run succeeds.
. "$(dirname "$0")/../lib.sh"
[ -r /proc/sys/kernel/perf_event_paranoid ] || wp_skip "no perf_event on this system"
out=$WP_TMP/out
WAITPROF_HZ=10 WAITPROF_COUNTERS=task-clock WAITPROF_COUNTERS_SPLIT=1 \
    wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/counters_split" 200 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "counters_split exited with $?"; }
grep -q 'task-clock cannot be counted' "$WP_TMP/stderr" && wp_skip "perf_event_open refuses task-clock here"
for r in 0 1; do
    line=$(grep "^truth rank=$r " "$WP_TMP/stdout")
    [ -n "$line" ] || wp_fail "no truth line from rank $r"
    t_out=$(echo "$line" | sed 's/.*outside_ns=\([0-9]*\).*/\1/')
    t_in=$(echo "$line" | sed 's/.*inside_ns=\([0-9]*\).*/\1/')
    calls=$(echo "$line" | sed 's/.*calls=\([0-9]*\).*/\1/')
    v=$(wp_meta "$out/rank.$r.meta" counters_split)
    case $v in
    task-clock:*:*) ;;
    *) wp_fail "rank $r: meta counters_split='$v', expected task-clock:OUT:IN" ;;
    esac
    w_out=$(echo "$v" | cut -d: -f2)
    w_in=$(echo "$v" | cut -d: -f3)
    wp_check_between "rank $r task-clock outside MPI (ns), program measured $t_out in $calls calls" "$w_out" \
        "$(wp_calc "$t_out * 0.99 - $calls * 40000")" "$(wp_calc "$t_out * 1.01 + $calls * 40000")"
    wp_check_between "rank $r task-clock inside MPI (ns), program measured $t_in" "$w_in" \
        "$(wp_calc "$t_in * 0.95 - $calls * 40000")" "$(wp_calc "$t_in * 1.05 + 40000000")"
    # What the split moves from one side to the other, it moves: the two
    # sides together are the program's total, which they cover (waitprof
    # counts from MPI_Init to MPI_Finalize, the program between them), plus
    # waitprof's own part of those two calls (1.6 to 1.8 ms here, at most
    # the 40 ms above), whatever the load made of the per-call allowance.
    # 0.2 % below the total is 1.2 ms, a fifth of what the allowance of
    # the two sides let through under load (5.2 ms).
    wp_check_between "rank $r task-clock outside and inside MPI (ns), program measured $((t_out + t_in))" \
        "$((w_out + w_in))" "$(wp_calc "($t_out + $t_in) * 0.998")" "$(wp_calc "$t_out + $t_in + 40000000")"
    s_out=$(wp_folded sum "$out/rank.$r.task-clock.folded" --state Not-in-MPI)
    wp_note "rank $r: sampled at 10 Hz the Not-in-MPI task-clock reads $s_out ns"
    # The reads at MPI entry and exit keep a baseline of their own: the
    # samples still take every count since the previous sample to their
    # call paths, all but those after the last sample (at most a period,
    # 100 ms of CPU).
    s_all=$(wp_folded sum "$out/rank.$r.task-clock.folded")
    wp_check_between "rank $r task-clock in rank.$r.task-clock.folded (ns), split total $((w_out + w_in))" "$s_all" \
        "$(wp_calc "($w_out + $w_in) - 110000000")" "$((w_out + w_in))"
done
"$PYTHON" - "$out" <<'PY' || wp_fail "report.json's split does not match the meta files"
import json, sys
out = sys.argv[1]
j = json.load(open(out + "/report.json"))
c = {x["event"]: x for x in j["counters"]}["task-clock"]
meta = {}
for r in (0, 1):
    for line in open("%s/rank.%d.meta" % (out, r)):
        if line.startswith("counters_split="):
            _, a, b = line.strip().split("=", 1)[1].rsplit(":", 2)
            meta[r] = (int(a), int(b))
assert c["split"] == {"outside_mpi": meta[0][0] + meta[1][0], "inside_mpi": meta[0][1] + meta[1][1], "ranks": 2}, c["split"]
for rr in c["ranks"]:
    assert (rr["outside_mpi"], rr["inside_mpi"]) == meta[rr["rank"]], rr
PY
"$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$out/report.json" ||
    wp_fail "report.json (with the split) does not validate against doc/report.schema.json"
grep -q '^counted exactly outside and inside MPI' "$out/report.txt" || wp_fail "report.txt has no exact split section"
head -n 1 "$out/counters.csv" | grep -q 'task-clock_outside_mpi_exact,task-clock_inside_mpi_exact' ||
    wp_fail "counters.csv has no exact split columns: $(head -n 1 "$out/counters.csv")"

# Asked for where it cannot be had: one line each, the run goes on.
WAITPROF_COUNTERS_SPLIT=1 wp_profile 2 "$WP_TMP/none" "$WP_BUILDDIR/tests/mpi/counters_split" 5 \
    >/dev/null 2>"$WP_TMP/none.err" || wp_fail "split without counters exited with $?"
[ "$(grep -c 'WAITPROF_COUNTERS_SPLIT=1 without WAITPROF_COUNTERS' "$WP_TMP/none.err")" -ge 1 ] ||
    wp_fail "split without counters: no line: $(cat "$WP_TMP/none.err")"
WAITPROF_COUNTERS_SPLIT=1 WAITPROF_COUNTERS=task-clock WAITPROF_LEAN=1 \
    wp_profile 2 "$WP_TMP/lean" "$WP_BUILDDIR/tests/mpi/counters_split" 5 >/dev/null 2>"$WP_TMP/lean.err" ||
    wp_fail "split with lean wrappers exited with $?"
grep -q 'WAITPROF_COUNTERS_SPLIT=1 is ignored' "$WP_TMP/lean.err" || wp_fail "split with lean: no line"
[ -z "$(wp_meta "$WP_TMP/lean/rank.0.meta" counters_split)" ] || wp_fail "lean run wrote counters_split"
exit 0
