#!/bin/sh
# The sampling timers as the kernel holds them (tests/mpi/timers.c reads
# each SIGPROF timer with timer_gettime on 2 ranks of 3 sampled threads):
# - aligned (the default): every timer's next expiration lies within
#   100 µs of a multiple of the period in CLOCK_REALTIME, on every thread
#   of every rank, before MPI_Pcontrol(0) and after MPI_Pcontrol(1);
# - during MPI_Pcontrol(0) every timer is stopped, and the handlers saw at
#   most two signals per thread after the pause began (rank.R.meta
#   paused_signals; 53 periods went by);
# - WAITPROF_ALIGN=0: the same reading finds timers off the grid, so the
#   check above can tell (6 timers within 200 µs of a 10 ms grid by chance:
#   probability 0.04^6).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/timers

run() { # NAME HZ (env set by the caller)
    out=$WP_TMP/$1
    WAITPROF_HZ=$2 wp_profile 2 "$out" "$prog" "$2" >"$out.stdout" 2>"$out.stderr" ||
        { rc=$?; cat "$out.stderr" >&2; wp_fail "$1: exited with $rc"; }
    grep -q 'error=' "$out.stdout" && { cat "$out.stdout" >&2; wp_skip "/proc/self/timers is not readable here"; }
    cat "$out.stdout"
}

# lines OUT POINT — the timer lines of one point, both ranks.
lines() { grep "^timer .* point=$2 " "$1.stdout"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

run aligned 1000
for point in on resumed; do
    n=$(lines "$out" $point | wc -l)
    [ "$n" = 6 ] || wp_fail "aligned, $point: $n SIGPROF timers, expected 3 per rank (main and 2 workers)"
    lines "$out" $point | while read -r l; do
        [ "$(echo "$l" | field armed)" = 1 ] || wp_fail "aligned, $point: a timer is stopped: $l"
        [ "$(echo "$l" | field interval_ns)" = 1000000 ] || wp_fail "aligned, $point: period is not 1 ms: $l"
        [ "$(echo "$l" | field read)" = ok ] || continue
        d=$(echo "$l" | field offgrid_ns)
        [ "$d" -le 100000 ] || wp_fail "aligned, $point: next expiration $d ns off the real-time grid: $l"
    done || exit 1
done
n=$(lines "$out" paused | wc -l)
[ "$n" = 6 ] || wp_fail "paused: $n SIGPROF timers, expected 6"
[ "$(lines "$out" paused | field armed | sort -u)" = 0 ] || wp_fail "MPI_Pcontrol(0) left timers running"
for r in 0 1; do
    meta=$out/rank.$r.meta
    [ "$(wp_meta "$meta" timer_grid)" = aligned ] || wp_fail "rank.$r.meta does not say timer_grid=aligned"
    th=$(wp_meta "$meta" threads)
    ps=$(wp_meta "$meta" paused_signals)
    wp_check_between "rank $r signals during the pause ($th threads, 53 periods)" "$ps" 1 $((2 * th))
done

WAITPROF_ALIGN=0 run free 100
[ "$(wp_meta "$out/rank.0.meta" timer_grid)" = free ] || wp_fail "WAITPROF_ALIGN=0: rank.0.meta does not say timer_grid=free"
far=$(lines "$out" on | field offgrid_ns | awk '$1 > 200000' | wc -l)
[ "$far" -ge 1 ] || wp_fail "WAITPROF_ALIGN=0: all 6 timers on the 10 ms grid; the alignment check cannot tell"
wp_note "WAITPROF_ALIGN=0: $far of 6 timers more than 200 µs off the grid"
exit 0
