#!/bin/sh
# WAITPROF_COUNTERS with perf software events (sampler/counters.h):
# - the task-clock charged to rank 1's Not-in-MPI samples under
#   counted_work, in all.task-clock.folded, is within 5 % of the CPU time
#   the program measured for that function (CLOCK_THREAD_CPUTIME_ID);
# - rank 0, blocked in MPI_Recv meanwhile on rank 1's CPU, has context
#   switches there under MPI-Stall (Open MPI's waiting rank yields, with
#   mpi_yield_when_idle 1, which tests/lib.sh sets; MPICH's is preempted);
# - threads count their own: with rank 1's work on 2 threads, their
#   task-clock under counted_work is their measured CPU time within 5 %,
#   and the main thread, blocked in pthread_join meanwhile, is charged
#   almost none of it (a process-wide count would charge it all);
# - report.json (valid against doc/report.schema.json), report.txt and
#   counters.csv give each counter's totals per MPI state and per rank,
#   those of the files;
# - an unknown event prints one line naming it and the run succeeds;
# - a hardware event where there is no PMU prints one line and the run
#   goes on with the others (where there is one, t_counters_hw.sh checks
#   the hardware counts; PAPI names: t_counters_papi.sh).
. "$(dirname "$0")/../lib.sh"
[ -r /proc/sys/kernel/perf_event_paranoid ] || wp_skip "no perf_event on this system"
out=$WP_TMP/out
# Both ranks run on one CPU (taskset, from util-linux, after the launcher's
# own binding): a waiting rank is switched out only when another task is
# ready on its CPU, and on an idle machine with a core per rank none is (a
# run here counted 17 switches, none of them rank 0's in MPI_Recv).  There
# Open MPI's waiting rank yields to rank 1, MPICH's is preempted by it.
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
pin="taskset -c $cpu"
WAITPROF_HZ=200 WAITPROF_COUNTERS=task-clock,context-switches,no-such-event WAITPROF_OUT="$out" \
    wp_mpirun 2 $pin "$WP_LAUNCHER" "$WP_BUILDDIR/tests/mpi/counters" 0.6 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "counters exited with $?"; }
cat "$WP_TMP/stderr" >&2
grep -q 'task-clock cannot be counted' "$WP_TMP/stderr" && wp_skip "perf_event_open refuses task-clock here"
n=$(grep -c 'unknown event "no-such-event"' "$WP_TMP/stderr")
[ "$n" = 1 ] || wp_fail "the unknown event was reported $n times, expected one line"
for f in "$out"/rank.0.task-clock.folded "$out"/rank.1.task-clock.folded "$out"/all.task-clock.folded; do
    [ -s "$f" ] || wp_fail "$(basename "$f") missing or empty"
done
for f in "$out"/rank.0.context-switches.folded "$out"/rank.1.context-switches.folded "$out"/all.context-switches.folded; do
    [ -e "$f" ] || wp_fail "$(basename "$f") missing"
done
[ -s "$out/all.context-switches.folded" ] || wp_fail "all.context-switches.folded empty with both ranks on one CPU"
wp_note "context switches over the run: $(wp_folded sum "$out/all.context-switches.folded")"
[ ! -e "$out"/rank.0.no-such-event.folded ] || wp_fail "a file for the unknown event"
wp_folded check "$out"/rank.*.task-clock.folded "$out"/all.task-clock.folded "$out"/all.context-switches.folded ||
    wp_fail "counter files' folded format"
truth=$(wp_truth "$WP_TMP/stdout" 1 cpu_ns)
[ -n "$truth" ] || wp_fail "no truth line from rank 1"
got=$(wp_folded sum "$out/all.task-clock.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
wp_check_between "task-clock (ns) under Not-in-MPI;...;counted_work, rank 1 measured $truth ns" "$got" \
    "$(wp_calc "$truth * 0.95")" "$(wp_calc "$truth * 1.05")"
# The per-rank file and the merge agree (only rank 1 computes there).
r1=$(wp_folded sum "$out/rank.1.task-clock.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
[ "$r1" = "$got" ] || wp_fail "rank.1.task-clock.folded has $r1 ns under counted_work, all.task-clock.folded $got"
# Rank 0's wait in MPI_Recv: it shares its CPU with the computing rank 1,
# so it is switched out while it waits (yielding on Open MPI, preempted on
# MPICH).
cs=$(wp_folded sum "$out/rank.0.context-switches.folded" --path '^MPI-(Stall|Work);.*MPI_Recv$')
wp_note "rank 0 context switches in MPI_Recv: $cs (Stall: $(wp_folded sum "$out/rank.0.context-switches.folded" --state MPI-Stall --path 'MPI_Recv$'))"
st=$(wp_folded sum "$out/rank.0.context-switches.folded" --state MPI-Stall --path ';MPI_Recv$')
[ "$st" -gt 0 ] || wp_fail "rank 0: no context switches under MPI-Stall;...;MPI_Recv, sharing its CPU with rank 1"


# report.json and report.txt: the per-state totals of each counter, the
# JSON valid against its schema (which is strict about fields), and the
# totals those of the merged file.
"$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$out/report.json" ||
    wp_fail "report.json (with counters) does not validate against doc/report.schema.json"
"$PYTHON" - "$out" <<'PY' || wp_fail "report.json's counters do not match all.<event>.folded"
import json, sys
out = sys.argv[1]
j = json.load(open(out + "/report.json"))
ev = {c["event"]: c for c in j["counters"]}
assert sorted(ev) == ["context-switches", "task-clock"], sorted(ev)
for name, c in ev.items():
    st = {}
    for line in open("%s/all.%s.folded" % (out, name)):
        stack, n = line.rsplit(" ", 1)
        root = stack.split(";", 1)[0]
        st[root] = st.get(root, 0) + int(n)
    for s in ("Not-in-MPI", "MPI-Work", "MPI-Stall"):
        assert c["states"][s] == st.get(s, 0), (name, s, c["states"][s], st.get(s, 0))
    assert c["total"] == sum(st.values()) == sum(r["total"] for r in c["ranks"]), name
    assert [r["rank"] for r in c["ranks"]] == [0, 1]
assert ev["task-clock"]["unit"] == "ns" and ev["context-switches"]["unit"] == "events"
# counters.csv: its header names every column, one row per rank, the
# values those of report.json; report.json lists it.
import csv
assert "counters.csv" in j["csv_files"], list(j["csv_files"])
rows = list(csv.DictReader(open(out + "/counters.csv")))
assert [int(r["rank"]) for r in rows] == [0, 1], rows
for name, c in ev.items():
    for r, rr in zip(rows, c["ranks"]):
        parts = [int(r[name + "_" + s]) for s in ("not_in_mpi", "mpi_work", "mpi_stall")]
        assert sum(parts) == int(r[name + "_total"]) == rr["total"], (name, r, rr)
    for k, s in (("not_in_mpi", "Not-in-MPI"), ("mpi_work", "MPI-Work"), ("mpi_stall", "MPI-Stall")):
        assert sum(int(r[name + "_" + k]) for r in rows) == c["states"][s], (name, s)
PY
grep -q '^== counters per MPI state' "$out/report.txt" || wp_fail "report.txt has no counters section"
grep -q '^task-clock  *ns ' "$out/report.txt" || wp_fail "report.txt's counters section has no task-clock row"

# Threads count their own.
out3=$WP_TMP/out3
WAITPROF_HZ=200 WAITPROF_COUNTERS=task-clock \
    wp_profile 2 "$out3" "$WP_BUILDDIR/tests/mpi/counters" 0.4 2 >"$WP_TMP/stdout3" 2>"$WP_TMP/stderr3" ||
    { cat "$WP_TMP/stderr3" >&2; wp_fail "counters (threads) exited with $?"; }
truth=$(sed -n 's/^truth rank=1 thread cpu_ns=//p' "$WP_TMP/stdout3" | awk '{ s += $1 } END { print s }')
[ "$(grep -c '^truth rank=1 thread' "$WP_TMP/stdout3")" = 2 ] || wp_fail "expected 2 worker truth lines"
got=$(wp_folded sum "$out3/rank.1.task-clock.folded" --state Not-in-MPI --path ';counted_work(;.*)?$')
wp_check_between "task-clock (ns) under counted_work on 2 threads, measured $truth ns" "$got" \
    "$(wp_calc "$truth * 0.95")" "$(wp_calc "$truth * 1.05")"
all=$(wp_folded sum "$out3/rank.1.task-clock.folded" --state Not-in-MPI)
wp_check_between "rank 1 Not-in-MPI task-clock (ns) outside counted_work (main thread joining)" \
    "$(wp_calc "$all - $got")" 0 "$(wp_calc "$truth * 0.05")"

# waitprof report over the counters: --weight draws all.svg from a
# counter's profile (its title, subtitle total and tooltips in the
# counter's unit); an event the run did not count is a usage error with
# one line; --state stall keeps only MPI-Stall lines in the counters'
# merged files too; --diff --weight compares a counter per state and path.
o1=$WP_TMP/out # (wp_profile set out to the last run's directory)
w=$WP_TMP/weight
mkdir -p "$w"
"$WP_LAUNCHER" report --quiet --weight task-clock --out "$w" "$o1" 2>"$WP_TMP/w.err" ||
    wp_fail "waitprof report --weight task-clock exited with $?: $(cat "$WP_TMP/w.err")"
tc=$(wp_folded sum "$o1/all.task-clock.folded")
grep -q 'weighted by task-clock (ns)' "$w/all.svg" || wp_fail "all.svg (--weight) does not say it is weighted by task-clock"
grep -q ">$tc ns in all;" "$w/all.svg" || wp_fail "all.svg (--weight) subtitle does not give the $tc ns of all.task-clock.folded"
grep -q 'counted_work .* ns (' "$w/all.svg" || wp_fail "all.svg (--weight): no counted_work tooltip in ns"
! grep -q 'samples (' "$w/all.svg" || wp_fail "all.svg (--weight) still counts samples in a tooltip"
"$WP_LAUNCHER" report --quiet --weight cycles --out "$w" "$o1" 2>"$WP_TMP/w2.err"
rc=$?
[ $rc = 2 ] || wp_fail "--weight cycles (not counted) exited with $rc, expected 2"
[ "$(wc -l <"$WP_TMP/w2.err")" = 1 ] && grep -q 'no counter of that name (counted: context-switches, task-clock)' \
    "$WP_TMP/w2.err" || wp_fail "--weight cycles: expected one line naming the counted events: $(cat "$WP_TMP/w2.err")"
s=$WP_TMP/stall
mkdir -p "$s"
"$WP_LAUNCHER" report --quiet --state stall --out "$s" "$o1" 2>/dev/null || wp_fail "--state stall exited with $?"
! grep -qv '^MPI-Stall;' "$s/all.context-switches.folded" || wp_fail "--state stall: all.context-switches.folded has other states"
[ "$(wp_folded sum "$s/all.context-switches.folded")" = \
  "$(wp_folded sum "$o1/all.context-switches.folded" --state MPI-Stall)" ] ||
    wp_fail "--state stall: all.context-switches.folded is not the run's MPI-Stall lines"
"$WP_LAUNCHER" report --diff "$o1" "$out3" --weight task-clock >"$WP_TMP/diff.out" 2>"$WP_TMP/diff.err" ||
    wp_fail "--diff --weight task-clock exited with $?: $(cat "$WP_TMP/diff.err")"
cat "$WP_TMP/diff.out"
grep -q "^waitprof report --diff: task-clock (ns) per call path and MPI state, A = $o1 ($tc), B = $out3 (" \
    "$WP_TMP/diff.out" || wp_fail "--diff --weight: header does not give task-clock's totals"
# Rank 0's wait in MPI_Recv is in both runs: its row gives both runs'
# counts as their merged files have them.
a=$(wp_folded sum "$o1/all.task-clock.folded" --state MPI-Stall --path '^MPI-Stall;main;MPI_Recv$')
b=$(wp_folded sum "$out3/all.task-clock.folded" --state MPI-Stall --path '^MPI-Stall;main;MPI_Recv$')
grep -Eq "^ *$a +$b .* MPI-Stall;main;MPI_Recv *\$" "$WP_TMP/diff.out" ||
    wp_fail "--diff --weight: no row MPI-Stall;main;MPI_Recv with A=$a and B=$b"

# Derived rates: each counter per second of the ranks' time in each state
# (report.json counters[].per_second, the state's count over the seconds
# report.json gives the state) and over their profiled time, and per rank
# in counters.csv.  Instructions per cycle, with neither event countable
# here, on a copy of the run whose counter files are renamed: instructions
# the task-clock profile, cycles the same with every count doubled, so the
# IPC is 0.5 in every state; report.json (valid) and report.txt give it.
"$PYTHON" - "$o1" <<'PY' || wp_fail "derived rates do not follow from the counts"
import csv, json, sys
out = sys.argv[1]
j = json.load(open(out + "/report.json"))
secs = {s["state"]: s["seconds"] for s in j["states"]}
dur = {}
for r in (0, 1):
    for line in open("%s/rank.%d.meta" % (out, r)):
        if line.startswith("duration_ns="):
            dur[r] = int(line.split("=")[1]) * 1e-9
for c in j["counters"]:
    ps = c["per_second"]
    for st, n in c["states"].items():
        want = n / secs[st] if secs[st] > 0 else None
        assert (ps[st] is None and want is None) or abs(ps[st] - want) <= 1e-4 * max(want, 1), (c["event"], st, ps[st], want)
    want = c["total"] / sum(dur.values())
    assert abs(ps["all"] - want) <= 1e-4 * max(want, 1), (c["event"], ps["all"], want)
rows = list(csv.DictReader(open(out + "/counters.csv")))
for c in j["counters"]:
    for row, rr in zip(rows, c["ranks"]):
        v = float(row[c["event"] + "_per_s"])
        want = rr["total"] / dur[rr["rank"]]
        assert abs(v - want) <= 1e-4 * max(want, 1), (c["event"], row["rank"], v, want)
assert "ipc" not in j
PY
ipc=$WP_TMP/ipc
mkdir -p "$ipc"
for r in 0 1; do
    sed 's/^counters=.*/counters=instructions:events:perf_event,cycles:events:perf_event/' "$o1/rank.$r.meta" >"$ipc/rank.$r.meta"
    for f in folded calls waits timeline; do [ -e "$o1/rank.$r.$f" ] && cp "$o1/rank.$r.$f" "$ipc/"; done
    cp "$o1/rank.$r.task-clock.folded" "$ipc/rank.$r.instructions.folded"
    awk '{ n = $NF; $NF = ""; sub(/ $/, ""); printf "%s %.0f\n", $0, 2 * n }' "$o1/rank.$r.task-clock.folded" \
        >"$ipc/rank.$r.cycles.folded"
done
"$WP_LAUNCHER" report --quiet "$ipc" 2>"$WP_TMP/ipc.err" || wp_fail "report of the renamed run exited with $?: $(cat "$WP_TMP/ipc.err")"
"$PYTHON" "$WP_SRCDIR/tests/jsonschema_mini.py" "$WP_SRCDIR/doc/report.schema.json" "$ipc/report.json" ||
    wp_fail "report.json with ipc does not validate against doc/report.schema.json"
"$PYTHON" - "$ipc" <<'PY' || wp_fail "instructions per cycle is not 0.5 in every state"
import json, sys
j = json.load(open(sys.argv[1] + "/report.json"))
ipc = j["ipc"]
assert ipc["instructions"] == "instructions" and ipc["cycles"] == "cycles", ipc
for st, v in ipc["states"].items():
    assert v is None or abs(v - 0.5) < 1e-9, (st, v)
assert ipc["states"]["all"] == 0.5, ipc
PY
grep -q '^instructions per cycle .*0\.500 .*(instructions / cycles)$' "$ipc/report.txt" ||
    wp_fail "report.txt does not give instructions per cycle: $(grep -n 'per cycle' "$ipc/report.txt")"

# The groups' time enabled and time counting, in the meta files: software
# events are never multiplexed, so they are equal.  A run whose counters
# were multiplexed (here rank 1's meta made to say so) gets one problem
# line naming the rank and the share of time they counted.
for r in 0 1; do
    en=$(wp_meta "$o1/rank.$r.meta" counters_enabled_ns)
    run=$(wp_meta "$o1/rank.$r.meta" counters_running_ns)
    [ -n "$en" ] && [ "$en" -gt 0 ] && [ "$run" = "$en" ] ||
        wp_fail "rank $r: counters_enabled_ns=$en counters_running_ns=$run, expected equal and positive"
done
mx=$WP_TMP/mux
cp -r "$o1" "$mx"
en=$(wp_meta "$mx/rank.1.meta" counters_enabled_ns)
sed -i "s/^counters_running_ns=.*/counters_running_ns=$((en / 2))/" "$mx/rank.1.meta"
"$WP_LAUNCHER" report --quiet "$mx" 2>"$WP_TMP/mux.err"
[ "$(grep -c 'multiplexed' "$WP_TMP/mux.err")" = 1 ] &&
    grep -q 'rank.1.meta: its perf_event counters counted 50.0 % of the time' "$WP_TMP/mux.err" ||
    wp_fail "a multiplexed rank 1: expected one line naming it and 50.0 %: $(cat "$WP_TMP/mux.err")"
grep -q 'multiplexed' "$mx/report.txt" || wp_fail "report.txt does not list the multiplexed counters"

# An event that cannot be counted here beside one that can: where there is
# no hardware PMU (found by ctr_probe, without waitprof), cycles is left
# out with exactly one line and no file, and task-clock is still counted.
# Where there is one, cycles is counted, and t_counters_hw.sh checks its
# counts (this test asserts nothing about hardware counts).
"$WP_BUILDDIR/tests/mpi/ctr_probe" >"$WP_TMP/probe" || wp_fail "ctr_probe failed"
if grep -q '^perf_cycles=1$' "$WP_TMP/probe"; then
    wp_note "this machine has a hardware PMU: the degradation of an uncountable cycles is not checked here"
    exit 0
fi
out2=$WP_TMP/out2
WAITPROF_HZ=100 WAITPROF_COUNTERS=cycles,task-clock \
    wp_profile 2 "$out2" "$WP_BUILDDIR/tests/mpi/counters" 0.1 >"$WP_TMP/stdout2" 2>"$WP_TMP/stderr2" ||
    { cat "$WP_TMP/stderr2" >&2; wp_fail "counters (cycles) exited with $?"; }
[ -s "$out2/all.task-clock.folded" ] || wp_fail "all.task-clock.folded missing beside an unavailable cycles"
n=$(grep -c 'cycles' "$WP_TMP/stderr2")
[ "$n" = 1 ] || wp_fail "the unavailable cycles was reported in $n lines, expected one"
grep -q '^waitprof: WAITPROF_COUNTERS: event cycles cannot be counted here (.*no hardware PMU.*); the run goes on without it' \
    "$WP_TMP/stderr2" || wp_fail "the cycles line does not say it cannot be counted for want of a PMU"
ls "$out2" | grep -q cycles && wp_fail "a cycles file written without a PMU"
wp_note "no hardware PMU: cycles left out with one line, task-clock counted"
