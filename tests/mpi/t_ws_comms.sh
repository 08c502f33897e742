#!/bin/sh
# Matched instances on communicators the program created
# (tests/mpi/ws_comms.c, 4 ranks, 10 iterations, 0.1 s injected):
# - split: MPI_Comm_split into even and odd ranks, ordered backwards; in
#   each half one member is persistently late to an MPI_Allreduce on the
#   half (Wait at NxN) and then to a send to the half's rank 0 (Late
#   Sender, received on world ranks 2 and 3);
# - dup: a late sender on a duplicate of a duplicate of MPI_COMM_WORLD and
#   a late member of an MPI_Allreduce on the first duplicate; once more
#   with both duplicates freed by MPI_Comm_disconnect (WS_FREE=disconnect),
#   which must reduce their batches as MPI_Comm_free does (unwrapped, it
#   left them in the table and MPI_Finalize crashed on the freed handles).
# The waits are persistent (every call waits), so the estimate cannot see
# them and only matching both sides of each instance measures them; that
# needs the communicator's id and its members' ranks alike on every member.
# For every truth line "truth rank=R pattern=P function=F wait=S":
# - the wait_ns of rank R's rows of F and P is within 5 % or 5 ms of S, the
#   wait the program measured with shared CLOCK_MONOTONIC timestamps
#   (wp_check_waits_run, which runs a program outside the tolerance once
#   more: a descheduled rank on 2 CPUs, not a wrong measurement);
# - those rows say method=measured and matched >= 1;
# and the largest truth is at least 0.8 s, so a program that failed to
# inject its waits cannot pass.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_comms
WP_WAITS_REL=0.05 WP_WAITS_ABS=0.005 WAITPROF_SOURCE=wrappers
export WP_WAITS_REL WP_WAITS_ABS WAITPROF_SOURCE

# comms MODE NTRUTH — run ws_comms MODE on 4 ranks and check it.
comms() {
    wp_note "--- $1"
    wp_check_waits_run 4 "$2" "$prog" "$1"
    _co=$WP_TMP/waits-$WP_WAITS_N
    wp_check_measured "$_co" "$_co.stdout"
    _cmax=$(sed -n 's/^truth .* wait=//p' "$_co.stdout" | sort -g | tail -n 1)
    wp_ge "$_cmax" 0.8 || { cat "$_co.stdout" >&2; wp_fail "$1: the largest truth is $_cmax s: ws_comms did not inject its waits"; }
}

# The Allreduce of every rank, the receives of world ranks 2 and 3.
comms split 6
# The Allreduce of every rank, the receives of rank 0.
comms dup 5
WS_FREE=disconnect
export WS_FREE
comms dup 5
unset WS_FREE
