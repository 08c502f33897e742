#!/bin/sh
# Hardware counters, by both backends: WAITPROF_COUNTERS=cycles,instructions
# (Linux perf_event) and PAPI_TOT_CYC,PAPI_TOT_INS (PAPI, or perf_event's
# twins with one line each where PAPI does not offer them) on ctr_hw,
# whose rank 1 runs a loop of a known instruction count (2 a turn, in
# assembly) under known_loop:
# - instructions and PAPI_TOT_INS under Not-in-MPI;...;known_loop are the
#   known count within 3 % (the counts of one sampling period at each end
#   of the loop may be charged to a neighbouring sample, and the handler's
#   and kernel's own instructions to the loop's);
# - cycles and PAPI_TOT_CYC there are positive, and so is the IPC they
#   give (below 8, which no core reaches on this loop);
# - rank.1.meta says which backend counted each: papi where ctr_probe found
#   PAPI offers the event, else perf_event.
# Without a hardware PMU (perf_event_open of cycles fails, found by
# ctr_probe without waitprof) it skips: nothing here can be checked.
. "$(dirname "$0")/../lib.sh"
[ -r /proc/sys/kernel/perf_event_paranoid ] || wp_skip "no perf_event on this system"
"$WP_BUILDDIR/tests/mpi/ctr_probe" >"$WP_TMP/probe" || wp_fail "ctr_probe failed"
probe() { sed -n "s/^$1=//p" "$WP_TMP/probe" | head -n 1; }
[ "$(probe perf_cycles)" = 1 ] && [ "$(probe perf_instructions)" = 1 ] ||
    wp_skip "no hardware PMU here (perf_event_open of cycles: $(probe perf_cycles_error)); the hardware counters are not checked"

out=$WP_TMP/out
WAITPROF_HZ=200 WAITPROF_COUNTERS=cycles,instructions,PAPI_TOT_CYC,PAPI_TOT_INS \
    wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ctr_hw" 1000000000 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "ctr_hw exited with $?"; }
cat "$WP_TMP/stderr" >&2
grep -q '^truth rank=1 unsupported=1' "$WP_TMP/stdout" && wp_skip "no known-count loop for this architecture"
truth=$(wp_truth "$WP_TMP/stdout" 1 instructions)
[ -n "$truth" ] || wp_fail "no truth line from rank 1"

want_lines=0
for ev in cycles instructions PAPI_TOT_CYC PAPI_TOT_INS; do
    case $ev in
    PAPI_*) if [ "$(probe "papi_$ev")" = 1 ]; then be=papi; else be=perf_event; fi ;;
    *) be=perf_event ;;
    esac
    m=$(wp_meta_counter "$out/rank.1.meta" "$ev")
    [ "$m" = "events $be" ] || wp_fail "rank.1.meta gives $ev '$m', expected 'events $be'"
    [ -s "$out/all.$ev.folded" ] || wp_fail "all.$ev.folded missing or empty"
    if [ "$be" = perf_event ] && [ "${ev#PAPI_}" != "$ev" ]; then
        n=$(grep -c "$ev" "$WP_TMP/stderr")
        [ "$n" = 1 ] || wp_fail "$n lines speak of $ev, expected one (PAPI lacks it, perf counts it)"
        want_lines=$((want_lines + 1))
    fi
done
n=$(grep -c '^waitprof: WAITPROF_COUNTERS' "$WP_TMP/stderr")
[ "$n" = "$want_lines" ] || wp_fail "$n WAITPROF_COUNTERS lines, expected $want_lines"
wp_folded check "$out"/all.*.folded || wp_fail "folded format"

for pair in "cycles instructions" "PAPI_TOT_CYC PAPI_TOT_INS"; do
    set -- $pair
    cyc=$(wp_folded sum "$out/all.$1.folded" --state Not-in-MPI --path ';known_loop$')
    ins=$(wp_folded sum "$out/all.$2.folded" --state Not-in-MPI --path ';known_loop$')
    wp_check_between "$2 under Not-in-MPI;...;known_loop, the loop's $truth" "$ins" \
        "$(wp_calc "$truth * 0.97")" "$(wp_calc "$truth * 1.03")"
    wp_check_between "$1 under known_loop" "$cyc" 1 1e15
    wp_check_between "IPC $2 / $1 under known_loop" "$(wp_calc "$ins / $cyc")" 0.001 8
done
