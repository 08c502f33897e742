#!/bin/sh
# The minimum-duration wait-state estimate (rank.R.waits) against wait states
# of known size injected by tests/mpi/ws_p2p.c at 2 ranks: a late sender
# (rank 0's MPI_Recv, pattern late_sender) and a late receiver (rank 0's
# MPI_Ssend, late_receiver).  Half of the 10 calls of the one call site wait
# about 0.1 s, the other half find the partner ready, so the category has its
# wait-free minimum.  The estimate must be within 10% or 5 ms of the waits the
# program measured with shared CLOCK_MONOTONIC timestamps (wp_check_waits).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_p2p
wp_check_waits_run 2 1 "$prog" recv
wp_check_waits_run 2 1 "$prog" ssend
