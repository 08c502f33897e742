#!/bin/sh
# A program built with the other MPI than this build's (runtime/abi.c):
# Open MPI's and MPICH's handles differ (a pointer, an int), so waitprof's
# own MPI calls would pass the program's library handles it does not
# know; Debian's MPICH aborted in MPI_Init with "Invalid communicator".
# A small program built with the other MPI's compiler, which prints a line
# and exits with status 3 after MPI_Finalize, is run on 2 ranks with the
# other MPI's launcher under this build's waitprof launcher:
# - it keeps its exit status (3) and prints its lines from both ranks;
# - waitprof prints exactly one line naming the program's library and the
#   build's, and that the program runs unprofiled;
# - no profile directory is written.
# Skipped when the other MPI is not installed.
. "$(dirname "$0")/../lib.sh"
case $MPI_FLAVOR in
openmpi) occ=mpicc.mpich orun=mpiexec.mpich oflags="-n 2" built="Open MPI" theirs="MPICH" ;;
mpich) occ=mpicc.openmpi orun=mpirun.openmpi oflags="--allow-run-as-root --oversubscribe -np 2" built="MPICH" theirs="Open MPI" ;;
*) wp_skip "no other MPI family to test against" ;;
esac
command -v "$occ" >/dev/null 2>&1 && command -v "$orun" >/dev/null 2>&1 || wp_skip "$occ or $orun not installed"
cat >"$WP_TMP/other.c" <<'PROG'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("other rank=%d done\n", rank);
    MPI_Finalize();
    return 3;
}
PROG
"$occ" -o "$WP_TMP/other" "$WP_TMP/other.c" || wp_fail "$occ could not build the test program"
rc=0
(cd "$WP_TMP" && WAITPROF_OUT="$WP_TMP/out" timeout -k 10 120 $orun $oflags "$WP_LAUNCHER" ./other) \
    >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || rc=$?
cat "$WP_TMP/stderr"
[ "$rc" = 3 ] || wp_fail "the program's exit status became $rc, not its own 3"
[ "$(grep -c '^other rank=[01] done$' "$WP_TMP/stdout")" = 2 ] || { cat "$WP_TMP/stdout" >&2; wp_fail "the program did not run to its end on both ranks"; }
n=$(grep -c '^waitprof: ' "$WP_TMP/stderr")
[ "$n" = 1 ] || wp_fail "$n waitprof lines, not one"
grep -q "^waitprof: this program runs on \"$theirs.*\", but this waitprof was built for $built; the program runs unprofiled" "$WP_TMP/stderr" ||
    wp_fail "the waitprof line does not name $theirs and $built"
[ ! -e "$WP_TMP/out" ] || wp_fail "a profile directory was written for an unprofiled run"
wp_note "a $theirs program under the $built build: one line, exit status 3 kept, no profile"
