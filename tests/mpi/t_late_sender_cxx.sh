#!/bin/sh
# A C++ late sender: frames carry demangled method names.
. "$(dirname "$0")/../lib.sh"
[ -n "$MPICXX" ] || wp_skip "no MPI C++ compiler"
wp_check_late_sender 2 "$WP_BUILDDIR/tests/mpi/late_sender_cxx" \
    ';main;demo::Exchanger::receive\(int\*\)( \[clone [^]]*\])?;MPI_Recv$' ';main;demo::Exchanger::compute\(double\)( \[clone [^]]*\])?(;.*)?$'
