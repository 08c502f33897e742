#!/bin/sh
# The sampling timers as the kernel holds them (tests/mpi/timers.c reads
# each SIGPROF timer with timer_gettime on 2 ranks of 3 sampled threads,
# at 1000 Hz):
# - while sampling, every sampled thread's timer runs with a 1 ms period;
# - during MPI_Pcontrol(0) every one of them is stopped (within a second:
#   a thread's timer stops at its next signal, when the thread next gets a
#   core), and the handlers saw at most two signals per thread after the
#   pause began (rank.R.meta paused_signals; at least 53 periods went by,
#   so at least 53 signals per thread if the timers kept running);
# - after MPI_Pcontrol(1) they all run again with the same period;
# - a run paused and resumed every 3 ms at 100 Hz (shorter than a period)
#   has as many samples as its resumed time at that rate (±20 %): a resume
#   keeps the thread's sampling grid;
# - at 100 Hz every expiration falls on the kernel's tick (T, the
#   resolution of CLOCK_MONOTONIC_COARSE; within 100 us), with
#   m = T / gcd(10 ms, T) timers per thread of period m x 10 ms (1 where T
#   divides 10 ms; timers run free where m would exceed 4), and the meta
#   files say timer=tick, tick_ns=T; WAITPROF_TIMER=free gives one timer of
#   10 ms per thread and timer=free.
. "$(dirname "$0")/../lib.sh"
out=$WP_TMP/out
WAITPROF_HZ=1000 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/timers" 1000 >"$out.stdout" 2>"$out.stderr" ||
    { rc=$?; cat "$out.stderr" >&2; wp_fail "timers exited with $rc"; }
grep -q 'error=no-proc-timers' "$out.stdout" && wp_skip "/proc/self/timers is not readable here"
cat "$out.stdout"
grep -q 'error=' "$out.stdout" && wp_fail "a timer could not be read"

# timers POINT — the timer lines of one point, both ranks.
timers() { grep "^timer .* point=$1 " "$out.stdout"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

for point in on paused resumed; do
    n=$(timers $point | wc -l)
    [ "$n" = 6 ] || wp_fail "$point: $n SIGPROF timers, expected 3 per rank (main and 2 workers)"
done
for point in on resumed; do
    [ "$(timers $point | field armed | sort -u)" = 1 ] || wp_fail "$point: a timer is stopped"
    [ "$(timers $point | field interval_ns | sort -u)" = 1000000 ] || wp_fail "$point: a period is not 1 ms"
done
[ "$(timers paused | field armed | sort -u)" = 0 ] || wp_fail "MPI_Pcontrol(0) left timers running for a second"
wp_note "paused: $(grep '^paused ' "$out.stdout" | tr '\n' ' ')"
for r in 0 1; do
    meta=$out/rank.$r.meta
    th=$(wp_meta "$meta" threads)
    ps=$(wp_meta "$meta" paused_signals)
    wp_check_between "rank $r signals during the pause ($th threads, 53 periods)" "$ps" 1 $((2 * th))
done

out=$WP_TMP/toggle
WAITPROF_HZ=100 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/timers" 100 toggle >"$out.stdout" 2>"$out.stderr" ||
    { rc=$?; cat "$out.stderr" >&2; wp_fail "timers toggle exited with $rc"; }
for r in 0 1; do
    on=$(sed -n "s/^toggle rank=$r on_s=//p" "$out.stdout")
    want=$(wp_calc "$on * 100")
    wp_check_between "toggle: rank $r samples (resumed $on s in 5 ms pieces)" \
        "$(wp_meta "$out/rank.$r.meta" samples)" "$(wp_calc "$want * 0.7")" "$(wp_calc "$want * 1.35")"
done

out=$WP_TMP/grid
WAITPROF_HZ=100 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/timers" 100 grid >"$out.stdout" 2>"$out.stderr" ||
    { rc=$?; cat "$out.stderr" >&2; wp_fail "timers grid exited with $rc"; }
cat "$out.stdout"
tick=$(sed -n 's/^tick rank=0 tick_ns=//p' "$out.stdout")
m=$(awk -v t="$tick" 'BEGIN { a = 10000000; b = t; while (b) { r = a % b; a = b; b = r }
                              m = t <= 10000000 ? t / a : 1; print (m > 4 ? 0 : m) }')
wp_note "tick $tick ns: $m timers per thread at 100 Hz"
if [ "$m" = 0 ]; then
    [ "$(wp_meta "$out/rank.0.meta" timer)" = free ] || wp_fail "a tick of $tick ns needs more than 4 timers: expected timer=free"
else
    for r in 0 1; do
        [ "$(wp_meta "$out/rank.$r.meta" timer)" = tick ] || wp_fail "rank $r: meta timer is not tick"
        [ "$(wp_meta "$out/rank.$r.meta" tick_ns)" = "$tick" ] || wp_fail "rank $r: meta tick_ns is not $tick"
        n=$(grep -c "^timer rank=$r point=on " "$out.stdout")
        [ "$n" = $((3 * m)) ] || wp_fail "rank $r: $n SIGPROF timers at 100 Hz, expected $m for each of 3 threads"
    done
    [ "$(timers on | field armed | sort -u)" = 1 ] || wp_fail "grid: a timer is stopped"
    [ "$(timers on | field interval_ns | sort -u)" = $((m * 10000000)) ] || wp_fail "grid: a period is not $m x 10 ms"
    timers on | field phase_ns | awk '{ if ($1 > 100000 || $1 < -100000) bad++ }
        END { exit bad > 0 }' || wp_fail "grid: an expiration is more than 100 us off the tick"
fi

out=$WP_TMP/free
WAITPROF_TIMER=free WAITPROF_HZ=100 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/timers" 100 grid >"$out.stdout" 2>"$out.stderr" ||
    { rc=$?; cat "$out.stderr" >&2; wp_fail "timers grid (free) exited with $rc"; }
[ "$(wp_meta "$out/rank.0.meta" timer)" = free ] || wp_fail "WAITPROF_TIMER=free: meta timer is not free"
[ "$(timers on | wc -l)" = 6 ] || wp_fail "WAITPROF_TIMER=free: expected one timer for each of 3 threads per rank"
[ "$(timers on | field interval_ns | sort -u)" = 10000000 ] || wp_fail "WAITPROF_TIMER=free: a period is not 10 ms"
exit 0
