#!/bin/sh
# What a user sees first (runtime/lifecycle.c):
# 1. A profiled run prints one line when it starts, from rank 0: the ranks,
#    the rate, the clock, the stall source and the output directory, the
#    same directory the final summary line names; none with
#    WAITPROF_QUIET=1.
# 2. A program that the waitprof launcher started and that never calls
#    MPI_Init (here /bin/false on 2 ranks) keeps its exit status and gets
#    exactly one line for the job saying it was not profiled and how to
#    start waitprof; a program preloaded without the launcher gets none
#    (t_nonmpi.sh checks it is left untouched).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/late_sender
WAITPROF_HZ=50 wp_profile 2 "$WP_TMP/out" "$prog" 0.05 2 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "late_sender exited with $?"; }
n=$(grep -c '^waitprof: profiling ' "$WP_TMP/stderr")
[ "$n" = 1 ] || { cat "$WP_TMP/stderr" >&2; wp_fail "$n start lines, not one"; }
grep -q "^waitprof: profiling 2 ranks at 50 Hz (wall clock, stall source [a-z]*, matched instances 1 in 16) into $WP_TMP/out/\$" "$WP_TMP/stderr" ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "the start line does not name 2 ranks, 50 Hz, the clock, the source and $WP_TMP/out/"; }
grep -q "profile in $WP_TMP/out/ " "$WP_TMP/stderr" || wp_fail "the summary names another directory than the start line"
WAITPROF_QUIET=1 wp_profile 2 "$WP_TMP/quiet" "$prog" 0.05 2 >/dev/null 2>"$WP_TMP/stderr-q" || wp_fail "quiet run failed"
! grep -q '^waitprof: profiling' "$WP_TMP/stderr-q" || wp_fail "WAITPROF_QUIET=1 still printed the start line"
wp_note "start line: $(grep '^waitprof: profiling' "$WP_TMP/stderr")"

rc=0
(cd "$WP_TMP" && wp_mpirun 2 "$WP_LAUNCHER" /bin/false) >"$WP_TMP/stdout-f" 2>"$WP_TMP/stderr-f" || rc=$?
[ "$rc" != 0 ] || wp_fail "/bin/false under waitprof exited 0"
n=$(grep -c '^waitprof: ' "$WP_TMP/stderr-f")
[ "$n" = 1 ] || { cat "$WP_TMP/stderr-f" >&2; wp_fail "$n waitprof lines for a program without MPI_Init, not one"; }
grep -q '^waitprof: false, the program waitprof started, ended without calling MPI_Init and was not profiled; .*mpirun -np N waitprof ./app$' "$WP_TMP/stderr-f" ||
    { cat "$WP_TMP/stderr-f" >&2; wp_fail "no line saying that false never called MPI_Init"; }
wp_note "a program without MPI_Init: exit status $rc kept, one line"
