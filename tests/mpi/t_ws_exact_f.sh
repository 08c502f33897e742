#!/bin/sh
# Matched instances through the Fortran wrappers (tests/mpi/ws_exact.F90,
# 'use mpi' and 'use mpi_f08', 2 ranks): MPI_IALLREDUCE completed by
# MPI_WAIT with a late rank (Wait at NxN on both ranks), a persistent
# MPI_SEND_INIT/MPI_RECV_INIT pair started 8 times with a late sender (Late
# Sender in MPI_WAIT) and, with 'use mpi', MPI_MPROBE + MPI_MRECV with a
# late sender and the status ignored (Late Sender in MPI_MPROBE), and
# MPI_IRECV completed by MPI_WAITANY ('use mpi') or MPI_WAITALL
# ('use mpi_f08') with a late sender (Late Sender there: the followed
# receive found by its Fortran handle).  Open
# MPI's Fortran bindings call PMPI_* directly, so only the Fortran
# wrappers see these calls there; MPICH's call the C functions, whose
# wrappers then stand aside.  As t_ws_exact_nbc.sh: every truth within 5 %
# or 5 ms, the rows measured from at least one matched instance, the
# largest truth at least 0.5 s (8 x 0.08 s injected).  Then the last mode
# again with 70 null requests after the receive (WS_NULLS).
. "$(dirname "$0")/../lib.sh"
[ -n "$MPIFC" ] || wp_skip "no MPI Fortran compiler"
WP_WAITS_REL=0.05 WP_WAITS_ABS=0.005
export WP_WAITS_REL WP_WAITS_ABS
for src in wrappers default; do
    if [ "$src" = wrappers ]; then
        WAITPROF_SOURCE=wrappers
        export WAITPROF_SOURCE
    else
        unset WAITPROF_SOURCE
    fi
    wp_note "--- source: $src"
    wp_check_exact 2 5 0.5 "$WP_BUILDDIR/tests/mpi/ws_exact_f" 0.08 8
    wp_check_exact 2 4 0.5 "$WP_BUILDDIR/tests/mpi/ws_exact_f08" 0.08 8
done
# The same receive in an array of 71 handles (70 null requests after it),
# longer than the 64 Fortran handles copied on the stack: the copy goes to
# the thread's own buffer (match/numbering.c, wp_match_ftake_other) and the
# receive is still found by its Fortran handle after the call.
WS_NULLS=70
export WS_NULLS
for prog in ws_exact_f ws_exact_f08; do
    n=$([ $prog = ws_exact_f ] && echo 5 || echo 4)
    wp_check_exact 2 $n 0.5 "$WP_BUILDDIR/tests/mpi/$prog" 0.08 8
    grep -q '^info rank=0 completion_handles=71$' "$WP_TMP/waits-$WP_WAITS_N.stdout" ||
        wp_fail "$prog with WS_NULLS=70: the program did not make a 71-handle array"
done
