#!/bin/sh
# The Waitall remedy in the Fortran wrappers (tests/mpi/ws_waitall.F90, 'use
# mpi' and 'use mpi_f08', 2 ranks): Open MPI's Fortran bindings call
# PMPI_Waitall directly, so the C wrapper's test-first never runs for them;
# the Fortran wrapper tries the library's own Fortran MPI_TESTALL first.
# Checked as for C (wp_check_waitall_remedy): estimate within 10% or 5 ms of
# the truth, calls complete on entry found, and the remedy closer to the
# truth than the plain method on the same run.
. "$(dirname "$0")/../lib.sh"
[ -n "$MPIFC" ] || wp_skip "no MPI Fortran compiler"
for prog in ws_waitall_f ws_waitall_f08; do
    attempt() (
        wp_check_waitall_remedy "$WP_TMP/$prog-$try" "$WP_BUILDDIR/tests/mpi/$prog" 0.08 8
    )
    try=1
    until attempt; do
        [ "$try" -lt "${WP_WAITS_TRIES:-2}" ] || exit 1
        try=$((try + 1))
        wp_note "$prog: attempt failed: running it again ($try of ${WP_WAITS_TRIES:-2})"
    done
done
