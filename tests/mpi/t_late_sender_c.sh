#!/bin/sh
# A C late sender: the wait lands on main;MPI_Recv in an MPI state, the
# partner's computation on main;compute_loop outside MPI; sample counts
# follow WAITPROF_HZ at two rates; 4 ranks (two idle) at one of them; and
# the CPU-time clock.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/late_sender
wp_check_late_sender 2 "$prog" ';main;MPI_Recv$' ';main;compute_loop(;.*)?$' 100
wp_check_late_sender 2 "$prog" ';main;MPI_Recv$' ';main;compute_loop(;.*)?$' 1000
wp_check_late_sender 4 "$prog" ';main;MPI_Recv$' ';main;compute_loop(;.*)?$' 200

# WAITPROF_CLOCK=cpu: timers count thread CPU time.  Rank 1's compute loop
# is CPU-bound, so its samples follow the CPU time it measured (less than
# its wall time when ranks share a core); the meta file records the clock.
out=$WP_TMP/out-cpu
WAITPROF_CLOCK=cpu WAITPROF_HZ=200 wp_profile 2 "$out" "$prog" 0.2 5 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    wp_fail "cpu clock run exited with $?"
[ "$(wp_meta "$out/rank.1.meta" clock)" = cpu ] || wp_fail "meta does not record clock=cpu"
cpu_comp=$(wp_truth "$WP_TMP/stdout" 1 cpu_compute)
got=$(wp_folded sum "$out/rank.1.folded" --state Not-in-MPI --path ';main;compute_loop(;.*)?$')
want=$(wp_calc "$cpu_comp * 200")
wp_check_between "cpu clock: rank 1 samples in compute_loop (CPU truth $cpu_comp s)" "$got" \
    "$(wp_calc "$want * 0.85 - 2")" "$(wp_calc "$want * 1.15 + 2")"
