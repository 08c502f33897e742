#!/bin/sh
# A C late sender: the wait lands on main;MPI_Recv in an MPI state, the
# partner's computation on main;compute_loop outside MPI; sample counts
# follow WAITPROF_HZ at two rates; 4 ranks (two idle) at one of them.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/late_sender
wp_check_late_sender 2 "$prog" ';main;MPI_Recv$' ';main;compute_loop$' 100
wp_check_late_sender 2 "$prog" ';main;MPI_Recv$' ';main;compute_loop$' 1000
wp_check_late_sender 4 "$prog" ';main;MPI_Recv$' ';main;compute_loop$' 200
