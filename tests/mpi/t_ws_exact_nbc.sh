#!/bin/sh
# Exact wait states of nonblocking collectives, persistent requests and
# matched probes (match/batch.c, match/numbering.h), against PERSISTENT
# waits injected by tests/mpi/ws_exact.c as t_ws_exact.sh checks the
# blocking calls: every one of the 10 calls of a call site waits about the
# same, so only matching both sides of each instance can measure it.
# The modes:
# - iallreduce (4 ranks): rank 1 enters MPI_Iallreduce 0.1 s late; every
#   rank works 10 ms and completes it with MPI_Wait: Wait at NxN in MPI_Wait
#   is the last I-call's entry minus the Wait's entry;
# - ibcast (4 ranks): the same with a late root's MPI_Ibcast: Late
#   Broadcast in the non-roots' MPI_Wait;
# - persist (2 ranks): MPI_Send_init and MPI_Recv_init once, MPI_Start and
#   MPI_Wait in every iteration, the sender 0.1 s late: Late Sender in the
#   receiver's MPI_Wait;
# - mprobe (2 ranks): MPI_Mprobe (MPI_ANY_SOURCE, status ignored) takes a
#   message sent 0.1 s late, then MPI_Recv takes the next one of the same
#   channel, sent 0.1 s later still, and only then MPI_Mrecv receives the
#   first: Late Sender in MPI_Mprobe and in MPI_Recv (the probe numbers the
#   message it takes, so the receive in between is matched with its own).
# Each runs with WAITPROF_SOURCE=wrappers and with the default source; for
# every truth line the rows of that rank, function and pattern must be
# within 5 % or 5 ms of the truth, say method=measured and count at least
# one matched instance, and the largest truth must be at least 0.8 s
# (iallreduce and ibcast: 0.6 s, since each wait is 0.1 s less the 10 ms of
# work before the MPI_Wait, and with 4 ranks on 2 CPUs the waiting ranks
# leave the per-iteration barrier later than the late one, by up to 40 ms
# seen here under the default source).
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_exact
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
    # All ranks; the non-roots; rank 0; rank 0 (MPI_Mprobe, MPI_Recv).
    wp_check_exact 4 4 "$prog" iallreduce 0.6
    wp_check_exact 4 3 "$prog" ibcast 0.6
    wp_check_exact 2 1 "$prog" persist
    wp_check_exact 2 2 "$prog" mprobe
done
