#!/bin/sh
# Counter overflow as the sampling trigger (WAITPROF_TIMER=overflow:EVENT@PERIOD,
# sampler/overflow.c), with task-clock every 5 ms of a thread's CPU time,
# on tests/mpi/overflow.c (both ranks on one CPU):
# - rank 1's samples under overflow_work are the CPU time it measured
#   there (CLOCK_THREAD_CPUTIME_ID) divided by 5 ms, within 5 %; the meta
#   files say timer=overflow, overflow_event=task-clock,
#   overflow_period=5000000, and report.txt's run line shows the trigger
#   instead of a rate;
# - rank 0, waiting in MPI_Recv meanwhile, takes far fewer samples there
#   than wall-clock sampling every 5 ms would (its measured wait / 5 ms):
#   under a quarter with Open MPI, whose waiting rank yields its CPU
#   (mpi_yield_when_idle, which tests/lib.sh sets), under three quarters
#   with MPICH, whose waiting rank spins and so gets about half the CPU it
#   shares with rank 1 (not checked where the ranks cannot share one);
# - the stretch rank 1 computes between MPI_Pcontrol(0) and (1) (0.2 s of
#   CPU, 40 periods) has no sample, and its trigger is stopped, not just
#   ignored: at most one signal came during the pause (paused_signals;
#   the thread that pauses stops its own trigger at once); after
#   MPI_Pcontrol(1) the same CPU time in resumed_work is sampled again
#   (its CPU time / 5 ms within 5 %);
# - threads count their own: with the work on 2 threads, each thread's
#   samples (thread.N.samples of the meta, found by its kernel id) are its
#   own measured CPU time / 5 ms within 5 %, and the main thread, blocked
#   in pthread_join meanwhile, has almost none (wall-clock timers would
#   give it as many as the workers);
# - a bad value (overflow:nope@0) is one line, and the run is profiled
#   with the default timer and exits 0, as the program does;
# - overflow:cycles@1000000 where there is no PMU (this project's VM) is
#   one line and the default timer; where there is one, it samples.
. "$(dirname "$0")/../lib.sh"
[ -r /proc/sys/kernel/perf_event_paranoid ] || wp_skip "no perf_event on this system"
prog=$WP_BUILDDIR/tests/mpi/overflow
period=5000000
F() { wp_folded sum "$@"; }

out=$WP_TMP/out
WAITPROF_TIMER=overflow:task-clock@$period wp_profile 2 "$out" "$prog" 0.6 0.2 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "overflow exited with $?"; }
cat "$WP_TMP/stdout"
grep -q 'task-clock cannot trigger samples' "$WP_TMP/stderr" && wp_skip "perf_event_open refuses task-clock here"
for r in 0 1; do
    m=$out/rank.$r.meta
    [ "$(wp_meta "$m" timer)" = overflow ] || wp_fail "rank $r: meta timer=$(wp_meta "$m" timer), expected overflow"
    [ "$(wp_meta "$m" overflow_event)" = task-clock ] || wp_fail "rank $r: meta overflow_event is not task-clock"
    [ "$(wp_meta "$m" overflow_period)" = $period ] || wp_fail "rank $r: meta overflow_period is not $period"
done
grep -q "^run: .*, a sample per $period task-clock (overflow trigger)\$" "$out/report.txt" ||
    wp_fail "report.txt's run line does not show the overflow trigger"
wp_folded check "$out"/rank.1.folded || wp_fail "rank.1.folded's format"

truth=$(wp_truth "$WP_TMP/stdout" 1 cpu_ns)
[ -n "$truth" ] || wp_fail "no truth line from rank 1"
want=$(wp_calc "$truth / $period")
got=$(F "$out/rank.1.folded" --path ';overflow_work(;.*)?$')
wp_check_between "rank 1 samples under overflow_work ($truth ns of CPU / $period)" "$got" \
    "$(wp_calc "$want * 0.95")" "$(wp_calc "$want * 1.05")"

paused=$(F "$out/rank.1.folded" --path ';paused_work(;.*)?$')
wp_note "rank 1 paused_work: $(wp_truth "$WP_TMP/stdout" 1 paused_ns) ns of CPU, $paused samples," \
    "paused_signals=$(wp_meta "$out/rank.1.meta" paused_signals)"
[ "$paused" = 0 ] || wp_fail "rank 1 has $paused samples under paused_work, inside MPI_Pcontrol(0)"
wp_check_between "rank 1 signals during MPI_Pcontrol(0)" "$(wp_meta "$out/rank.1.meta" paused_signals)" 0 1
resumed=$(wp_truth "$WP_TMP/stdout" 1 resumed_ns)
want=$(wp_calc "$resumed / $period")
wp_check_between "rank 1 samples under resumed_work ($resumed ns of CPU / $period)" \
    "$(F "$out/rank.1.folded" --path ';resumed_work(;.*)?$')" "$(wp_calc "$want * 0.95")" "$(wp_calc "$want * 1.05")"

wait_ns=$(wp_truth "$WP_TMP/stdout" 0 wait_ns)
wall=$(wp_calc "$wait_ns / $period")
recv=$(F "$out/rank.0.folded" --path ';MPI_Recv$')
if [ "$MPI_FLAVOR" = openmpi ]; then share=0.25; else share=0.75; fi
if [ "$(grep -c '^pin rank=[01] cpu=[0-9]* ok=1$' "$WP_TMP/stdout")" = 2 ]; then
    wp_check_between "rank 0 samples in MPI_Recv (wall-clock sampling: $wait_ns ns / $period = $wall)" "$recv" 0 \
        "$(wp_calc "$wall * $share")"
else
    # On a CPU of its own the waiting rank spins it away whole, yielding
    # or not: nothing to compare.
    wp_note "the ranks could not share a CPU ($(grep '^pin ' "$WP_TMP/stdout" | tr '\n' ' ')); rank 0: $recv samples in MPI_Recv, not checked"
fi

# Threads count their own.
out=$WP_TMP/threads
WAITPROF_TIMER=overflow:task-clock@$period wp_profile 2 "$out" "$prog" 0.4 0 2 >"$WP_TMP/stdout2" \
    2>"$WP_TMP/stderr2" || { cat "$WP_TMP/stderr2" >&2; wp_fail "overflow (threads) exited with $?"; }
m=$out/rank.1.meta
[ "$(grep -c '^truth rank=1 thread ' "$WP_TMP/stdout2")" = 2 ] || wp_fail "expected 2 worker truth lines"
sed -n 's/^truth rank=1 thread tid=\([0-9]*\) cpu_ns=\([0-9]*\)$/\1 \2/p' "$WP_TMP/stdout2" >"$WP_TMP/workers"
while read -r tid cpu; do
    idx=$(sed -n "s/^thread\.\([0-9]*\)\.tid=$tid\$/\1/p" "$m")
    [ -n "$idx" ] || wp_fail "no sampled thread with tid $tid in rank.1.meta"
    want=$(wp_calc "$cpu / $period")
    wp_check_between "thread $idx (tid $tid) samples ($cpu ns of CPU / $period)" "$(wp_meta "$m" "thread.$idx.samples")" \
        "$(wp_calc "$want * 0.95")" "$(wp_calc "$want * 1.05")"
done <"$WP_TMP/workers"
wp_check_between "main thread samples (joining the workers)" "$(wp_meta "$m" thread.0.samples)" 0 \
    "$(wp_calc "$want * 0.05")"

# A bad value: one line, the default timer, the program's exit code.
out=$WP_TMP/bad
code=0
WAITPROF_TIMER=overflow:nope@0 wp_profile 2 "$out" "$prog" 0.1 0.01 >"$WP_TMP/stdout3" 2>"$WP_TMP/stderr3" || code=$?
[ "$code" = 0 ] || { cat "$WP_TMP/stderr3" >&2; wp_fail "overflow:nope@0: exit code $code, the program's is 0"; }
n=$(grep -c 'WAITPROF_TIMER' "$WP_TMP/stderr3")
[ "$n" = 1 ] || { cat "$WP_TMP/stderr3" >&2; wp_fail "overflow:nope@0: $n lines name WAITPROF_TIMER, expected one"; }
wp_note "overflow:nope@0 -> $(grep WAITPROF_TIMER "$WP_TMP/stderr3")"
t=$(wp_meta "$out/rank.1.meta" timer)
[ "$t" = tick ] || [ "$t" = free ] || wp_fail "overflow:nope@0: meta timer=$t, expected the default timer"
[ "$(wp_meta "$out/rank.1.meta" samples)" -gt 0 ] || wp_fail "overflow:nope@0: rank 1 took no samples"

# A hardware event: the trigger where there is a PMU, else one line and
# the default timer.
out=$WP_TMP/hw
WAITPROF_TIMER=overflow:cycles@1000000 wp_profile 2 "$out" "$prog" 0.1 0.01 >"$WP_TMP/stdout4" 2>"$WP_TMP/stderr4" ||
    { cat "$WP_TMP/stderr4" >&2; wp_fail "overflow:cycles exited with $?"; }
t=$(wp_meta "$out/rank.1.meta" timer)
if grep -q 'cycles cannot trigger samples here' "$WP_TMP/stderr4"; then
    n=$(grep -c 'WAITPROF_TIMER' "$WP_TMP/stderr4")
    [ "$n" = 1 ] || { cat "$WP_TMP/stderr4" >&2; wp_fail "the unavailable cycles was reported in $n lines, expected one"; }
    [ "$t" = tick ] || [ "$t" = free ] || wp_fail "cycles refused: meta timer=$t, expected the default timer"
    [ "$(wp_meta "$out/rank.1.meta" samples)" -gt 0 ] || wp_fail "cycles refused: rank 1 took no samples"
    wp_note "no hardware PMU: $(grep WAITPROF_TIMER "$WP_TMP/stderr4")"
    exit 0
fi
[ "$t" = overflow ] && [ "$(wp_meta "$out/rank.1.meta" overflow_event)" = cycles ] ||
    wp_fail "cycles accepted but meta timer=$t"
[ "$(F "$out/rank.1.folded" --path ';overflow_work(;.*)?$')" -gt 0 ] || wp_fail "cycles: no sample under overflow_work"
exit 0
