#!/bin/sh
# The wrappers' extra calls never change an outcome (wrap/wrap.h,
# wp_req_kinds): tests/mpi/reqkinds.c completes persistent collectives
# started in different orders, persistent point-to-point requests with an
# inactive one, null requests, generalized and partitioned requests,
# MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace, and a
# truncated receive under MPI_ERRORS_RETURN, some of them again on handles
# whose completed requests MPI_Test left in waitprof's tables (MPICH
# aborted there before the calls that make them dropped the entries), and
# prints what it observes;
# under waitprof (default wrappers, 100 and 1000 Hz) the output is the
# same as without it, and so is the exit status.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/reqkinds
wp_observe_base 2 "$prog"
[ "$(wc -l <"$WP_TMP/base")" -ge 20 ] || wp_fail "reqkinds printed too little: $(cat "$WP_TMP/base")"
for hz in 100 1000; do
    wp_observe_same $hz 2 "$prog"
done
